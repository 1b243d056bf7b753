"""Typed pseudonyms: a found value's stand-in, of the same kind and shape, from a keyed hash.

`Pseudonyms(key).of(kind, value)` is HMAC-SHA256(key, kind + value) turned into a value of the
same kind, so the same (normalised) value maps to the same pseudonym everywhere and nobody
without the key can tell which value it stands for. Where the numbering plan has room, the
pseudonym lies where no real value does, so it never names somebody else:

    mobile     154xxxxxxxx: a segment never issued to subscribers
    landline   same area code, a local number starting with 1 (no local number does),
               an extension of the same length
    id_number  a mainland province-level code xx0000 (never printed on a card), a birth date
               between 1950 and 2005, a valid check character
    bank_card  the issuer's first six and the last four kept (what a receipt shows), the middle
               pseudonymous, Luhn-valid, never the original number
    email      8 letters and digits at example.com (reserved by RFC 2606)
    name       a common surname and given name (never the original)
    address    the same words for road, building and room; other characters and digits changed

The detector does not look for the first four kinds' pseudonym ranges, so redacting a
redacted text leaves those pseudonyms as they are. A card pseudonym cannot be told from a card:
a text is redacted once (the integration marks what it has redacted).

`render(found, pseudonym)` writes a number pseudonym in the spelling of the original: the same
separators, each digit in the script it was said in (ASCII, full-width, 一三八 with the same
幺/〇/两 choices, 壹贰叁, English words).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac

from callout_server.redaction import checks
from callout_server.redaction.digits import Token
from callout_server.redaction.kinds import (
    ADDRESS,
    BANK_CARD,
    EMAIL,
    ID_NUMBER,
    LANDLINE,
    MOBILE,
    NAME,
)
from callout_server.redaction.names import COMPOUND_SURNAMES, SURNAMES

_ALNUM = "abcdefghijkmnpqrstuvwxyz23456789"  # no look-alikes (l/1, o/0)
_GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红鹏辉建林晨宇欣怡浩然子轩梓涵雨"
_ROAD_CHARS = "和平安康宁泰兴华新民长乐永福盛景春秋东西南北文化建设光明阳友谊青年"
_FIRST = ("Alex Jamie Taylor Jordan Morgan Casey Riley Avery Quinn Robin Sam Chris Drew Lee "
          "Pat Kim Dana Jesse Terry Frankie").split()
_LAST = ("Smith Brown Taylor Wilson Clark Hall Young King Wright Green Baker Hill Moore Wood "
         "Allen Lewis Walker Scott Adams Turner").split()
_STREETS = "Oak Maple Cedar Elm Pine Lake Hill Park River Spring Willow Birch".split()
_KEEP_IN_ADDRESS = frozenset("路街道巷弄号院楼栋幢座单元层室户小区花园公寓大厦家园新村城苑胡同里十百")
_HAN_OUT = "零一二三四五六七八九"
_FIN_OUT = "零壹贰叁肆伍陆柒捌玖"
_WORDS_OUT = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_EPOCH = dt.date(1950, 1, 1)
_ID_DAYS = (dt.date(2005, 12, 31) - _EPOCH).days
_MAX_ATTEMPTS = 16


class Pseudonyms:
    """Stand-ins derived from one key. Pure: the same key and value give the same result."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _stream(self, kind: str, value: str, attempt: int) -> int:
        msg = f"{kind}\x1f{attempt}\x1f{value}".encode()
        return int.from_bytes(hmac.digest(self._key, msg, hashlib.sha256), "big")

    def of(self, kind: str, value: str, surname_len: int = 0) -> str:
        make = _MAKERS[kind]
        for attempt in range(_MAX_ATTEMPTS):
            out = make(self._stream(kind, value, attempt), value, surname_len)
            if out != value:
                return out
        raise AssertionError("no pseudonym differs from the value")  # 16 misses in a row


def _digits(h: int, n: int) -> tuple[str, int]:
    h, r = divmod(h, 10 ** n)
    return str(r).zfill(n), h


def _mobile(h: int, value: str, _: int) -> str:
    return checks.MOBILE_PSEUDONYM_PREFIX + _digits(h, 8)[0]


def _landline(h: int, value: str, _: int) -> str:
    parts = value.split("-")
    area, rest = (parts[0], parts[1:]) if parts[0].startswith("0") else ("", parts)
    out = [area] if area else []
    for k, part in enumerate(rest):
        digits, h = _digits(h, len(part))
        out.append("1" + digits[1:] if k == 0 else digits)  # a local number never starts with 1
    return "-".join(out)


def _id_number(h: int, value: str, _: int) -> str:
    h, p = divmod(h, len(checks.MAINLAND_PROVINCES))
    h, days = divmod(h, _ID_DAYS + 1)
    seq, h = _digits(h, 3)
    first17 = (checks.MAINLAND_PROVINCES[p] + "0000"
               + (_EPOCH + dt.timedelta(days=days)).strftime("%Y%m%d") + seq)
    return first17 + checks.id_check_char(first17)


