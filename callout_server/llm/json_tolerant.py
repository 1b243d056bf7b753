"""Tolerant JSON parser: strict JSON plus only the lossless repairs of the extraction policy.

`json_extract` tries the C `json` decoder first and falls back to this parser only when a span
is not strict JSON. Every tolerance here has exactly one reading of the model's text
(/work/shared/spec/json-extraction.md §3); everything else raises `TolerantParseError` with
reason `truncated` (the text ended inside the value) or `unrepairable` (it would need a guess).

Accepted beyond strict JSON: `//`, `/* */`, `#` comments; trailing commas; `'single'` quotes and
`True/False/None`; BOM, ZWSP, NBSP, U+3000, `**` and literal `\\n`/`\\r`/`\\t` between tokens;
full-width `：`/`，` as structure; `“curly”` delimiters (only when the caller says the text has
no ASCII quotes); unquoted identifier keys; a missing comma before a quoted `"key":`; raw
newlines and tabs inside strings. String contents are never normalised.
"""

from __future__ import annotations

import math
import re
from typing import Any

TRUNCATED = "truncated"
UNREPAIRABLE = "unrepairable"
# Internal signal: `\"` where a token should start means a string-escaped document; the caller
# unescapes once and parses again rather than guessing here.
ESCAPED = "escaped"

MAX_DEPTH = 64

# Everything allowed between tokens, as one regex so the hot loop makes a single call.
_SKIP = re.compile(
    r"(?:[ \t\r\n\ufeff\u200b\xa0\u3000]+|\\[nrt]|//[^\n]*|/\*.*?\*/|#[^\n]*|\*\*)*", re.S
)
# Unrolled-loop string bodies: much faster in `re` than `(?:[^"\\]|\\.)*`.
_STRINGS = {
    '"': re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"', re.S),
    "'": re.compile(r"'([^'\\]*(?:\\.[^'\\]*)*)'", re.S),
    "“": re.compile(r"“([^”\\]*(?:\\.[^”\\]*)*)”", re.S),
}
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.S)
_SIMPLE_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_NUMBER_TAIL = re.compile(r"[0-9.eE+-]*\Z")
_WORD = re.compile(r"[^\W\d]\w*")
_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_KEY_QUOTES = "\"'"


