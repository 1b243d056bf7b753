"""`speakable(text)`: what of a model's answer a TTS voice should read out.

Removed: markdown markers (**, __, ~~, `, headings, > quotes, list bullets, table pipes and
rules), links reduced to their text, bare URLs (`http(s)://…`, `www.…`: read out as symbols
they are useless on a phone call), HTML tags, emoji (with their joiners, variation selectors,
skin tones and flags) and other pictographic or unspeakable symbols.
Kept: letters and combining marks of every script, digits, ordinary and CJK punctuation,
currency signs, %, ‰, °, ℃, simple math (+ = < > ~ × ÷ ±), `#`, `@`, `&`, `/` (phone keys,
e-mail addresses, "24/7"). Smart quotes become straight quotes. Whitespace is collapsed.

Streaming: apply it to completed sentences, not to raw deltas (SentenceBatcher does this via
its `clean` hook). The splitter never cuts inside a URL or a link target (no whitespace
there), and markers are removed one by one rather than as pairs, so a `**bold**` that spans a
sentence boundary still loses both halves. No carry between calls is needed.

Decisions: every `*` is dropped (markdown emphasis and bullets are far more common in model
output than a spoken "star key"; prompts should spell it out as 星号键); `_` becomes a space
(`user_id` -> "user id"); `#` is dropped only as a heading marker at the start of a line.
"""

from __future__ import annotations

import re
import unicodedata

_LINK = re.compile(r"!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
_AUTOLINK = re.compile(r"<(?:https?|ftp)://[^>\s]*>|<[^@>\s]+@[^>\s]+>")
# A URL runs to whitespace, a quote/bracket or CJK punctuation; trailing ASCII punctuation is
# given back to the sentence (see _drop_url).
_URL = re.compile(
    r"(?<![A-Za-z0-9.])(?:(?:https?|ftp)://|www\.)[^\s<>\"'“”‘’（）【】「」《》，。！？；：、]+",
    re.IGNORECASE,
)
_URL_TRAILING = ".,!?;:)]}'\""
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")
_LINE_MARKERS = re.compile(r"(?m)^[ \t]*(?:(?:#{1,6}|>|[-*+•‣◦▪])[ \t]+|>)+")
_RULE_LINE = re.compile(r"(?m)^[ \t]*[-*_=|:+ \t]{3,}$")
_MARKERS = re.compile(r"\*+|~~|`+|\|")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,!?;:%。，、！？；：）」』】》])")
_SPACE_AFTER_OPEN = re.compile(r"([（「『【《])\s+")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|（\s*）|\[\s*\]|【\s*】")
_SPACES = re.compile(r"\s+")

_SMART = {
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'",
    "“": '"', "”": '"', "„": '"', "‟": '"', "″": '"',
}  # fmt: skip
_KEEP_SYMBOLS = frozenset("+=<>~×÷±−≈≤≥°℃℉№")
_DROP_PUNCT = frozenset("\\•‣◦▪※†‡¶§")
_DROP_MARKS = frozenset("\ufe0e\ufe0f\u20e3")  # variation selectors, keycap: emoji glue


class _CharTable(dict[int, str]):
    """`str.translate` table filled lazily: each code point is classified once."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        out = _classify(ch)
        self[code] = out
        return out


def _classify(ch: str) -> str:
    if ch in _SMART:
        return _SMART[ch]
    cat = unicodedata.category(ch)
    major = cat[0]
    if major in "LN":
        return ch
    if major == "M":
        return "" if ch in _DROP_MARKS else ch  # keep vowel signs, harakat, accents
    if major == "Z" or ch in "\n\r\t\f\v":
        return " "
    if major == "P":
        return "" if ch in _DROP_PUNCT else ch
    if cat == "Sc" or ch in _KEEP_SYMBOLS:
        return ch
    return ""  # emoji and pictographs (So), modifiers incl. skin tones (Sk), controls, private


_TABLE = _CharTable()


def _drop_url(match: re.Match[str]) -> str:
    url = match.group(0)
    stripped = url.rstrip(_URL_TRAILING)
    return url[len(stripped) :]  # keep the sentence's own punctuation after the URL


def speakable(text: str) -> str:
    """Text fit for TTS: see the module docstring for what is removed and kept."""
    if not text:
        return ""
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(" ", text)
    text = _URL.sub(_drop_url, text)
    text = _HTML_TAG.sub(" ", text)
    text = _FENCE.sub(" ", text)
    text = _RULE_LINE.sub(" ", text)
    text = _LINE_MARKERS.sub("", text)
    text = _MARKERS.sub("", text)
    text = text.replace("_", " ").replace("[", "").replace("]", "")
    text = text.translate(_TABLE)
    text = _EMPTY_BRACKETS.sub("", text)
    text = _SPACES.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _SPACE_AFTER_OPEN.sub(r"\1", text)
    return text.strip()
