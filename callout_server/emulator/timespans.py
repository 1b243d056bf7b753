"""Time expressions in an utterance, returned as the customer said them.

Day words, parts of the day and clock times are found separately, then neighbours joined
into one span: "明天下午三点以后都可以" → "明天下午三点以后", "tomorrow at 3pm works" →
"tomorrow at 3pm". The longest span wins.
"""

from __future__ import annotations

import re

_N = "[0-9零〇一二两三四五六七八九十]{1,3}"
_WEEKDAY = "[一二三四五六日天末]"
_ZH_DAY = (
    rf"大后天|后天|明天|今天|昨天|明早|明晚|今早|今晚|今儿|明儿|"
    rf"(?:下下|下个?|这个?|本|上个?)?(?:周|星期|礼拜){_WEEKDAY}?|周{_WEEKDAY}|"
    rf"(?:下个?|这个?|本)月(?:初|中|底)?|月(?:初|中|底)|{_N}月{_N}[日号]|{_N}[日号]|"
    r"改天|过两天|过几天|一会儿?|待会儿?|等会儿?|稍后|晚些时候|下次|随时|什么时候都"
)
_ZH_PART = r"早上|上午|中午|下午|傍晚|晚上|夜里|凌晨|白天|午饭后|下班后|下班以后|工作日"
# A clock time; not after 有/快/多... ("有一点问题", "快一点" are not times).
_ZH_CLOCK = (rf"(?<![有快慢多少差])(?:{_N})(?:点钟|点|[:：][0-5]\d)"
             rf"(?:半|一刻|三刻|{_N}分?)?"
             rf"(?:(?:到|至|-|~|－)(?:{_ZH_PART})?{_N}(?:点钟|点|[:：][0-5]\d)(?:半|{_N}分?)?)?")
_ZH_MOD = r"(?:以后|之后|以前|之前|前后|左右|前|后|开始|吧)?"
_ZH = re.compile(rf"(?:{_ZH_DAY}|{_ZH_PART}|{_ZH_CLOCK}){_ZH_MOD}")

_EN_DAY = (
    r"the day after tomorrow|today|tomorrow|tonight|this (?:morning|afternoon|evening|weekend)|"
    r"(?:next|this|on) (?:week|weekend|month|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|"
    r"later today|any ?time"
)
_EN_PART = r"(?:in the )?(?:morning|afternoon|evening)|at night|noon|midday"
_EN_CLOCK = (r"(?:(?:at|around|after|before|by|from|until|till) )?"
             r"\d{1,2}(?::[0-5]\d)?\s?(?:am|pm|a\.m\.|p\.m\.|o'clock)"
             r"|(?:at|around|after|before|by|from|until|till) \d{1,2}(?::[0-5]\d)?\b")
_EN_MOD = r"(?: or later| or after| onwards| and later| or so)?"
_EN = re.compile(rf"\b(?:{_EN_DAY}|{_EN_PART}|{_EN_CLOCK}){_EN_MOD}", re.IGNORECASE)

# What may stand between two parts of one time: "明天 下午", "tomorrow at 3pm", "周五的上午".
_JOINER = re.compile(r"^(?:\s|,|的|at|on|in the)*$", re.IGNORECASE)


def find_time(text: str) -> str | None:
    """The longest time expression in ``text``, or None."""
    spans = sorted([m.span() for m in _ZH.finditer(text) if m.group()]
                   + [m.span() for m in _EN.finditer(text)])
    best: tuple[int, int] | None = None
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current is not None and start >= current[0] and (
                start <= current[1] or _JOINER.match(text[current[1]:start])):
            current = (current[0], max(current[1], end))
        else:
            current = (start, end)
        if best is None or current[1] - current[0] > best[1] - best[0]:
            best = current
    if best is None:
        return None
    span = text[best[0]:best[1]].strip(" ,，")
    return span.removesuffix("吧") or None
