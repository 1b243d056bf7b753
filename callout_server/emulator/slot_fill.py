"""Fill one slot from the utterance, or leave it null (the prompt says: invent nothing).

By type: ``number``/``integer`` the first number (digits, Chinese numerals, English words);
``boolean`` the utterance's yes/no; ``enum`` a listed value the customer said; ``string``
the span the slot is about: a time for time-like slots, a name, a phone number, an address,
a reason, the whole utterance for notes/feedback, or the clause that mentions the slot's
description. The slot's name and description say what it is about.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from callout_server.emulator.cues import polarity, words_and_pairs
from callout_server.emulator.nlu_prompt import SlotSpec
from callout_server.emulator.numerals import first_number
from callout_server.emulator.timespans import find_time

_CLAUSE_END = r"[，,。.！!？?；;、\n]"


def _about(*words: str) -> re.Pattern[str]:
    return re.compile("|".join(words), re.IGNORECASE)


_TIME = _about(r"time", r"date", r"when", r"\bday", r"hour", r"schedul", r"appointment",
               r"callback", r"时间", r"日期", r"几点", r"何时", r"哪天", r"预约", r"回电",
               r"时段")
_NAME = _about(r"name", r"姓名", r"名字", r"称呼", r"联系人", r"姓")
_PHONE = _about(r"phone", r"mobile", r"\btel\b", r"电话", r"手机", r"号码")
_ADDRESS = _about(r"address", r"location", r"地址", r"住址", r"位置", r"小区", r"地点")
_REASON = _about(r"reason", r"why", r"原因", r"理由")
_FREE_TEXT = _about(r"note", r"feedback", r"comment", r"remark", r"issue", r"problem",
                    r"question", r"request", r"备注", r"反馈", r"意见", r"建议", r"问题",
                    r"诉求", r"需求", r"投诉", r"内容")

_NAME_SAID = re.compile(
    r"(?:我叫|我姓|姓|我是|名字是|叫我)([\u4e00-\u9fff]{1,4}?)(?:先生|女士|小姐|老师|" + _CLAUSE_END
    + r"|$|，|的)|(?:my name is|this is|i am|i'm|call me)\s+([A-Z][a-z]+(?: [A-Z][a-z]+)?)",
    re.IGNORECASE)
_PHONE_SAID = re.compile(r"(?<!\d)(?:\+?\d[\d\s-]{5,}\d)(?!\d)")
_ADDRESS_SAID = re.compile(
    r"(?:地址是|住在|地址在|在)([^，,。.！!？?；;\n]{2,40}?(?:路|街|号|小区|村|镇|区|县|市|栋|楼|室|门|巷))"
    r"|(?:address is|live at|live in)\s+([^,.!?;\n]{3,60})", re.IGNORECASE)
_BECAUSE = re.compile(r"(?:因为|由于|because|since)\s*([^。.！!？?；;\n]{2,60})", re.IGNORECASE)
_GENERIC_WORDS = re.compile(r"客户|用户|顾客|对方|是否|有没有|的|the |customer|user|whether ",
                            re.IGNORECASE)
_YES_NO = ({"是", "yes", "true", "y", "同意", "有", "需要", "满意", "对"},
           {"否", "no", "false", "n", "拒绝", "不同意", "无", "没有", "不需要", "不满意", "不对"})


def fill(slot: SlotSpec, utterance: str) -> Any:
    """The slot's value as the customer gave it, or None."""
    about = f"{slot.name} {slot.description}"
    match slot.type:
        case "number" | "integer":
            return first_number(utterance)
        case "boolean":
            return _boolean(utterance)
        case "enum":
            return _enum(slot.values, utterance)
        case _:
            return _string(about, utterance)


def _boolean(utterance: str) -> bool | None:
    p = polarity(utterance)
    if p == 0 and re.search(r"有|\bhave\b|\bhas\b", utterance, re.IGNORECASE):
        p = 1  # "有车" answers "是否有车" (the negative "没有" was already counted)
    return None if p == 0 else p > 0


def _enum(values: tuple[str, ...], utterance: str) -> str | None:
    # A yes/no pair of values ("是 | 否") is answered by the utterance's yes/no: "不是" says
    # "是" literally but means "否".
    yes = [v for v in values if v.casefold() in _YES_NO[0]]
    no = [v for v in values if v.casefold() in _YES_NO[1]]
    if len(yes) == 1 and len(no) == 1 and (p := polarity(utterance)):
        return yes[0] if p > 0 else no[0]
    folded = utterance.casefold()
    said = [(folded.find(v.casefold()), -len(v), v) for v in values if v.casefold() in folded]
    if said:
        return min(said)[2]  # the earliest mention; the longer value on a tie ("金卡会员")
    return None


_Extractor = Callable[[str], "str | None"]


def _group(pattern: re.Pattern[str]) -> _Extractor:
    def extract(text: str) -> str | None:
        m = pattern.search(text)
        return None if m is None else next((g for g in m.groups() if g), m.group()).strip()
    return extract


def _free_text(text: str) -> str | None:
    # Polite openers carry nothing an operator needs in a note.
    cleaned = re.sub(r"^(?:嗯|啊|哦|喂|好的|那个|呃|well|um|so)[，,\s]*", "", text.strip(),
                     flags=re.IGNORECASE)
    return cleaned.rstrip("。.！!") or None


# First matching row wins: (what the slot is about, how to find it in the utterance).
_STRING_ROWS: tuple[tuple[re.Pattern[str], _Extractor], ...] = (
    (_TIME, find_time),
    (_PHONE, _group(_PHONE_SAID)),
    (_NAME, _group(_NAME_SAID)),
    (_ADDRESS, _group(_ADDRESS_SAID)),
    (_REASON, _group(_BECAUSE)),
    (_FREE_TEXT, _free_text),
)


def _string(about: str, utterance: str) -> str | None:
    for topic, extract in _STRING_ROWS:
        if topic.search(about):
            return extract(utterance)
    return _clause_mentioning(about, utterance)


def _clause_mentioning(about: str, utterance: str) -> str | None:
    """The clause of the utterance that shares a word (or a CJK pair) with the slot."""
    wanted = words_and_pairs(_GENERIC_WORDS.sub(" ", about))
    for clause in re.split(_CLAUSE_END, utterance):
        if wanted & words_and_pairs(clause):
            return clause.strip() or None
    return None