class TolerantParseError(ValueError):
    """The span is not readable without a guess. `reason` is truncated/unrepairable/escaped.

    Messages name the problem and the offset, never the model's text (it may be call data).
    """

    def __init__(self, reason: str, pos: int, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.pos = pos


def same_value(a: Any, b: Any) -> bool:
    """Type-strict deep equality: `1`, `1.0` and `True` are different answers."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(map(same_value, a, b))
    return bool(a == b)


class TolerantParser:
    """Recursive descent over one text; `parse(i)` reads the value starting at `i`."""

    __slots__ = ("_curly", "_n", "_s", "_skip")

    def __init__(self, text: str, *, curly_quotes: bool = False) -> None:
        self._s = text
        self._n = len(text)
        self._curly = curly_quotes
        self._skip = _SKIP.match

    def parse(self, i: int) -> tuple[Any, int]:
        """Return (value, index just past it)."""
        return self._value(i, 0)

    # -- errors ------------------------------------------------------------------------------

    def _truncated(self, i: int, what: str) -> TolerantParseError:
        return TolerantParseError(TRUNCATED, i, f"text ends inside {what}")

    def _bad(self, i: int, what: str) -> TolerantParseError:
        return TolerantParseError(UNREPAIRABLE, i, f"{what} at offset {i}")

    # -- grammar -----------------------------------------------------------------------------

    def _ws(self, i: int) -> int:
        i = self._skip(self._s, i).end()  # type: ignore[union-attr]  # `*` always matches
        if self._s.startswith("/*", i):  # `_SKIP` consumed every closed comment
            raise self._truncated(i, "a comment")
        return i

    def _value(self, i: int, depth: int) -> tuple[Any, int]:
        s = self._s
        if i >= self._n:
            raise self._truncated(i, "a value")
        c = s[i]
        if c == "{":
            return self._object(i, depth + 1)
        if c == "[":
            return self._array(i, depth + 1)
        if c in _KEY_QUOTES or (c == "“" and self._curly):
            return self._string(i)
        if c == "-" or "0" <= c <= "9":
            return self._number(i)
        if c == "\\" and s.startswith('\\"', i):
            raise TolerantParseError(ESCAPED, i, "string-escaped document")
        m = _WORD.match(s, i)
        if m is not None:
            return self._word(m)
        if c in ".…":
            raise self._bad(i, "placeholder instead of a value")
        raise self._bad(i, "unexpected character where a value should start")

    def _object(self, i: int, depth: int) -> tuple[dict[str, Any], int]:
        if depth > MAX_DEPTH:
            raise self._bad(i, "nesting too deep")
        s, n, ws = self._s, self._n, self._ws
        obj: dict[str, Any] = {}
        i = ws(i + 1)
        while True:
            if i >= n:
                raise self._truncated(i, "an object")
            if s[i] == "}":  # `{}` or a trailing comma
                return obj, i + 1
            key, i = self._key(i)
            i = ws(i)
            if i >= n:
                raise self._truncated(i, "an object")
            if s[i] not in ":：":
                raise self._bad(i, "member without a value")
            value, i = self._value(ws(i + 1), depth)
            if key in obj and not same_value(obj[key], value):
                raise self._bad(i, "duplicate key with a different value")
            obj[key] = value
            i = ws(i)
            if i >= n:
                raise self._truncated(i, "an object")
            c = s[i]
            if c in ",，":
                i = ws(i + 1)
            elif c == "}":
                return obj, i + 1
            elif not (c in _KEY_QUOTES or (c == "“" and self._curly)):
                # A missing comma is repaired only before a quoted key, which `_key` and the
                # `:` check on the next turn enforce.
                raise self._bad(i, "unexpected character after a member")

    def _array(self, i: int, depth: int) -> tuple[list[Any], int]:
        if depth > MAX_DEPTH:
            raise self._bad(i, "nesting too deep")
        s, n, ws = self._s, self._n, self._ws
        arr: list[Any] = []
        i = ws(i + 1)
        while True:
            if i >= n:
                raise self._truncated(i, "an array")
            if s[i] == "]":
                return arr, i + 1
            value, i = self._value(i, depth)
            arr.append(value)
            i = ws(i)
            if i >= n:
                raise self._truncated(i, "an array")
            c = s[i]
            if c in ",，":
                i = ws(i + 1)
            elif c == "]":
                return arr, i + 1
            else:
                raise self._bad(i, "unexpected character in an array")

    def _key(self, i: int) -> tuple[str, int]:
        s = self._s
        c = s[i]
        if c in _KEY_QUOTES or (c == "“" and self._curly):
            return self._string(i)
        if c == "\\" and s.startswith('\\"', i):
            raise TolerantParseError(ESCAPED, i, "string-escaped document")
        m = _WORD.match(s, i)
        if m is None:
            if c in ".…":
                raise self._bad(i, "placeholder instead of a member")
            raise self._bad(i, "unexpected character where a key should start")
        return m.group(), m.end()

    def _string(self, i: int) -> tuple[str, int]:
        quote = self._s[i]
        m = _STRINGS[quote].match(self._s, i)
        if m is None:
            raise self._truncated(i, "a string")
        body = m.group(1)
        if "\\" in body:
            body = self._unescape(body, quote, i)
        return body, m.end()

    def _unescape(self, body: str, quote: str, i: int) -> str:
        out: list[str] = []
        last = 0
        surrogates = False
        for m in _ESCAPE.finditer(body):
            out.append(body[last : m.start()])
            hex_digits, char = m.groups()
            if hex_digits is not None:
                code = int(hex_digits, 16)
                surrogates = surrogates or 0xD800 <= code <= 0xDFFF
                out.append(chr(code))
            elif char in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[char])
            elif char == quote:  # `\'` inside a Python-quoted string
                out.append(char)
            else:
                raise self._bad(i, "invalid escape in a string")
            last = m.end()
        out.append(body[last:])
        text = "".join(out)
        if surrogates:  # pair `\ud83d\ude00` into one character, as `json` does
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
        return text

    def _number(self, i: int) -> tuple[int | float, int]:
        s = self._s
        m = _NUMBER.match(s, i)
        end = m.end() if m is not None else i
        if m is None or (end < self._n and s[end] in "0123456789.eE+-"):
            # `0.` or `-` at the very end is a cut-off number; `01` or `1.2.3` is not a number.
            if _NUMBER_TAIL.match(s, i):
                raise self._truncated(i, "a number")
            raise self._bad(i, "malformed number (leading zero or stray sign)")
        text = m.group()
        if m.group(1) is None and m.group(2) is None:
            return int(text), end
        value = float(text)
        if math.isinf(value):  # `1e999` is Infinity by another name
            raise self._bad(i, "number out of range")
        return value, end

    def _word(self, m: re.Match[str]) -> tuple[Any, int]:
        word = m.group()
        if word in _LITERALS:
            return _LITERALS[word], m.end()
        if m.end() == self._n and any(lit.startswith(word) for lit in _LITERALS):
            raise self._truncated(m.start(), "a literal")
        if word in ("NaN", "Infinity", "undefined"):
            raise self._bad(m.start(), f"{word} is not a JSON value")
        raise self._bad(m.start(), "unquoted value")
