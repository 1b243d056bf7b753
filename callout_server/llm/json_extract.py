"""Extract the one JSON object a model answered with, or fail clearly.

Policy: /work/shared/spec/json-extraction.md. A wrong object silently returned costs a wrong
branch in a live call; a clear failure costs a retry or the node's fallback. So:

1. Cut reasoning: the answer is the text after the last `</think>` (or Kimi's `◁/think▷`);
   an opening tag left unclosed means the output stopped while reasoning.
2. Scan the answer for top-level `{`/`[` outside quoted prose (fences are just prose).
3. Parse each: the C `json` decoder first (the hot path), then `json_tolerant` for the
   lossless repairs. A JSON-looking span that cannot be read is a failure.
4. All values identical and an object: return it. Different values, or not an object: fail.

Exceptions:

    ValueError
      JSONExtractionError   reason in REASONS; `excerpt` is a bounded slice of the raw text

`str(error)` never contains model text (it may carry call data); the excerpt is a separate
attribute so log pipelines can drop it. Its words are the catalogue's English for the
reason (`reason.json_<reason>`, the same a diagnostic shows).

Whether the output was cut is not judged here: the client classifies the call once
(`classify.py`: a `truncated` diagnostic on the completion), and a caller whose extraction
fails on a cut output reports that verdict (the NLU tier does).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from callout_server import i18n
from callout_server.llm.json_tolerant import (
    ESCAPED,
    TRUNCATED,
    UNREPAIRABLE,
    TolerantParseError,
    TolerantParser,
    same_value,
)

__all__ = ["EXCERPT_CHARS", "REASONS", "JSONExtractionError", "extract_json_object"]

REASONS: Final = frozenset(
    {"truncated", "in_reasoning", "ambiguous_multiple", "not_object", "unrepairable", "empty"}
)
EXCERPT_CHARS: Final = 200


class JSONExtractionError(ValueError):
    """No single, complete JSON object could be read from a model's output."""

    def __init__(
        self, reason: str, detail: str = "", *, excerpt: str = "", position: int | None = None
    ) -> None:
        message = i18n.text(f"reason.json_{reason}", "en") + (f" ({detail})" if detail else "")
        super().__init__(message)
        self.reason = reason
        self.detail = detail
        self.excerpt = excerpt
        # Offset in the answer text (after reasoning was cut), when one point is to blame.
        self.position = position


class _Fail(Exception):
    """Internal: carries a reason up to `extract_json_object`, which adds the excerpt."""

    def __init__(self, reason: str, detail: str = "", position: int | None = None) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.position = position


# -- reasoning -----------------------------------------------------------------------------

_THINK_WORD = re.compile(r"think", re.I)
_LAST_CLOSE = re.compile(r".*(?:</think\s*>|◁/think▷)", re.S | re.I)  # greedy: the last one
_OPEN = re.compile(r"<think\s*>|◁think▷", re.I)
# Output cut inside a tag, e.g. `{…}<thi`: more reasoning, or another answer, was coming.
_PARTIAL_TAG = re.compile(r"(?:<|◁)/?(?:t(?:h(?:i(?:n(?:k\s*)?)?)?)?)?\Z", re.I)


def _cut_reasoning(text: str) -> str:
    if _THINK_WORD.search(text) is None:  # hot path: no tags at all
        return text
    m = _LAST_CLOSE.match(text)
    answer = text[m.end() :] if m is not None else text
    if _OPEN.search(answer) is not None:
        raise _Fail("in_reasoning")
    return answer


def _check_partial_tag(text: str) -> None:
    if text[-1] in "<◁kKnNiIhHtT/ \t\n" and _PARTIAL_TAG.search(text, max(0, len(text) - 12)):
        raise _Fail(TRUNCATED, "the output stops inside a <think> tag")


# -- scanning ------------------------------------------------------------------------------

