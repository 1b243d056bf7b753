"""Digit runs as ASR writes them: the scanner under every number kind.

A transcript spells one number in many ways: `13800138000`, `138 0013 8000`, `138，0013，8000`,
`一三八零零一三八零零零`, `幺三八`, `１３８`, `138零零13八000`, `one three eight double oh ...`.
`runs(text)` finds maximal runs of digits joined by separators (spaces with at most one dash,
dot, comma, `、`, parenthesis or `杠`), and cuts each run into groups at its separators,
because how a number is grouped tells a phone (3-4-4) from a card (4-4-4-4) from an amount
(1,380,013). A run of single digits spaced one by one (`1 3 8 0 0 ...`) is one group.

Tokens keep their script so a pseudonym can be written back in the same spelling.
Positional numerals (`十百千万`) are not digits: `三千五百` is an amount, never a phone.
"""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

# Chinese digits as ASR writes numbers read digit by digit; 幺 is 1, 两 is 2, 〇/○ are 0.
HAN_DIGITS = {
    "零": "0", "〇": "0", "○": "0", "一": "1", "幺": "1", "二": "2", "两": "2", "三": "3",
    "四": "4", "五": "5", "六": "6", "七": "7", "八": "8", "九": "9",
}
# Financial numerals (大写), as written on forms and sometimes by ASR post-processing.
FIN_DIGITS = {
    "壹": "1", "贰": "2", "叁": "3", "肆": "4", "伍": "5", "陆": "6", "柒": "7", "捌": "8", "玖": "9",
}
WORD_DIGITS = {
    "zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9",
}
X_CHARS = "Xx叉Ｘｘ"  # an ID number's check "digit" ten
_CHARS = "0-9０-９" + "".join(HAN_DIGITS) + "".join(FIN_DIGITS)
# The word branch starts with a cheap look-ahead: without it, trying the lookbehind at every
# position made scanning Chinese text five times slower.
_WORD = (r"(?=[ZzOoTtFfSsEeNnDd])(?<![A-Za-z])(?i:(?:(?:double|triple) +)?(?:"
         + "|".join(WORD_DIGITS) + r"))(?![A-Za-z])")
# X only closes a stretch of digits (an ID's last character; "x8001" is an extension). Where
# it closes no ID number ("3x faster", "13800138000X") the number is read without it.
_X = rf"[{X_CHARS}](?![{_CHARS}])"
_SPACE = "[ \t\u00a0\u3000]"
_PUNCT = "(?:[-–—－‐.·,，、()（）]|杠)"
# A separator is never empty (so the run pattern cannot backtrack through empty choices):
# spaces, perhaps with one punctuation mark, or one mark with spaces after it.
_SEP = rf"(?:{_SPACE}{{1,3}}(?:{_PUNCT}{_SPACE}{{0,3}})?|{_PUNCT}{_SPACE}{{0,3}})"
_DIGIT_STRETCH = rf"[{_CHARS}]+(?:{_X})?"
# Two scanners: digits only (the common case), and with English number words, used only when
# the text has one (checked on its ASCII words, which is cheap). A run is a stretch of digits
# or a word, then more of them after separators; runs shorter than MIN_RUN_DIGITS are dropped.
_RUN_DIGITS = re.compile(rf"{_DIGIT_STRETCH}(?:{_SEP}{_DIGIT_STRETCH})*")
_RUN_WORDS = re.compile(rf"(?:{_DIGIT_STRETCH}|{_WORD})(?:{_SEP}?(?:{_DIGIT_STRETCH}|{_WORD}))*")
MIN_RUN_DIGITS = 7  # no kind is shorter: a local number after a landline cue
# Tokenising a run takes a stretch of one script at once (`13800138000` is one token): a
# token per character made the redaction of a plain number three times slower.
_HAN_CLASS = "".join(HAN_DIGITS)
_FIN_CLASS = "".join(FIN_DIGITS) + "零"
_STRETCH = rf"(?:[0-9]+|[０-９]+|[{_FIN_CLASS}]*[{''.join(FIN_DIGITS)}][{_FIN_CLASS}]*|[{_HAN_CLASS}]+|{_X})"
_TOKEN_DIGITS_RE = re.compile(_STRETCH)
_TOKEN_WORDS_RE = re.compile(rf"(?:{_WORD}|{_STRETCH})")
_TO_ASCII = str.maketrans({**{chr(0xFF10 + i): str(i) for i in range(10)}, **HAN_DIGITS,
                           **FIN_DIGITS})
_LETTERS = re.compile("[A-Za-z]+")
DIGIT_CHARS = _CHARS  # a regex character class body
_WHITESPACE = re.compile(rf"{_SPACE}+")