def _bank_card(h: int, value: str, _: int) -> str:
    middle, h = _digits(h, len(value) - 10)
    head, tail = value[:6] + middle[:-1], value[-4:]
    for c in "0123456789":  # solve the last middle digit for Luhn: the last four stay
        if checks.luhn_ok(head + c + tail):
            return head + c + tail
    raise AssertionError("unreachable: one digit in ten passes Luhn")


def _email(h: int, value: str, _: int) -> str:
    chars = []
    for _i in range(8):
        h, r = divmod(h, len(_ALNUM))
        chars.append(_ALNUM[r])
    return "".join(chars) + "@example.com"


def _pick(h: int, options: str | tuple[str, ...] | list[str]) -> tuple[str, int]:
    h, r = divmod(h, len(options))
    return options[r], h


def _name(h: int, value: str, surname_len: int) -> str:
    if surname_len == 0:  # English: as many words as said
        words = value.split()
        out = []
        for k in range(len(words)):
            word, h = _pick(h, _LAST if k and k == len(words) - 1 else _FIRST)
            out.append(word)
        return " ".join(out)
    surname, h = _pick(h, COMPOUND_SURNAMES if surname_len == 2 else SURNAMES)
    given = []
    for _c in value[surname_len:]:
        c, h = _pick(h, _GIVEN)
        given.append(c)
    return surname + "".join(given)


def _address(h: int, value: str, _: int) -> str:
    out = []
    words = value.split(" ")
    english = len(words) > 1 and value[:1].isdigit()
    for word in words if english else [value]:
        if english and word[:1].isupper() and word.rstrip(".,") not in _EN_STREET_WORDS:
            street, h = _pick(h, _STREETS)
            out.append(street + word[len(word.rstrip(".,")):])
            continue
        chars = []
        for c in word:
            if "0" <= c <= "9":
                h, r = divmod(h, 10)
                chars.append(str(r))
            elif c in _HAN_OUT[1:] or c in "幺两":
                h, r = divmod(h, 9)
                chars.append(_HAN_OUT[1 + r])
            elif "\u4e00" <= c <= "\u9fff" and c not in _KEEP_IN_ADDRESS:
                ch, h = _pick(h, _ROAD_CHARS)
                chars.append(ch)
            else:
                chars.append(c)
        out.append("".join(chars))
    return " ".join(out)


_EN_STREET_WORDS = frozenset("Street St Road Rd Avenue Ave Lane Ln Drive Dr Boulevard Blvd Way "
                             "Court Ct Apt Apartment Suite Unit".split())
_MAKERS = {
    MOBILE: _mobile, LANDLINE: _landline, ID_NUMBER: _id_number, BANK_CARD: _bank_card,
    EMAIL: _email, NAME: _name, ADDRESS: _address,
}


def number_tail(kind: str, pseudonym: str) -> str:
    """The digits of a number pseudonym that replace the said ones after the kept lead."""
    if kind == LANDLINE and pseudonym.startswith("0"):
        return "".join(pseudonym.split("-")[1:])
    return pseudonym.replace("-", "")


def render(text: str, start: int, end: int, tokens: tuple[Token, ...], new_digits: str) -> str:
    """text[start:end] with its digits replaced by `new_digits`, each in its own script."""
    said = "".join(text[t.start:t.end] for t in tokens)
    style = {
        "0": next((c for c in said if c in "零〇○"), "零"),
        "1": "幺" if "幺" in said else "一",
        "2": "两" if "两" in said and "二" not in said else "二",
    }
    fin = any(t.script == "fin" for t in tokens)  # 零 is shared: 壹叁捌零 is all financial
    out, at, k = [], start, 0
    prev_script = "ascii"
    for tok in tokens:
        out.append(text[at:tok.start])
        digits = new_digits[k:k + len(tok.digits)]
        k += len(tok.digits)
        if fin and tok.script == "han":
            tok = Token(tok.start, tok.end, tok.digits, "fin")
        out.append(_write(text[tok.start:tok.end], tok, digits, style, prev_script))
        prev_script = tok.script if tok.script != "x" else prev_script
        at = tok.end
    out.append(text[at:end])
    return "".join(out)


def _write(said: str, tok: Token, digits: str, style: dict[str, str], prev_script: str) -> str:
    script = tok.script
    if script == "x":
        if digits == "X":
            return said
        script = prev_script
    if script == "word":
        return _words(said, digits)
    return "".join(_char(d, script, style) for d in digits)


def _char(d: str, script: str, style: dict[str, str]) -> str:
    if d == "X":  # an ID pseudonym's check character, where the original had a digit
        return {"han": "叉", "fin": "叉", "full": "Ｘ"}.get(script, "X")
    if script == "full":
        return chr(0xFF10 + int(d))
    if script == "han":
        return style.get(d, _HAN_OUT[int(d)])
    if script == "fin":
        return _FIN_OUT[int(d)]
    return d


def _words(said: str, digits: str) -> str:
    words = ["X" if d == "X" else _WORDS_OUT[int(d)] for d in digits]
    if len(digits) > 1 and len(set(digits)) == 1:
        text = f"{said.split()[0]} {words[0]}"  # "double oh" stays "double <digit>"
    else:
        text = " ".join(words)
    return text[0].upper() + text[1:] if said[0].isupper() else text