# A candidate opening, or a quoted prose span (one line) whose braces must not count.
_SCAN = re.compile(r'[{\[]|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|“[^”\n]*”')
_ESCAPED_DOC = re.compile(r'"\s*[{\[]')
# What makes a span that failed to parse "JSON-looking" (then the failure stands) rather than
# prose such as `{name}`, `\frac{1}{2}` or `[注意]` (then it is skipped).
_GAP = r"(?:[ \t\r\n\ufeff\u200b\xa0\u3000]|\\[nrt]|\*\*)*"
_LOOKS_OBJECT = re.compile(r"\{" + _GAP + r"""(?:\Z|["'“}\\]|[^\W\d]\w*\s*[:：])""")
_LOOKS_ARRAY = re.compile(
    r"\[" + _GAP + r"""(?:\Z|[{\["'“\]\\\-0-9]|(?:true|false|null|True|False|None)\b)"""
)
_SPACE = re.compile(r"(?:\s|\\[nrt])*")
# Member syntax right before a value (`"slots": {…}` with the outer `{` missing) ...
_MEMBER_BEFORE = re.compile(r"""["'”]\s*[:：]\s*\Z""")
# ... or right after it (`{…}, "b": 2}`): either way the object we hold is a fragment.
_MEMBER_AFTER = re.compile(
    r"""[,，]\s*(?:"[^"\n]*"|'[^'\n]*'|[^\W\d]\w*)\s*[:：]|"[^"\n]*"\s*[:：]"""
)
_FRAGMENT = re.compile(r"""[}\]]|["'”]\s*[:：]""")
_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[\"\\/bfnrt])")


class _Reject(Exception):
    """Raised from inside the C decoder's hooks; deliberately not a ValueError."""


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # json keeps the last duplicate silently; we compare them
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen and not same_value(seen[key], value):
                raise _Reject("duplicate key with a different value")
            seen[key] = value
    return obj


def _reject_constant(name: str) -> Any:
    raise _Reject(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # `1e999` is Infinity by another name
        raise _Reject("number out of range")
    return value


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_pairs_hook, parse_constant=_reject_constant, parse_float=_finite_float
)


def _parse_at(text: str, start: int, curly: bool) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, start)
    except _Reject as exc:
        raise _Fail(UNREPAIRABLE, str(exc), start) from None
    except (ValueError, RecursionError):
        pass  # not strict JSON: try the lossless repairs
    return TolerantParser(text, curly_quotes=curly).parse(start)


def _unescape_document(text: str, start: int) -> str:
    """Undo one level of string escaping (`{\\"a\\": 1}`); anything else escaped is a guess."""
    body = text[start:]
    if "\\" in _JSON_ESCAPE.sub("", body):
        raise _Fail(UNREPAIRABLE, "string-escaped document with an invalid escape", start)
    try:
        unescaped: str = json.loads(f'"{body}"', strict=False)
    except ValueError:  # a raw `"` left inside: not one clean escaped document
        raise _Fail(UNREPAIRABLE, "partly string-escaped document", start) from None
    return unescaped


def _check_after(text: str, end: int, value: Any, prose_brace: bool) -> int:
    """Return where scanning resumes; fail if the text keeps writing the same object."""
    j = _SPACE.match(text, end).end()  # type: ignore[union-attr]
    if j >= len(text):
        return j
    c = text[j]
    if c == "}":
        # One stray `}` is tolerated only at the very end (a fence may still close), and not
        # when a prose `{` before the object could be the one it closes.
        if type(value) is dict and not prose_brace and not text[j + 1 :].strip(" \t\r\n`"):
            return len(text)
        raise _Fail(UNREPAIRABLE, "mismatched closing bracket after the value", j)
    if c == "]":
        raise _Fail(UNREPAIRABLE, "mismatched closing bracket after the value", j)
    if c in ",，" and not text[j + 1 :].strip(" \t\r\n`"):
        raise _Fail(TRUNCATED, "a comma after the value, then nothing", j)
    if _MEMBER_AFTER.match(text, j):
        raise _Fail(UNREPAIRABLE, "member syntax continues after the object closed", j)
    return end


