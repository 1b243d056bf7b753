"""What makes a digit string a mobile, a landline, an ID number or a bank card (China).

Pure checks on normalised digits, no context: the numbering plan and the checksums.

- Mobile: 11 digits `1[3-9]…` (MIIT's subscriber segments). `154` has never been issued to
  subscribers: it is where mobile pseudonyms live, so it is not looked for (a redacted text
  redacts to itself there).
- Landline: area code `010`, `02x` (3 digits) or `0[3-9]xx` (4 digits), then a local number of
  7-8 digits starting 2-9 (no local number starts with 0 or 1: landline pseudonyms do).
  `400`/`800` are company lines, not subscribers.
- ID number (GB 11643): province code, a real date of birth, three digits, the ISO 7064
  MOD 11-2 check character (`X` for ten). Province-level codes `xx0000` of the mainland are
  never printed on an ID card: ID pseudonyms use them.
- Bank card: 16-19 digits, Luhn, an issuer prefix that card schemes use (UnionPay 62,
  domestic 6x/9x, Visa 4, Mastercard 51-55 and 2221-2720, JCB 35).
"""

from __future__ import annotations

import re

_MOBILE = re.compile(r"1[3-9]\d{9}")
MOBILE_PSEUDONYM_PREFIX = "154"
_AREA = re.compile(r"010|02\d|0[3-9]\d\d")
COMPANY_LINE_PREFIXES = ("400", "800")
PROVINCES = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 "
    "61 62 63 64 65 71 81 82 83 91".split()
)
MAINLAND_PROVINCES = tuple(sorted(p for p in PROVINCES if p < "70"))
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_CARD_PREFIX = re.compile(r"[469]|5[1-5]|35|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)")
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_mobile(d: str) -> bool:
    return (len(d) == 11 and _MOBILE.fullmatch(d) is not None
            and not d.startswith(MOBILE_PSEUDONYM_PREFIX))


def area_code(d: str) -> str | None:
    """The area code `d` starts with (`d` in national form, leading 0), or None."""
    m = _AREA.match(d)
    return m.group(0) if m else None


def is_local(d: str) -> bool:
    return len(d) in (7, 8) and d.isdigit() and d[0] in "23456789"


def is_company_line(national: str) -> bool:
    """400/800 numbers: a company's hotline, not a person's (they stay as said)."""
    body = national.lstrip("0")
    return body.startswith(COMPANY_LINE_PREFIXES)


def id_check_char(first17: str) -> str:
    return _ID_CHECK[sum(int(c) * w for c, w in zip(first17, _ID_WEIGHTS, strict=True)) % 11]


def valid_date(yyyymmdd: str) -> bool:
    y, m, d = int(yyyymmdd[:4]), int(yyyymmdd[4:6]), int(yyyymmdd[6:8])
    if not (1900 <= y <= 2029 and 1 <= m <= 12 and d >= 1):
        return False
    if m == 2 and d == 29:
        return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    return d <= _DAYS[m - 1]


def is_pseudonym_region(region: str) -> bool:
    return region[2:] == "0000" and region[:2] in MAINLAND_PROVINCES


def is_id_number(d: str) -> bool:
    if len(d) != 18 or not d[:17].isdigit() or d[17] not in "0123456789X":
        return False
    return (d[:2] in PROVINCES and valid_date(d[6:14]) and id_check_char(d[:17]) == d[17]
            and not is_pseudonym_region(d[:6]))


def is_id_shaped(d: str) -> bool:
    """An ID number but for its check character (used only after an ID cue)."""
    return (len(d) == 18 and d[:17].isdigit() and d[17] in "0123456789X"
            and d[:2] in PROVINCES and valid_date(d[6:14]) and not is_pseudonym_region(d[:6]))


def luhn_ok(d: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(d)):
        n = ord(c) - 48
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def luhn_digit(body: str) -> str:
    """The check digit that makes `body + digit` pass Luhn."""
    for c in "0123456789":
        if luhn_ok(body + c):
            return c
    raise AssertionError("unreachable: one of ten digits passes Luhn")


def is_bank_card(d: str) -> bool:
    return (16 <= len(d) <= 19 and d.isdigit() and _CARD_PREFIX.match(d) is not None
            and luhn_ok(d))
