"""Helpers shared by the chat tier tests (no tests here).

    make_service(emulator, model, ...)   a ChatService on the real emulator process
    collect(run) / read_sse(response)    parsed events with their arrival times
    http_client(service)                 a client on the chat router alone, streaming
                                         (tests.fixtures.app.StreamingASGITransport)
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI

from callout_server.api.errors import install_error_handlers
from callout_server.auth.deps import Principal, require_service
from callout_server.calllog.records import CallRecord
from callout_server.config.settings import ChatSettings
from callout_server.llm.client import LLMClient
from callout_server.llm.config import LLMConfig
from callout_server.tiers.chat.router import router
from callout_server.tiers.chat.schemas import SessionCreate, TurnRequest
from callout_server.tiers.chat.service import ChatService
from callout_server.tiers.chat.turn import TurnRun
from tests.fixtures.app import StreamingASGITransport

# A paced reply of forty sentences (~10 s): long enough to be cancelled, superseded or cut.
LONG = {"chunks": ["第", "一句", "话", "。", "第", "二句", "话", "。"] * 20, "token_delay_ms": 60}


@dataclass
class Event:
    name: str
    data: dict[str, Any]
    at: float  # perf_counter when the consumer got it


class FakeRecorder:
    def __init__(self) -> None:
        self.records: list[CallRecord] = []

    def record(self, rec: CallRecord) -> int:
        rec.id = len(self.records) + 1
        self.records.append(rec)
        return rec.id


@dataclass
class Harness:
    service: ChatService
    llm: LLMClient
    recorder: FakeRecorder
    cfg: dict[str, LLMConfig] = field(default_factory=dict)

    async def close(self) -> None:
        await self.service.stop()
        await self.llm.aclose()


def make_cfg(emulator: Any, model: str, api_style: str = "chat-completions",
             persona: str = "vllm") -> LLMConfig:
    return LLMConfig(tier="chat", name="chat-test", base_url=emulator.base_url(persona),
                     model=model, api_style=api_style, max_tokens=512, timeout_s=30.0,  # type: ignore[arg-type]
                     id=42)


async def make_service(emulator: Any, model: str, *, api_style: str = "chat-completions",
                       **settings: Any) -> Harness:
    llm = LLMClient()
    recorder = FakeRecorder()
    box = {"cfg": make_cfg(emulator, model, api_style)}
    service = ChatService(llm, lambda: box["cfg"], ChatSettings(**settings), recorder)  # type: ignore[arg-type]
    await service.start()
    return Harness(service, llm, recorder, box)


def new_session(h: Harness, call_id: str = "c1", **fields: Any) -> None:
    h.service.create_session(SessionCreate(call_id=call_id, **fields))


def turn(h: Harness, turn_id: str, text: str, *, call_id: str = "c1", revision: int = 0,
         output: str = "audio") -> TurnRun:
    return h.service.start_turn(call_id, TurnRequest(turn_id=turn_id, text=text,
                                                     revision=revision, output=output))  # type: ignore[arg-type]


def parse_frames(buf: str) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    out = []
    while "\n\n" in buf:
        frame, buf = buf.split("\n\n", 1)
        name, data = "", ""
        for line in frame.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        out.append((name, json.loads(data)))
    return out, buf


async def collect(run: TurnRun, on_event: Callable[[Event], Any] | None = None) -> list[Event]:
    events: list[Event] = []
    async for event in run.events():
        # As on the wire (api/sse.py), the name is inside the object too.
        ev = Event(event.name, {"event": event.name, **event.data}, time.perf_counter())
        events.append(ev)
        if on_event is not None:
            result = on_event(ev)
            if asyncio.iscoroutine(result):
                await result
    return events


async def read_sse(response: httpx.Response) -> AsyncIterator[Event]:
    buf = ""
    async for text in response.aiter_text():
        buf += text
        frames, buf = parse_frames(buf)
        for name, data in frames:
            yield Event(name, data, time.perf_counter())


def names(events: list[Event]) -> list[str]:
    return [e.name for e in events]


def sentences(events: list[Event]) -> list[str]:
    return [e.data["text"] for e in events if e.name == "sentence"]


def the_end(events: list[Event]) -> dict[str, Any]:
    ends = [e for e in events if e.name == "end"]
    assert len(ends) == 1, names(events)
    assert events[-1].name == "end", names(events)
    return ends[0].data


async def wait_disconnect(emulator: Any, model: str, timeout_s: float = 3.0,
                          index: int = 0) -> dict[str, Any]:
    """The emulator's record of request `index`, once it saw the client hang up."""
    deadline = time.monotonic() + timeout_s
    while True:
        reqs = await emulator.requests(model)
        if len(reqs) > index and reqs[index]["disconnected"]:
            return reqs[index]  # type: ignore[no-any-return]
        if time.monotonic() > deadline:
            raise AssertionError(f"no disconnect recorded: {reqs[index] if reqs else None}")
        await asyncio.sleep(0.02)


def chunks_of(text: str, size: int = 2) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# -- HTTP ----------------------------------------------------------------------------------


def make_app(service: ChatService) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(router)
    app.state.components = {ChatService: service}
    app.dependency_overrides[require_service] = lambda: Principal("dialer", "service", "token")
    return app


def http_client(service: ChatService) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=StreamingASGITransport(make_app(service)),
                             base_url="http://test")


class TimedLLM:
    """Wraps an LLMClient; `deltas` gets (perf_counter, text) as the tier receives each delta."""

    def __init__(self, llm: LLMClient) -> None:
        self._llm = llm
        self.deltas: list[tuple[float, str]] = []

    def stream(self, cfg: LLMConfig, req: Any, **kw: Any) -> Any:
        return _TimedStream(self._llm.stream(cfg, req, **kw), self.deltas)

    async def complete(self, cfg: LLMConfig, req: Any) -> Any:
        return await self._llm.complete(cfg, req)


class _TimedStream:
    def __init__(self, inner: Any, deltas: list[tuple[float, str]]) -> None:
        self._inner, self._deltas = inner, deltas

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _TimedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.__aexit__(*exc)

    def __aiter__(self) -> _TimedStream:
        return self

    async def __anext__(self) -> Any:
        event = await self._inner.__anext__()
        text = getattr(event, "text", None)
        if type(event).__name__ == "TextDelta" and text:
            self._deltas.append((time.perf_counter(), text))
        return event
