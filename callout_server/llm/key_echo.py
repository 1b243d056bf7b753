"""A vendor that writes the configuration's API key into its answer: the key never gets further.

    clean_text(completion_text, key)       -> the text with every trace of the key as ****
    echo = KeyEcho(key)                    # one per streamed text
    echo.push(delta) -> str                # what may be sent now ("" while a trace may start)
    echo.flush()     -> str                # the rest, at the end of the answer
    clean_tool_call(call, key)             -> the call with every trace in its name and
                                              arguments (keys and values) as ****
    answer = AnswerEcho(key)               # a stream's text, reasoning and tool calls
    answer.event(TextDelta(...)) -> event | None;  answer.held() -> events before Finish

The shared client applies it where an answer is read, once for every tier: `complete()`
cleans the whole text, reasoning and tool calls, `LLMStream` each delta and each tool call
before its consumer sees it, so
what is spoken, returned, stored (chat history, script drafts, NLU decisions) and recorded
(the call log's excerpts) is the cleaned text. What counts as a trace is `masking.scrub`'s
rule (a run of 10 or more characters of the key's secret part, the whole key included; a
short key as a whole word).

Cost, on every answer: a handful of `in` checks per text (`seen_in`: the secret's 5-character
seeds every 6 characters, so any run of 10 holds one), computed once per key. Only a text
that holds a seed is scrubbed for real. A stream holds back the end of a delta only while it
could be the start of a trace (a suffix that is part of the secret); Chinese text is never
held, a Latin letter or digit sometimes is, until the next delta.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

import orjson

from callout_server.llm.events import Event, ReasoningDelta, TextDelta, ToolCall
from callout_server.llm.masking import MIN_RUN, scrub, secret_part

SEED = 5
STRIDE = MIN_RUN - SEED + 1  # a run of MIN_RUN characters holds a whole seed at this stride


@lru_cache(maxsize=256)
def _seeds(key: str) -> tuple[str, tuple[str, ...], int]:
    """(the secret part, the seeds to look for, the shortest seed's length) of `key`."""
    if not key:
        return "", (), 0
    secret = secret_part(key)
    if len(secret) < MIN_RUN:
        return secret, (secret,), len(secret)  # a short key: as a whole (masking._scrub_word)
    seeds = tuple(secret[i:i + SEED] for i in range(0, len(secret) - SEED + 1, STRIDE))
    return secret, seeds, SEED


def _seen(text: str, seeds: tuple[str, ...]) -> bool:
    for seed in seeds:  # a loop, not any(): the generator costs more than the checks
        if seed in text:
            return True
    return False


def seen_in(text: str, key: str) -> bool:
    """Whether `text` may hold a trace of `key` (never False when it does)."""
    return _seen(text, _seeds(key)[1])


def clean_text(text: str, key: str) -> str:
    """`text` without any trace of `key`; the same object when there is none."""
    return scrub(text, key) if text and key and _seen(text, _seeds(key)[1]) else text


def clean_tool_call(call: ToolCall, key: str) -> ToolCall:
    """`call` without any trace of `key` in its name, arguments or raw arguments (a tool
    call's arguments reach the caller as they are, a `tool_call` event or the answer's
    `tool_calls`); the same object when there is none."""
    if not key:
        return call
    seeds = _seeds(key)[1]
    # The parsed arguments as orjson writes them (no escapes but quotes, backslashes and
    # control characters): a key decoded from `\u` escapes in the raw text shows here.
    shown = orjson.dumps(call.arguments, default=str).decode()
    if not (_seen(call.name, seeds) or _seen(call.raw_arguments, seeds) or _seen(shown, seeds)):
        return call
    return replace(call, name=clean_text(call.name, key),
                   arguments=_clean_value(call.arguments, key),
                   raw_arguments=clean_text(call.raw_arguments, key))


def _clean_value(value: Any, key: str) -> Any:
    if isinstance(value, str):
        return clean_text(value, key)
    if isinstance(value, dict):
        return {clean_text(str(k), key): _clean_value(v, key) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_value(v, key) for v in value]
    return value


class KeyEcho:
    """Cleans one streamed text (an answer's text, or its reasoning) delta by delta.

    A trace can be split across deltas (a model writes a key token by token), so the end
    of a delta that could begin one is held: the longest suffix that is part of the secret.
    Everything before it is final, since any trace ending there lies wholly inside it.
    """

    __slots__ = ("_held", "_key", "_secret", "_seeds", "_shortest")

    def __init__(self, key: str) -> None:
        self._key = key
        self._secret, self._seeds, self._shortest = _seeds(key)
        self._held = ""

    def push(self, delta: str) -> str:
        secret = self._secret
        if not secret:
            return delta
        text = self._held + delta if self._held else delta
        n = len(text)
        if not n:
            return text
        if text[-1] not in secret:  # the usual case: nothing to hold
            held = 0
            self._held = ""
            out = text
        else:
            held, limit = 1, min(n, len(secret))
            while held < limit and text[n - held - 1:] in secret:
                held += 1
            self._held = text[n - held:]
            out = text[:n - held]
        if len(out) < self._shortest or not _seen(out, self._seeds):
            return out
        return scrub(out, self._key)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return clean_text(held, self._key)


class AnswerEcho:
    """A streamed answer's text and reasoning deltas, cleaned (LLMStream's consumer side)."""

    __slots__ = ("_key", "_reasoning", "_text")

    def __init__(self, key: str) -> None:
        self._key = key
        self._text = KeyEcho(key)
        self._reasoning = KeyEcho(key)

    def event(self, event: Event) -> Event | None:
        """`event` cleaned; None while all it carries is held back."""
        if isinstance(event, TextDelta):
            text = self._text.push(event.text)
        elif isinstance(event, ReasoningDelta):
            text = self._reasoning.push(event.text)
        elif isinstance(event, ToolCall):
            return clean_tool_call(event, self._key)
        else:
            return event
        if text is event.text:
            return event
        return type(event)(text) if text else None

    def held(self) -> list[Event]:
        """What was held back, as the deltas that go before the answer's `Finish`."""
        thought, text = self._reasoning.flush(), self._text.flush()
        events: list[Event] = []
        if thought:
            events.append(ReasoningDelta(thought))
        if text:
            events.append(TextDelta(text))
        return events
