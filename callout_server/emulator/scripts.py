"""Scripted replies and the request log behind the control API.

Scripts are matched in insertion order by exact ``model`` (``None`` = any) and optionally
persona; ``times`` limits how often one fires (``None`` = unlimited). Tests isolate by using
unique model names, so concurrent tests never consume each other's scripts.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

UNSET: Any = object()  # "field absent", as opposed to an explicit null

_REPLY_FIELDS = {
    "content", "reasoning", "reasoning_tokens", "tool_calls", "finish_reason", "chunks",
    "ttft_ms", "token_delay_ms", "status", "error_body", "headers", "hang", "disconnect_after",
    "malformed_after", "keepalive_ms", "no_choices", "usage",
}


@dataclass(slots=True)
class Reply:
    content: str | None = None
    reasoning: str | None = None
    reasoning_tokens: int | None = None
    tool_calls: list[dict[str, Any]] | None = None
    finish_reason: Any = UNSET
    chunks: list[str] | None = None
    ttft_ms: float = 0.0
    token_delay_ms: float = 0.0
    status: int | None = None
    error_body: Any = None
    headers: dict[str, str] | None = None
    #: ``true`` = never answer at all; an int N = stream N chunks, then stall forever.
    hang: bool | int = False
    disconnect_after: int | None = None
    malformed_after: int | None = None
    keepalive_ms: float | None = None
    no_choices: bool = False
    usage: Any = UNSET
    given: frozenset[str] = frozenset()  # the fields the script set (the rest: defaults)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        unknown = set(data) - _REPLY_FIELDS
        if unknown:
            # A typo in a test script must fail loudly, not silently run the default.
            raise ValueError(f"unknown reply fields: {sorted(unknown)}")
        reply = cls(**data, given=frozenset(data))
        if reply.chunks is not None and reply.content is None:
            reply.content = "".join(reply.chunks)
        return reply

    @property
    def hang_after(self) -> int | None:
        """Chunks to stream before stalling; ``None`` when not hanging mid-stream."""
        if self.hang is True or self.hang is False:
            return None
        return int(self.hang)


DEFAULT_REPLY = Reply()


@dataclass(slots=True)
class Script:
    id: int
    model: str | None
    persona: str | None
    times: int | None
    reply: Reply
    spec: dict[str, Any]
    used: int = 0
    replica: str | None = None  # only requests under /r/<replica>/... (None: any)
    every: int | None = None  # fire on every Nth matching request only (None: on each)
    seen: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**self.spec, "id": self.id, "used": self.used}


class ScriptBook:
    """Scripts indexed by model so lookups stay O(scripts for that model)."""

    def __init__(self) -> None:
        self._by_model: dict[str | None, list[Script]] = {}
        self._ids = itertools.count(1)

    def add(self, spec: dict[str, Any]) -> Script:
        match = spec.get("match") or {}
        times = spec.get("times")
        if times is not None and (not isinstance(times, int) or times < 1):
            raise ValueError("times must be a positive integer or null")
        every = spec.get("every")
        if every is not None and (not isinstance(every, int) or every < 1):
            raise ValueError("every must be a positive integer or null")
        script = Script(
            id=next(self._ids),
            model=match.get("model"),
            persona=match.get("persona"),
            times=times,
            reply=Reply.from_dict(spec.get("reply") or {}),
            spec=spec,
            replica=match.get("replica"),
            every=every,
        )
        self._by_model.setdefault(script.model, []).append(script)
        return script

    def take(self, model: str, persona: str, replica: str | None = None) -> Script | None:
        """The oldest script matching the request, consumed once; a script with `every`
        fires on every Nth matching request and lets the others fall through to the next."""
        if not self._by_model:
            return None  # benchmark fast path
        matching = sorted(
            (s for key in (model, None) for s in self._by_model.get(key, ())
             if (s.persona is None or s.persona == persona)
             and (s.replica is None or s.replica == replica)),
            key=lambda s: s.id)
        best: Script | None = None
        for s in matching:
            if s.every is not None:
                s.seen += 1
                if s.seen % s.every:
                    continue
            best = s
            break
        if best is None:
            return None
        best.used += 1
        if best.times is not None and best.used >= best.times:
            bucket = self._by_model[best.model]
            bucket.remove(best)
            if not bucket:
                del self._by_model[best.model]
        return best

    def all(self) -> list[Script]:
        return sorted((s for b in self._by_model.values() for s in b), key=lambda s: s.id)

    def clear(self, model: str | None = None) -> None:
        if model is None:
            self._by_model.clear()
        else:
            self._by_model.pop(model, None)


_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})


@dataclass(slots=True)
class Recorder:
    """Request bodies and outcomes per model (bounded, so long benchmarks cannot grow it)."""

    enabled: bool = True
    per_model: int = 1000
    _log: dict[str, deque[dict[str, Any]]] = field(default_factory=dict)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def start(
        self, *, persona: str, api: str, path: str, model: str, body: Any,
        headers: Any, stream: bool, replica: str | None = None,
    ) -> dict[str, Any]:
        record: dict[str, Any] = {
            "seq": next(self._seq),
            "persona": persona,
            "replica": replica,
            "api": api,
            "path": path,
            "model": model,
            "stream": stream,
            "received_at": time.time(),
            # Secrets are never stored: only whether a key was sent at all.
            "authorization_present": "authorization" in headers,
            "headers": {
                str(k): v for k, v in headers.items() if k.lower() not in _SECRET_HEADERS
            },
            "body": body,
            "script_id": None,
            "status": None,
            "chunks_sent": 0,
            "disconnected": False,
            "disconnected_at": None,
            "server_closed": False,
            "finished_at": None,
        }
        if self.enabled:
            log = self._log.get(model)
            if log is None:
                log = self._log[model] = deque(maxlen=self.per_model)
            log.append(record)
        return record

    def get(self, model: str | None) -> list[dict[str, Any]]:
        if model is not None:
            return list(self._log.get(model, ()))
        return sorted((r for d in self._log.values() for r in d), key=lambda r: r["seq"])

    def clear(self, model: str | None = None) -> None:
        if model is None:
            self._log.clear()
        else:
            self._log.pop(model, None)
