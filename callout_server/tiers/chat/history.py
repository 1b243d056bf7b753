"""The bounded per-call chat history, with optional background compaction.

    ChatHistoryError              a request the history cannot honour (code, status)
      UnknownCallId               tool output for a call id that is not pending (409)

Shape: the system prompt is kept apart; the items (`history_items.py`, with how they render
as model messages) are user messages (turn_id, revision), assistant messages (interrupted or
not), function calls and function outputs. Size is counted in user turns; a turn is a user
message plus everything after it up to the next one, and eviction and compaction always
take whole turns.

Bounds: `trim_if_needed()` after each completed generation enforces the soft limit `size`
(evicts the oldest turns, or with compaction starts a background compaction); every append
enforces the hard cap `2*size` synchronously, a safety net for a runaway client.

Call/output pairing: a call is tracked as pending until its output arrives. The output is
always appended at the end, directly after its call: if the call is no longer in the tail
block of calls/outputs (evicted, compacted, or a user message came in between) the call is
re-injected there. So a call and its output always sit in the same turn and leave together;
`to_messages()` also skips any call without an output and any output without a call, so the
model never sees an orphan.

Compaction: single flight; the newest `max(1, size // 2)` turns stay verbatim and the older
ones (at least two) go to the injected `summarise(messages) -> str`. The summary is kept as a
note appended to the system message (one leading system message is what every chat template
and the Responses `instructions` accept; a fake user/assistant pair would put words in the
caller's mouth). A later compaction folds the previous summary in. A generation counter,
bumped by `reset()`/`close()`, is checked before the call, after it and before splicing; the
splice also requires the compacted items to still be the head of the history, unchanged.
Any failure (exception, empty summary, stale) leaves the history as it was.

One event loop only (not thread-safe); transcripts never go to the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any

from callout_server.tiers.chat.history_items import (
    PUBLIC_TYPE,
    AssistantMessage,
    FunctionCall,
    FunctionOutput,
    Item,
    UserMessage,
    next_turn_start,
    render,
)

log = logging.getLogger(__name__)

Summariser = Callable[[list[dict[str, Any]]], Awaitable[str]]
SUMMARY_HEADER = "Summary of the earlier part of this call:"


def _fields(item: Item) -> dict[str, Any]:
    """An item's fields, shallow (`asdict` deep-copies: 5x slower, and items are values)."""
    return {name: getattr(item, name) for name in item.__slots__}  # type: ignore[union-attr]


class ChatHistoryError(Exception):
    code = "chat_history_error"
    status = 400
    retryable = False


class UnknownCallId(ChatHistoryError):
    code = "unknown_call_id"
    status = 409

    def __init__(self, call_id: str) -> None:
        super().__init__(f"no pending function call with call_id {call_id!r}")
        self.call_id = call_id