class Token(NamedTuple):
    """Digits written in one script at text[start:end] (`138`, `一三八`, `double oh`)."""

    start: int
    end: int
    digits: str
    script: str  # ascii | full | han | fin | word | x


class Group(NamedTuple):
    """Digits written together (no separator inside), or single digits spaced one by one."""

    start: int
    end: int
    digits: str
    tokens: tuple[Token, ...]


class Run(NamedTuple):
    start: int
    end: int
    groups: tuple[Group, ...]
    seps: tuple[str, ...]  # the text between group k and k+1

    @property
    def digits(self) -> str:
        return "".join(g.digits for g in self.groups)


_CHAR_INFO: dict[str, tuple[str, str]] = {
    **{c: (c, "ascii") for c in "0123456789"},
    **{chr(0xFF10 + i): (str(i), "full") for i in range(10)},
    **{c: (d, "han") for c, d in HAN_DIGITS.items()},
    **{c: (d, "fin") for c, d in FIN_DIGITS.items()},
    **{c: ("X", "x") for c in X_CHARS},
}


def _token(m: re.Match[str]) -> Token:
    s = m.group(0)
    info = _CHAR_INFO.get(s[0])
    if info is not None:
        script = "fin" if info[1] == "han" and any(c in FIN_DIGITS for c in s) else info[1]
        return Token(m.start(), m.end(), s.translate(_TO_ASCII) if script != "x" else "X",
                     script)
    words = s.lower().split()
    times = {"double": 2, "triple": 3}.get(words[0], 1)
    return Token(m.start(), m.end(), WORD_DIGITS[words[-1]] * times, "word")


def _groups(text: str, tokens: list[Token]) -> tuple[list[list[Token]], list[str]]:
    groups: list[list[Token]] = [[tokens[0]]]
    seps: list[str] = []
    for prev, tok in itertools.pairwise(tokens):
        gap = text[prev.end:tok.start]
        # Words are spaced by nature: "one three eight" is one group until punctuation.
        if not gap or (prev.script == tok.script == "word" and gap.isspace()):
            groups[-1].append(tok)
        else:
            groups.append([tok])
            seps.append(gap)
    return groups, seps


def _merge_singles(groups: list[list[Token]], seps: list[str]) -> tuple[
        list[list[Token]], list[str]]:
    """`1 3 8 0 0 ...`: three or more one-digit groups spaced by whitespace are one group."""
    def single(g: list[Token]) -> bool:
        return len(g) == 1 and len(g[0].digits) == 1

    out: list[list[Token]] = []
    out_seps: list[str] = []
    k = 0
    while k < len(groups):
        end = k
        while end + 1 < len(groups) and single(groups[end]) and single(groups[end + 1]) \
                and seps[end].isspace():
            end += 1
        if end - k >= 2:  # three singles at least: "3 1" stays two numbers
            out.append([t for g in groups[k:end + 1] for t in g])
        else:
            end = k
            out.append(groups[k])
        if end + 1 < len(groups):
            out_seps.append(seps[end])
        k = end + 1
    return out, out_seps


def runs(text: str) -> list[Run]:
    """Every run of seven digits or more in `text`, cut into groups."""
    found: list[Run] = []
    with_words = has_digit_words(text)
    for rm in (_RUN_WORDS if with_words else _RUN_DIGITS).finditer(text):
        if rm.end() - rm.start() < MIN_RUN_DIGITS and not with_words:
            continue  # "一下", "3个": most runs are one or two digits
        tokens = tokens_in(text, rm.start(), rm.end(), with_words=with_words)
        if sum(len(t.digits) for t in tokens) < MIN_RUN_DIGITS:
            continue
        raw, seps = _groups(text, tokens)
        merged, seps = _merge_singles(raw, seps)
        groups = tuple(
            Group(g[0].start, g[-1].end, "".join(t.digits for t in g), tuple(g)) for g in merged
        )
        found.append(Run(rm.start(), rm.end(), groups, tuple(seps)))
    return found


def tokens_in(text: str, start: int, end: int, *, with_words: bool = False) -> list[Token]:
    pattern = _TOKEN_WORDS_RE if with_words else _TOKEN_DIGITS_RE
    return [_token(m) for m in pattern.finditer(text, start, end)]


_WORD_SET = frozenset(WORD_DIGITS)


def has_digit_words(text: str) -> bool:
    """Whether `text` has an English number word (a whole word: "phone" has none)."""
    if not text.isascii() and not _LETTERS.search(text):
        return False
    return not _WORD_SET.isdisjoint(w.lower() for w in _LETTERS.findall(text))


def strip_space(sep: str) -> str:
    return _WHITESPACE.sub("", sep)
