"""The redactor: a text (or a JSON-like value) with every personal value replaced.

    r = Redactor(key, kinds=DEFAULT_KINDS)
    r.redact("我的手机号是138 0013 8000")  -> Redacted("我的手机号是154 6620 9137", {"mobile": 1})
    r.redact_value({"slots": {"phone": "13800138000"}, "turns": ["..."]})
                                           -> RedactedValue({...}, {"mobile": 1})

Dict keys and values, list and tuple items are redacted; an int of ten digits or more is
redacted as its decimal text and stays an int; floats, bools and None pass. Any other type,
any failure inside, or a text longer than `max_chars` raises `RedactionError`: the result is
whole or absent, never partly redacted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from callout_server.redaction.detect import Found, find
from callout_server.redaction.errors import RedactionError
from callout_server.redaction.kinds import DEFAULT_KINDS, NUMBER_KINDS, check_kinds
from callout_server.redaction.pseudonyms import Pseudonyms, number_tail, render

MIN_KEY_BYTES = 16
MAX_CHARS = 1_000_000  # a vendor error body is far shorter; past this, refuse rather than stall
_MAX_DEPTH = 64
_MIN_INT = 10 ** 9  # ints below ten digits hold no phone, ID or card
# Texts in which nothing was found, remembered: JSON keys, the script's own lines and the
# commonest answers repeat across records. Only clean texts are kept (no personal value is
# held in memory for longer), at most this many and this long; the set is emptied when full.
CLEAN_CACHE_SIZE = 8192
_CLEAN_CACHE_CHARS = 512


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    kinds: dict[str, int]  # kind -> values replaced, e.g. {"mobile": 2}

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


@dataclass(frozen=True, slots=True)
class RedactedValue:
    value: Any
    kinds: dict[str, int]


class Redactor:
    """Finds the chosen kinds and replaces them by keyed pseudonyms. Thread-safe, no I/O."""

    def __init__(self, key: bytes | str, kinds: Iterable[str] = DEFAULT_KINDS, *,
                 max_chars: int = MAX_CHARS, clean_cache: int = CLEAN_CACHE_SIZE) -> None:
        raw = key.encode() if isinstance(key, str) else bytes(key)
        if len(raw) < MIN_KEY_BYTES:
            raise ValueError(f"the redaction key needs at least {MIN_KEY_BYTES} bytes")
        self.kinds = check_kinds(tuple(kinds))
        self.max_chars = max_chars
        self._pseudonyms = Pseudonyms(raw)
        self._clean: set[str] = set()
        self._clean_max = clean_cache

    def find(self, text: str) -> tuple[Found, ...]:
        return find(text, self.kinds)

    def pseudonym(self, found: Found) -> str:
        """The normalised pseudonym of a found value (same for every spelling of it)."""
        return self._pseudonyms.of(found.kind, found.value, found.surname_len)

    def redact(self, text: str) -> Redacted:
        if not isinstance(text, str):
            raise RedactionError(f"cannot redact a {type(text).__name__}")
        if len(text) > self.max_chars:
            raise RedactionError(f"text of {len(text)} characters is over {self.max_chars}")
        try:
            return self._redact(text)
        except RedactionError:
            raise
        except Exception as exc:  # a bug must not let the text through: fail closed
            raise RedactionError(f"internal error ({type(exc).__name__})") from None

    def _redact(self, text: str) -> Redacted:
        if text in self._clean:
            return Redacted(text, {})
        found = find(text, self.kinds)
        if not found:
            if self._clean_max and len(text) <= _CLEAN_CACHE_CHARS:
                if len(self._clean) >= self._clean_max:
                    self._clean.clear()
                self._clean.add(text)
            return Redacted(text, {})
        out, at = [], 0
        kinds: dict[str, int] = {}
        for f in found:
            out.append(text[at:f.start])
            out.append(self._replacement(text, f))
            at = f.end
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        out.append(text[at:])
        return Redacted("".join(out), kinds)

    def _replacement(self, text: str, f: Found) -> str:
        pseudonym = self.pseudonym(f)
        if f.kind not in NUMBER_KINDS:
            return pseudonym
        said = "".join(t.digits for t in f.tokens)
        new = said[:f.keep] + number_tail(f.kind, pseudonym)
        if len(new) != len(said):
            raise RedactionError(f"{f.kind} pseudonym of another length")
        return render(text, f.start, f.end, f.tokens, new)

    def redact_value(self, value: Any) -> RedactedValue:
        counts: Counter[str] = Counter()
        try:
            out = self._value(value, counts, 0)
        except RedactionError:
            raise
        except Exception as exc:
            raise RedactionError(f"internal error ({type(exc).__name__})") from None
        return RedactedValue(out, dict(counts))

    def _value(self, value: Any, counts: Counter[str], depth: int) -> Any:
        # The walk of every stored record. Most of a record's strings (keys, the node's
        # lines) are in the clean-text cache: returned here, without a call.
        if type(value) is str:
            if value in self._clean:
                return value
            r = self.redact(value)
            if r.kinds:
                counts.update(r.kinds)
            return r.text
        if depth > _MAX_DEPTH:
            raise RedactionError(f"value nested deeper than {_MAX_DEPTH}")
        walk, depth, clean = self._value, depth + 1, self._clean
        # A clean str child, None or a small int is its own result: taken here, without the
        # call (a decision's inputs are ~50 values, nearly all of them such).
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if type(k) is not str or k not in clean:
                    k = walk(k, counts, depth)
                if not ((type(v) is str and v in clean) or v is None
                        or (type(v) is int and -_MIN_INT < v < _MIN_INT)):
                    v = walk(v, counts, depth)
                out[k] = v
            return out
        if isinstance(value, list | tuple):
            items = [v if type(v) is str and v in clean else walk(v, counts, depth)
                     for v in value]
            return items if isinstance(value, list) else tuple(items)
        if value is None or isinstance(value, bool | float):
            return value
        if isinstance(value, str):  # a str subclass (an enum member): its text, not its str()
            return walk(str.__str__(value), counts, depth)
        if isinstance(value, int):
            if abs(value) < _MIN_INT:
                return value
            r = self.redact(str(value))
            counts.update(r.kinds)
            return int(r.text) if r.text.lstrip("-").isdigit() else r.text
        raise RedactionError(f"cannot redact a {type(value).__name__}")
