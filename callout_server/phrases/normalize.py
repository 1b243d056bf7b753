"""Text normalisation for phrase matching, shared by call screening, global intents and lexicons.

    fold(text) -> str               the normalised text only: one `str.translate` (hot path)
    normalize(text) -> Normalized   the same text with a map back to the original and the
                                    separators that were dropped (word and clause breaks)

Each character, on its own: compatibility decomposition with combining marks dropped, then
NFKC (full-width and half-width forms, circled digits, ligatures, accents: `Ｓｏｒｒｙ` ->
`sorry`, `é` -> `e`), case folding, traditional -> simplified Chinese with OpenCC's `t2s`
tables (`穩賺` -> `稳赚`, `關機` -> `关机`), and everything that is not a letter or a digit
dropped (spaces, punctuation, symbols, marks), so `稳 赚`, `保-本` and `保本` are one text.

Why character by character: a matcher needs `fold(text)[i:j] == fold(text[i:j])` for every
span, so that a phrase folded on its own is found in any text that contains it. OpenCC's
phrase-level conversion breaks that at its phrases' edges (乾 stays 乾 in 乾隆, is 干 in 乾淨);
its tables applied to one character at a time keep it, and still map everything a transcript
or a model writes in traditional characters. Each character is folded once and cached.

A dropped character leaves a separator before the next kept one: nothing (marks,
apostrophes, hyphens, middle dots, zero-width characters: `don't` is one word, `保-本` one
term), a word break (spaces, brackets, quotes, other symbols) or a clause break (`,.!?;:`
and their CJK and full-width forms, `、…—～`, line breaks). Matchers use them to keep Latin
words whole (`stop` is not found in `nonstop`) and negation inside its clause.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Any

JOIN, WORD, CLAUSE = 0, 1, 2  # separator kinds, weakest first

_CACHE_LIMIT = 65_536  # distinct characters kept; an adversarial text cannot grow it further
_JOINERS = frozenset("'’‘ʼ`´-‐‑·・･")
_CLAUSE_MARKS = frozenset(",.!?;:。，！？；：、…‥⋯—―～~｡､︰︒\n\r\u2028\u2029\v\f")


@cache
def _t2s() -> Any:  # OpenCC has no type hints
    # Imported on first use: building the converter costs ~15 ms, paid by the first caller
    # (warm() pays it at start-up instead).
    import opencc

    return opencc.OpenCC("t2s")


def _fold_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFKD", ch)
    bare = "".join(c for c in decomposed if not unicodedata.category(c).startswith("M"))
    folded = unicodedata.normalize("NFKC", bare).casefold()
    if any(ord(c) >= 0x2E80 for c in folded):  # only CJK can be traditional
        folded = _t2s().convert(folded)
    return "".join(c for c in folded if unicodedata.category(c)[0] in "LN")


def _separator(ch: str) -> int:
    if ch in _JOINERS or unicodedata.category(ch)[0] == "M" or unicodedata.category(ch) == "Cf":
        return JOIN
    if ch in _CLAUSE_MARKS or unicodedata.normalize("NFKC", ch)[:1] in _CLAUSE_MARKS:
        return CLAUSE
    return WORD


class _Table(dict[int, str | None]):
    """`str.translate` table filled on demand: code point -> folded text, None to drop it."""

    def __missing__(self, code: int) -> str | None:
        folded = _fold_char(chr(code)) or None
        if len(self) < _CACHE_LIMIT:
            self[code] = folded
        return folded


class _Chars(dict[str, tuple[str, int]]):
    """Character -> (folded text, separator kind when the folded text is empty)."""

    def __missing__(self, ch: str) -> tuple[str, int]:
        folded = _fold_char(ch)
        entry = (folded, JOIN if folded else _separator(ch))
        if len(self) < _CACHE_LIMIT:
            self[ch] = entry
        return entry


_TABLE = _Table()
_CHARS = _Chars()


def fold(text: str) -> str:
    """The normalised text alone (equal to `normalize(text).text`)."""
    return text.translate(_TABLE)


@dataclass(frozen=True, slots=True)
class Normalized:
    """A text folded for matching, with the way back to the original.

    `origin[i]` is the index in `source` of the character `text[i]` came from; `seps[i]` is
    the strongest separator dropped between `text[i-1]` and `text[i]` (`seps[len(text)]`:
    after the last one).
    """

    source: str
    text: str
    origin: tuple[int, ...]
    seps: bytes

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span (start, end) the normalised span [start, end) came from."""
        if start >= end:
            at = self.origin[start] if start < len(self.origin) else len(self.source)
            return at, at
        return self.origin[start], self.origin[end - 1] + 1

    def clause_break(self, start: int, end: int) -> bool:
        """True when a clause break lies between normalised positions start and end."""
        return any(self.seps[i] == CLAUSE for i in range(start + 1, end)) if end > start else False

    def word_start(self, i: int) -> bool:
        """True when a token starts at position i (see `tokens_between`)."""
        if i <= 0 or i >= len(self.text):
            return True
        return self.seps[i] >= WORD or _kind(self.text[i - 1]) != _kind(self.text[i]) \
            or _kind(self.text[i]) == _CJK

    def tokens_between(self, start: int, end: int) -> int:
        """How many tokens begin in [start, end): a CJK character is one, a Latin word or a
        run of digits is one."""
        return sum(1 for i in range(max(start, 0), min(end, len(self.text))) if self.word_start(i))

    def edges_ok(self, start: int, end: int) -> bool:
        """A match of [start, end) keeps Latin words and numbers whole: it does not start or
        end inside a word, nor next to a digit (`12315` is not in `13812315678`, even written
        `138 1231 5678`)."""
        text = self.text
        # CJK characters (>= U+2E80) have no word edges: the common case costs two compares
        if start > 0 and text[start] < _CJK_START and text[start - 1] < _CJK_START \
                and _joined(text[start - 1], text[start], self.seps[start]):
            return False
        return not (end < len(text) and text[end - 1] < _CJK_START and text[end] < _CJK_START
                    and _joined(text[end - 1], text[end], self.seps[end]))


def _joined(left: str, right: str, sep: int) -> bool:
    """Two non-CJK neighbours in one word or one number."""
    digits = left.isdigit(), right.isdigit()
    if digits == (True, True):
        return True  # numbers stay whole even across spaces
    return digits == (False, False) and sep < WORD


_CJK_START = "\u2e80"
_CJK, _LATIN, _DIGIT = 0, 1, 2


def _kind(ch: str) -> int:
    if ch.isdigit():
        return _DIGIT
    return _CJK if ch >= _CJK_START else _LATIN


def normalize(text: str) -> Normalized:
    """Fold `text` (see the module docstring), keeping where each character came from."""
    out: list[str] = []
    origin: list[int] = []
    seps = bytearray()
    pending = JOIN
    chars = _CHARS
    for i, ch in enumerate(text):
        folded, kind = chars[ch]
        if folded:
            for c in folded:
                out.append(c)
                origin.append(i)
                seps.append(pending)
                pending = JOIN
        elif kind > pending:
            pending = kind
    seps.append(pending)
    return Normalized(text, "".join(out), tuple(origin), bytes(seps))


def warm() -> None:
    """Build the Chinese converter now (start-up) rather than on the first text."""
    _t2s()