class ChatHistory:
    def __init__(
        self,
        system_prompt: str | None = None,
        *,
        size: int = 10,
        compact_history: bool = False,
        summarise: Summariser | None = None,
    ) -> None:
        if size < 1:
            raise ValueError("size must be >= 1")
        if compact_history and summarise is None:
            raise ValueError("compact_history needs a summarise callable")
        self.system_prompt = system_prompt
        self.size = size
        self.compact_history = compact_history
        self._summarise = summarise
        self._items: list[Item] = []
        self._pending: dict[str, FunctionCall] = {}
        self._summary: str | None = None
        self._generation = 0
        self._closed = False
        self._compact_in_flight = False
        self._tasks: set[asyncio.Task[None]] = set()

    # -- reading --------------------------------------------------------------------------

    @property
    def items(self) -> tuple[Item, ...]:
        return tuple(self._items)

    @property
    def summary(self) -> str | None:
        return self._summary

    @property
    def generation(self) -> int:
        return self._generation

    @property
    def pending_call_ids(self) -> list[str]:
        return list(self._pending)

    @property
    def compaction_in_flight(self) -> bool:
        return self._compact_in_flight

    def user_turns(self) -> int:
        return sum(1 for item in self._items if isinstance(item, UserMessage))

    def to_messages(self) -> list[dict[str, Any]]:
        """Chat Completions messages for the model: system first, no orphan call or output."""
        system = self._system_text()
        head = [{"role": "system", "content": system}] if system else []
        return head + render(self._items)

    def to_public(self) -> list[dict[str, Any]]:
        """JSON-friendly items for `GET /api/chat/sessions/{call_id}` (system prompt apart)."""
        out: list[dict[str, Any]] = []
        if self._summary:
            out.append({"type": "summary", "text": self._summary})
        for item in self._items:
            entry = {"type": PUBLIC_TYPE[type(item)], **asdict(item)}
            if isinstance(item, FunctionCall):
                entry["status"] = (
                    "pending" if self._pending.get(item.call_id) is item else "completed"
                )
            out.append(entry)
        return out

    # -- writing --------------------------------------------------------------------------

    def add_user_message(self, turn_id: str, text: str, revision: int = 0) -> None:
        """A new user turn; a known `turn_id` is a revision and replaces in place instead."""
        if self.replace_user_message(turn_id, revision, text) is not None:
            return
        self._append(UserMessage(turn_id=turn_id, text=text, revision=revision))

    def replace_user_message(self, turn_id: str, revision: int, text: str) -> bool | None:
        """Replace the text of the user message `turn_id` in place when `revision` is newer.

        Returns True when replaced, False when the stored revision is the same or newer (a late
        duplicate: ignored), None when no such turn is in the history.
        """
        for item in reversed(self._items):
            if isinstance(item, UserMessage) and item.turn_id == turn_id:
                if revision <= item.revision:
                    return False
                item.text, item.revision = text, revision
                return True
        return None

    def add_assistant_message(self, text: str) -> None:
        if text:
            self._append(AssistantMessage(text=text))

    def record_interrupted_assistant(self, spoken_text: str) -> None:
        """Barge-in: keep only what was already sent to the caller, marked interrupted."""
        if spoken_text.strip():
            self._append(AssistantMessage(text=spoken_text, interrupted=True))

    def add_tool_call(self, call_id: str, name: str, arguments: dict[str, Any] | str) -> None:
        call = FunctionCall(call_id=call_id, name=name, arguments=arguments)
        self._pending[call_id] = call
        self._append(call)

    def append_tool_output(self, call_id: str, output: str) -> None:
        """Pair an output with its pending call; raise UnknownCallId for any other id."""
        call = self._pending.pop(call_id, None)
        if call is None:
            raise UnknownCallId(call_id)
        if not self._in_tail_block(call):
            if self._remove(call):
                log.info("moving function_call next to its output", extra={"call_id": call_id})
            else:
                log.info("re-injecting evicted function_call", extra={"call_id": call_id})
            self._items.append(call)
        self._append(FunctionOutput(call_id=call_id, output=output))

    def trim_if_needed(self) -> int:
        """Soft limit, after a completed generation. Returns the number of turns evicted
        (0 when within bounds or when a background compaction was started instead)."""
        if self.user_turns() <= self.size:
            return 0
        if self.compact_history and self._maybe_start_compaction():
            return 0
        if self.compact_history and self._compact_in_flight:
            return 0  # a compaction is on its way; the hard cap still bounds us meanwhile
        return self._evict_to(self.size)

    def reset(self) -> None:
        """Forget everything but the system prompt; in-flight compaction results are void."""
        self._bump_generation()
        self._items.clear()
        self._pending.clear()
        self._summary = None

    def close(self) -> None:
        self._bump_generation()
        self._closed = True

    async def wait_compaction(self) -> None:
        """Wait for background compactions (tests, orderly shutdown); never raises."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))
            self._tasks = {task for task in self._tasks if not task.done()}

    def dump(self) -> dict[str, Any]:
        """What a shared session store keeps (session_state.py): items, pending calls (by
        position, or whole when evicted) and the summary; a compaction in flight is not kept."""
        at = {id(item): i for i, item in enumerate(self._items)}
        pending = [{"at": at[id(c)]} if id(c) in at else {"call": _fields(c)}
                   for c in self._pending.values()]
        return {"items": [{"type": PUBLIC_TYPE[type(i)], **_fields(i)} for i in self._items],
                "pending": pending, "summary": self._summary}

    def restore(self, state: dict[str, Any]) -> None:
        """The inverse of `dump()`, into a fresh history or over this one (another worker's
        newer turns): a compaction in flight here is void, its snapshot is gone."""
        self._bump_generation()
        kinds = {v: k for k, v in PUBLIC_TYPE.items()}
        self._items = [kinds[e["type"]](**{k: v for k, v in e.items() if k != "type"})
                       for e in state["items"]]
        self._pending = {}
        for entry in state["pending"]:
            call = self._items[entry["at"]] if "at" in entry else FunctionCall(**entry["call"])
            assert isinstance(call, FunctionCall)
            self._pending[call.call_id] = call
        self._summary = state.get("summary")

    # -- internals ------------------------------------------------------------------------

    def _system_text(self) -> str:
        parts = [self.system_prompt] if self.system_prompt else []
        if self._summary:
            parts.append(f"{SUMMARY_HEADER}\n{self._summary}")
        return "\n\n".join(parts)

    def _append(self, item: Item) -> None:
        self._items.append(item)
        self._evict_to(2 * self.size)  # hard cap, on every append

    def _in_tail_block(self, call: FunctionCall) -> bool:
        for item in reversed(self._items):
            if item is call:
                return True
            if not isinstance(item, FunctionCall | FunctionOutput):
                return False
        return False

    def _remove(self, target: Item) -> bool:
        for index, item in enumerate(self._items):
            if item is target:
                del self._items[index]
                return True
        return False

    def _evict_to(self, limit: int) -> int:
        evicted = 0
        while self.user_turns() > limit:
            self._evict_oldest_turn()
            evicted += 1
        if evicted:
            log.info("evicted oldest chat turns", extra={"turns": evicted})
        return evicted

    def _evict_oldest_turn(self) -> None:
        # Whole turn: the first item (a user message, or calls kept before the first turn)
        # and everything up to the next user message. Pending calls stay in _pending.
        end = next_turn_start(self._items, 1)
        if not isinstance(self._items[0], UserMessage):  # leading non-turn items + turn one
            end = next_turn_start(self._items, end + 1)
        del self._items[:end]

    def _bump_generation(self) -> None:
        self._generation += 1
        self._compact_in_flight = False  # the new generation may compact on its own
        for task in self._tasks:
            task.cancel()  # save the model call; the generation check covers the rest

    def _maybe_start_compaction(self) -> bool:
        if self._closed or self._compact_in_flight:
            return False
        keep = max(1, self.size // 2)
        starts = [i for i, item in enumerate(self._items) if isinstance(item, UserMessage)]
        if len(starts) - keep < 2:
            return False  # the newest turn is never compacted; fewer than 2 is not worth it
        cut = starts[len(starts) - keep]
        snapshot = list(self._items[:cut])
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False  # no loop: the caller falls back to eviction
        self._compact_in_flight = True
        task = loop.create_task(self._compact(self._generation, snapshot, self._summary))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _compact(self, gen: int, snapshot: list[Item], prior: str | None) -> None:
        try:
            if gen != self._generation:
                return
            messages = render(snapshot)
            if prior:
                messages.insert(0, {"role": "system", "content": f"{SUMMARY_HEADER}\n{prior}"})
            assert self._summarise is not None  # enforced in __init__ for compact_history
            summary = await self._summarise(messages)
            if gen != self._generation:
                log.info("discarding stale compaction result")
                return
            if not isinstance(summary, str) or not summary.strip():
                log.warning("compaction returned no summary; history unchanged")
                return
            self._apply_compaction(gen, snapshot, summary.strip())
        except Exception as exc:
            log.warning("compaction failed; history unchanged", extra={"error": type(exc).__name__})
        finally:
            if gen == self._generation:
                self._compact_in_flight = False

    def _apply_compaction(self, gen: int, snapshot: list[Item], summary: str) -> None:
        if gen != self._generation:
            return
        head = self._items[: len(snapshot)]
        if len(head) != len(snapshot) or any(
            a is not b for a, b in zip(head, snapshot, strict=True)
        ):
            log.info("history changed under compaction; result discarded")
            return
        rest = self._items[len(snapshot) :]
        # A call whose output lies outside the compacted range stays (before its output's
        # turn) so the pair is not broken; pending calls stay in _pending and are re-injected
        # with their output. (Appending an output next to its call makes the first case rare.)
        outside = {item.call_id for item in rest if isinstance(item, FunctionOutput)}
        kept = [i for i in snapshot if isinstance(i, FunctionCall) and i.call_id in outside]
        self._items = kept + rest
        self._summary = summary
        log.info("chat history compacted", extra={"items": len(snapshot) - len(kept)})
