"""The detector alone: every personal value in a text, with its kind and where it is.

`find(text, kinds)` runs the kinds' finders (numbers.py, email.py, names.py, address.py) and
keeps the longest of overlapping finds (`13800138000@qq.com` is one e-mail, not a mobile).
The chat tier's `mask_pii` speaks a found number as its last four digits (`Found.last4`);
the redactor replaces each find by its pseudonym.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from callout_server.redaction.address import find_addresses
from callout_server.redaction.digits import DIGIT_CHARS, Token, has_digit_words
from callout_server.redaction.email import find_emails
from callout_server.redaction.kinds import (
    ADDRESS,
    DEFAULT_KINDS,
    EMAIL,
    NAME,
    NUMBER_KINDS,
    OPTIONAL_KINDS,
)
from callout_server.redaction.names import find_names
from callout_server.redaction.numbers import find_numbers


@dataclass(frozen=True, slots=True)
class Found:
    """A personal value at text[start:end]; `value` is its normalised form (digits, e-mail)."""

    kind: str
    start: int
    end: int
    value: str
    tokens: tuple[Token, ...] = field(default=(), repr=False, compare=False)
    keep: int = field(default=0, repr=False, compare=False)  # lead digits kept as said
    surname_len: int = field(default=0, repr=False, compare=False)

    @property
    def last4(self) -> str:
        """The last four digits (or characters) of the value: what may be spoken or shown."""
        digits = "".join(c for c in self.value if c.isdigit() or c == "X")
        return (digits or self.value)[-4:]


# Every number and e-mail needs one of these characters, or English number words or "at":
# one charset search settles most short texts (JSON keys, "好的", "role") at once.
_MAYBE = re.compile(rf"[{DIGIT_CHARS}@＠艾圈]")


def _nothing_structured(text: str) -> bool:
    return _MAYBE.search(text) is None and not has_digit_words(text) and (
        " at " not in text.lower() if text.isascii() else True)


def find(text: str, kinds: Iterable[str] = DEFAULT_KINDS) -> tuple[Found, ...]:
    """Every value of the given kinds in `text`, in order of position, not overlapping."""
    kinds = kinds if isinstance(kinds, frozenset) else frozenset(kinds)
    found: list[Found] = []
    if not kinds & OPTIONAL_KINDS and _nothing_structured(text):
        return ()
    if kinds & NUMBER_KINDS:
        found += [Found(m.kind, m.start, m.end, m.value, m.tokens, m.keep)
                  for m in find_numbers(text) if m.kind in kinds]
    if EMAIL in kinds:
        found += [Found(EMAIL, m.start, m.end, m.value) for m in find_emails(text)]
    if NAME in kinds:
        found += [Found(NAME, m.start, m.end, m.value, surname_len=m.surname_len)
                  for m in find_names(text)]
    if ADDRESS in kinds:
        found += [Found(ADDRESS, m.start, m.end, m.value) for m in find_addresses(text)]
    if len(found) < 2:
        return tuple(found)
    found.sort(key=lambda f: (f.start - f.end, f.start))  # longest first
    kept: list[Found] = []
    for f in found:
        if not any(k.start < f.end and f.start < k.end for k in kept):
            kept.append(f)
    kept.sort(key=lambda f: f.start)
    return tuple(kept)
