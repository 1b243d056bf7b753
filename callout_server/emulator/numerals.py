"""Numbers in an utterance: Arabic digits, Chinese numerals (incl. colloquial 两千五), English
number words. :func:`first_number` returns the first one, as an int when it is whole.
"""

from __future__ import annotations

import re

_DIGITS = {"零": 0, "〇": 0, "一": 1, "幺": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
           "六": 6, "七": 7, "八": 8, "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_BIG = {"万": 10_000, "亿": 100_000_000}
_ZH_CHARS = "零〇一幺二两三四五六七八九十百千万亿"

_ARABIC = r"[-+]?\d+(?:,\d{3})*(?:\.\d+)?"
# A lone 一/幺 is a number only before a measure word ("一下", "一起" are not numbers).
_MEASURE = r"(?=[个张台件位元块岁次年月天人套份箱瓶盒只条辆间本把支斤公里米分秒小周])"
_ZH = (rf"[{_ZH_CHARS}]{{2,}}(?:点[{_ZH_CHARS[:11]}]+)?"
       rf"|[二两三四五六七八九十百千万](?:点[{_ZH_CHARS[:11]}]+)?|[一幺]{_MEASURE}")

_EN_ONES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
_EN_TENS = {w: 10 * (i + 2) for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split())}
_EN_SCALE = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_EN_WORD = "|".join([*_EN_ONES, *_EN_TENS, *_EN_SCALE, "a"])
_EN = rf"\b(?:{'|'.join([*_EN_ONES, *_EN_TENS])})(?:[\s-]+(?:{_EN_WORD}|and)\b)*"

_NUMBER = re.compile(rf"(?P<ar>{_ARABIC})|(?P<zh>{_ZH})|(?P<en>{_EN})", re.IGNORECASE)


def zh_to_number(text: str) -> float | None:
    """"三百二十" → 320, "两千五" → 2500 (a trailing digit takes the next unit down),
    "一万二" → 12000, "三点五" → 3.5, "一二三" (digit by digit) → 123."""
    whole, _, frac = text.partition("点")
    if not whole or whole[0] in "百千万亿" or any(c not in _ZH_CHARS for c in whole + frac):
        return None  # "万一" (in case) is not a number
    if all(c in _DIGITS for c in whole) and len(whole) > 1:
        value = float("".join(str(_DIGITS[c]) for c in whole))  # read out digit by digit
    else:
        value = float(_zh_int(whole))
    if frac:
        if not all(c in _DIGITS for c in frac):
            return None
        value += float("0." + "".join(str(_DIGITS[c]) for c in frac))
    return value


def _zh_int(text: str) -> int:
    total, section, digit, last_unit, zero = 0, 0, None, 1, False
    for c in text:
        if c in ("零", "〇"):
            zero = True  # "一百零五": the digit after 零 is a plain unit digit
        elif c in _DIGITS:
            digit = _DIGITS[c]
        elif c in _UNITS:
            section += (1 if digit is None else digit) * _UNITS[c]
            digit, last_unit, zero = None, _UNITS[c], False
        elif c in _BIG:
            total = (total + section + (digit or 0)) * _BIG[c]
            section, digit, last_unit, zero = 0, None, _BIG[c], False
    if digit is not None:
        # "两千五" is 2500: a digit right after a unit counts in the next unit down.
        section += digit * (last_unit // 10 if last_unit >= 100 and not zero else 1)
    return total + section


def en_to_number(text: str) -> float | None:
    total, current = 0, 0
    for word in re.split(r"[\s-]+", text.lower()):
        if word in _EN_ONES:
            current += _EN_ONES[word]
        elif word in _EN_TENS:
            current += _EN_TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _EN_SCALE:
            total += max(current, 1) * _EN_SCALE[word]
            current = 0
        elif word not in ("and", "a"):
            return None
    return float(total + current)


def first_number(text: str) -> int | float | None:
    for m in _NUMBER.finditer(text):
        if m.group("ar"):
            value: float | None = float(m.group("ar").replace(",", ""))
        elif m.group("zh"):
            value = zh_to_number(m.group("zh"))
        else:
            value = en_to_number(m.group("en").strip(" -"))
        if value is not None:
            return int(value) if value.is_integer() else value
    return None