def _collect(answer: str, allow_escaped: bool = True) -> list[Any]:
    """Every top-level JSON value in the answer, in order."""
    values: list[Any] = []
    escaped: list[str] = []
    curly = '"' not in answer  # curly delimiters only when there is no ASCII quote to prefer
    prose_brace = False
    pos = 0
    while (m := _SCAN.search(answer, pos)) is not None:
        start = m.start()
        if answer[start] in '"“':  # quoted prose: skip, but remember `"{\"a\": 1}"`
            if allow_escaped and '\\"' in m.group() and _ESCAPED_DOC.match(m.group()):
                escaped.append(m.group())
            pos = m.end()
            continue
        try:
            value, end = _parse_at(answer, start, curly)
        except TolerantParseError as exc:
            if exc.reason == ESCAPED:
                if not allow_escaped:
                    raise _Fail(UNREPAIRABLE, "document escaped more than once", exc.pos) from None
                values.extend(_collect(_unescape_document(answer, start), allow_escaped=False))
                break  # the unescaped rest of the answer has been scanned
            looks = _LOOKS_OBJECT if answer[start] == "{" else _LOOKS_ARRAY
            if not looks.match(answer, start):
                prose_brace = prose_brace or answer[start] == "{"
                pos = start + 1  # prose braces such as `{name}`
                continue
            reason = exc.reason
            if reason == UNREPAIRABLE and not answer[exc.pos :].strip(" \t\r\n`"):
                reason = TRUNCATED  # stopped before the closing bracket, only a fence after
            raise _Fail(reason, str(exc), exc.pos) from None
        if _MEMBER_BEFORE.search(answer, max(0, start - 64), start):
            raise _Fail(UNREPAIRABLE, "fragment missing its opening brace", start)
        pos = _check_after(answer, end, value, prose_brace)
        values.append(value)
    for span in escaped:
        try:
            decoded: str = json.loads(span, strict=False)
        except ValueError:
            raise _Fail(UNREPAIRABLE, "string-escaped document with an invalid escape") from None
        values.extend(_collect(decoded, allow_escaped=False))
    return values


_FENCED = re.compile(r"\s*(?:```[\w-]*)?\s*(.*?)\s*(?:```)?\s*\Z", re.S)


def _is_bare_scalar(answer: str) -> bool:
    """`"agree"` or `0.87` as the whole answer (maybe fenced): a value, but not an object."""
    body = _FENCED.match(answer).group(1)  # type: ignore[union-attr]  # always matches
    try:
        _DECODER.decode(body)
    except (ValueError, _Reject):
        return False
    return True


def _excerpt(text: str) -> str:
    if len(text) <= EXCERPT_CHARS:
        return text
    half = EXCERPT_CHARS // 2 - 2
    return f"{text[:half]} … {text[-half:]}"  # the end shows truncation, the start the shape


def extract_json_object(text: str) -> dict[str, Any]:
    """Return the single JSON object in a model's output, string contents unchanged.

    Raises JSONExtractionError (a ValueError) with `reason` in REASONS.
    """
    try:
        if not text or text.isspace():
            raise _Fail("empty", "the model output is blank")
        _check_partial_tag(text)
        answer = _cut_reasoning(text)
        values = _collect(answer)
        if not values:
            if _is_bare_scalar(answer):
                raise _Fail("not_object", "a bare scalar")
            if _FRAGMENT.search(answer):
                raise _Fail(UNREPAIRABLE, "JSON fragment without its opening brace")
            raise _Fail("empty")
        first = values[0]
        for other in values[1:]:
            if not same_value(first, other):
                raise _Fail("ambiguous_multiple", f"{len(values)} values")
        if type(first) is not dict:
            raise _Fail("not_object", f"got {type(first).__name__}")
        return first
    except _Fail as fail:
        raise JSONExtractionError(
            fail.reason, fail.detail, excerpt=_excerpt(text), position=fail.position
        ) from None
