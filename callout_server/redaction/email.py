"""E-mail addresses, written (`zhangwei@qq.com`) or spoken (`zhangwei 艾特 qq 点 com`,
`zhang dot wei at gmail dot com`, `一二三四五六七 at qq dot com`).

The spoken English `at` is an everyday word (`look at google dot com`), so it counts only
when the local part holds a digit or `._-`, the domain is a mail provider's (qq, 163, gmail...),
or an e-mail cue (`email`, `邮箱`) comes just before. `艾特`, `圈a` and `@` always count. A spoken address ends with a known top-level
domain; a written one with any, except file extensions (`icon@2x.png`). Addresses at the
reserved domains (RFC 2606: example.com, .invalid, .test...) are where pseudonyms live and
are not looked for.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from callout_server.redaction.digits import HAN_DIGITS

_HAN = "".join(c for c in HAN_DIGITS)
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
# Every repetition is bounded (RFC 5321: 64 characters a local part, 63 a label), so a long
# hostile text costs linear time, never quadratic.
_PART = rf"(?:[A-Za-z0-9][A-Za-z0-9_%+]{{0,63}}|[{_HAN}]{{3,20}})"
_JOIN = r"(?:[._-]|\s*(?:点|下划线)\s*|\s+(?i:dot|underscore)\s+)"
_LOCAL = rf"{_PART}(?:{_JOIN}{_PART}){{0,8}}"
_DOT = r"(?:\s*(?:\.|点)\s*|\s+(?i:dot)\s+)"
_TLDS = ("com|cn|net|org|edu|gov|io|co|uk|hk|tw|mo|jp|kr|sg|me|info|biz|top|vip|xyz|ai|de|fr"
         "|ru|us|ca|au|in|cc|tv")
_DLABEL = rf"(?:{_LABEL}|[{_HAN}]{{1,20}})"
_SPOKEN_DOMAIN = rf"{_DLABEL}(?:{_DOT}{_DLABEL}){{0,4}}?{_DOT}(?i:{_TLDS})(?![A-Za-z0-9])"
_WRITTEN = re.compile(
    rf"(?<![A-Za-z0-9._%+-])([A-Za-z0-9][A-Za-z0-9._%+-]{{0,63}})\s?[@＠]\s?"
    rf"((?:{_LABEL}\.){{1,8}}[A-Za-z]{{2,24}})(?![A-Za-z0-9-])")
_SPOKEN = re.compile(
    rf"(?<![A-Za-z0-9])({_LOCAL})(\s*(?:@|＠|艾特|圈[aA])\s*|\s+(?i:at)\s+)({_SPOKEN_DOMAIN})")
_CUE = re.compile(r"(?:邮箱|邮件|电邮|(?i:e-?mail|mail|mailbox|address))(?:地址|(?i: address))?"
                  r"[\s:：]*(?:是|为|(?i:is))?[\s:：]*$")
_WORDS_BEFORE = re.compile(r"(?:[A-Za-z0-9]+ ){1,3}$")
_MAIL_PROVIDERS = frozenset("qq 163 126 139 yeah sina sohu foxmail aliyun gmail outlook hotmail "
                            "live yahoo icloud msn protonmail".split())
_FILE_EXT = frozenset("png jpg jpeg gif svg webp bmp pdf txt js css htm html json xml zip".split())
_RESERVED = ("example.com", "example.net", "example.org")
_RESERVED_TLDS = (".example", ".invalid", ".test", ".localhost")
_JOINERS = {"点": ".", "dot": ".", "下划线": "_", "underscore": "_"}
_CUE_WINDOW = 40


class EmailMatch(NamedTuple):
    start: int
    end: int
    value: str  # local@domain, lower case, spoken words and numerals normalised


def _normal(part: str) -> str:
    out = re.sub(r"\s*(点|下划线)\s*|\s+(dot|underscore)\s+",
                 lambda m: _JOINERS[(m.group(1) or m.group(2)).lower()], part, flags=re.I)
    return "".join(HAN_DIGITS.get(c, c) for c in out).lower().replace(" ", "")


def _reserved(domain: str) -> bool:
    return domain in _RESERVED or domain.endswith(_RESERVED_TLDS)


def _local_start(text: str, start: int, *, spoken_at: bool) -> tuple[int, str, bool]:
    """Where the local part starts, the words it takes in front, and whether a cue is there.

    ASR spaces a pinyin local part (`zhang wei 艾特 qq 点 com`): after a cue (`my email is
    zhang wei at ...`), or inside Chinese text, the ASCII words just before it belong to it.
    """
    before = text[max(0, start - _CUE_WINDOW):start]
    if _CUE.search(before):
        return start, "", True
    words = _WORDS_BEFORE.search(before)
    if words is None:
        return start, "", False
    taken = words.group(0).split(" ")[:-1]
    for k in range(1, len(taken) + 1):
        absorbed = " ".join(taken[-k:]) + " "
        if _CUE.search(before[:len(before) - len(absorbed)]):
            return start - len(absorbed), absorbed, True
    head = before[:len(before) - len(words.group(0))]
    if not spoken_at and (not head or not head[-1].isascii()):
        return start - len(words.group(0)), words.group(0), False
    return start, "", False


def find_emails(text: str) -> list[EmailMatch]:
    """Every e-mail address in `text`, in order, not overlapping."""
    if not any(c in text for c in "@＠艾圈") and " at " not in text.lower():
        return []  # the common case: no address can be there
    found: list[EmailMatch] = []
    for m in _WRITTEN.finditer(text):
        domain = m.group(2).lower()
        if domain.rsplit(".", 1)[-1] in _FILE_EXT or _reserved(domain):
            continue
        found.append(EmailMatch(m.start(), m.end(), f"{m.group(1).lower()}@{domain}"))
    for m in _SPOKEN.finditer(text):
        if any(f.start < m.end() and m.start() < f.end for f in found):
            continue
        local, at, domain = m.group(1), m.group(2).strip().lower(), _normal(m.group(3))
        start, absorbed, cue = _local_start(text, m.start(), spoken_at=at == "at")
        local = absorbed + local
        if at == "at" and not cue and domain.split(".")[0] not in _MAIL_PROVIDERS and not re.search(
                rf"[0-9._{_HAN}-]|点|下划线|dot|underscore", local, re.I):
            continue
        if _reserved(domain):
            continue
        found.append(EmailMatch(start, m.end(), f"{_normal(local)}@{domain}"))
    found.sort(key=lambda f: f.start)
    return found
