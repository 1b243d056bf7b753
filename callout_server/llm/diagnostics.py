"""Diagnostics: what went wrong with one LLM call, in words ops can act on.

A `Diagnostic` is a value, not an exception: the tiers return it to callers, the recorder
stores it, the console shows it. It holds a code and the numbers behind it (max_tokens,
token counts, HTTP status), what exactly happened as a `reason` code with its numbers
(`args`: the seconds a stream stalled, ...), and `detail`: words from outside (a vendor's
error message, a network library's), kept verbatim. Nothing in it is finished text: the
message and the advice are rendered from those fields, in Chinese or English, when they
are read (`message_in(locale)`, `to_dict(locale)`), so one stored diagnostic reads in the
language of whoever asks. `message` / `advice` render in the diagnostic's own `locale`
(the client's default). The words are the message catalogue's (`diagnostic.<code>`,
`advice.<code>`, `reason.<reason>`: `callout_server/i18n/catalogue_diagnostics.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from callout_server.i18n import MESSAGES, Locale, text

Code = Literal[
    "truncated_by_reasoning",
    "truncated",
    "empty_output",
    "invalid_json",
    "schema_mismatch",
    "timeout",
    "deadline_exceeded",
    "upstream_error",
    "connect_error",
    "response_too_large",
    "cancelled",
    "internal_error",  # our own code broke (a bug): the stream still ended, the cause logged
]
CODES: tuple[str, ...] = Code.__args__  # type: ignore[attr-defined]

# Vendor finish reasons that the shared table words differently (see classify.py).
CONTEXT_EXCEEDED = frozenset({"model_context_window_exceeded"})
FILTERED = frozenset({"content_filter", "sensitive"})
UPSTREAM_FAILED = frozenset({"insufficient_system_resource", "load", "network_error"})

def text_key(code: str, finish_reason: str | None, status: int | None) -> str:
    """Which catalogue entry words this diagnostic: its code, or a variant of it."""
    if code == "upstream_error":
        if finish_reason in UPSTREAM_FAILED:
            return "upstream_error/failed"
        return code if status is not None else "upstream_error/no_status"
    if code == "truncated" and finish_reason in CONTEXT_EXCEEDED:
        return "truncated/context"
    if code in ("truncated", "empty_output") and finish_reason in FILTERED:
        return f"{code}/filtered"
    return code


def _number(value: Any) -> Any:
    return f"{value:g}" if isinstance(value, float) else value


_COLON = {"zh": "：", "en": ": "}
_NUMBERS = ("finish_reason", "max_tokens", "prompt_tokens", "completion_tokens",
            "reasoning_tokens", "status")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One failed (or suspicious) LLM call, with the numbers that explain it."""

    code: str
    finish_reason: str | None = None
    max_tokens: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    status: int | None = None
    detail: str | None = None  # words from outside (vendor, library), verbatim
    reason: str | None = None  # what exactly happened (catalogue entry `reason.<reason>`)
    args: Mapping[str, Any] | None = None  # the numbers `reason` names
    id: int | None = None
    locale: Locale = "zh"  # the language of `message` / `advice`

    @classmethod
    def make(cls, code: str, locale: Locale = "zh", **fields: Any) -> Diagnostic:
        """A diagnostic whose `message` and `advice` read in `locale` unless asked otherwise."""
        if f"diagnostic.{code}" not in MESSAGES:
            raise KeyError(f"unknown diagnostic code {code!r}")
        return cls(code=code, locale=locale, **fields)

    def with_id(self, record_id: int) -> Diagnostic:
        return replace(self, id=record_id)

    # -- rendering ---------------------------------------------------------------------

    def message_in(self, locale: Locale) -> str:
        key = text_key(self.code, self.finish_reason, self.status)
        head = text(f"diagnostic.{key}", locale, **self._numbers())
        tail = self.detail_in(locale)
        return f"{head}{_COLON[locale]}{tail}" if tail else head

    def advice_in(self, locale: Locale) -> str:
        return text(f"advice.{text_key(self.code, self.finish_reason, self.status)}", locale)

    def detail_in(self, locale: Locale) -> str | None:
        """What exactly happened: the reason in `locale`, then the outside words verbatim."""
        phrase = None
        if self.reason is not None and f"reason.{self.reason}" in MESSAGES:
            phrase = text(f"reason.{self.reason}", locale,
                          **{k: _number(v) for k, v in (self.args or {}).items()})
        if phrase and self.detail:
            return f"{phrase} ({self.detail})"
        return phrase or self.detail

    @property
    def message(self) -> str:
        return self.message_in(self.locale)

    @property
    def advice(self) -> str:
        return self.advice_in(self.locale)

    def to_dict(self, locale: Locale | None = None) -> dict[str, Any]:
        """The contract's diagnostic object in `locale` (default: its own); empty numbers
        are left out, `id` and `code` are always there."""
        lang = locale or self.locale
        out: dict[str, Any] = {"id": self.id, "code": self.code,
                               "message": self.message_in(lang), "advice": self.advice_in(lang)}
        out.update({k: getattr(self, k) for k in _NUMBERS if getattr(self, k) is not None})
        detail = self.detail_in(lang)
        if detail is not None:
            out["detail"] = detail
        return out

    def _numbers(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name in _NUMBERS and getattr(self, f.name) is not None}
