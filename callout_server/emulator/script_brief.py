"""Read a script-generation prompt back into a :class:`Brief`: language, purpose, transfer.

The prompt is the one ``callout_server/tiers/script/prompt.py`` writes: a system message
asking a call-script designer for sections such as ``【开场白】``, then ``需求：<brief>``.
:func:`parse` returns ``None`` for any other prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKERS = ("话术", "【开场白】", "【结束语】")
_BRIEF = "\n需求："
# Clause breaks; in English also "... and offer ..." / "... to check ...", where a new task starts.
_EN_TASKS = (r"check|confirm|verify|ask|survey|find out|learn|collect|record|remind|notify|"
             r"inform|tell|invite|offer|recommend|introduce|promote|book|schedule")
_CLAUSES = re.compile(
    rf"[，,；;。！!？?\n]+|\.(?:\s+|$)|\s+(?:and then|then)\s+|\s+(?:and|to)\s+(?=(?:{_EN_TASKS})\b)",
    re.IGNORECASE)
_TRANSFER = re.compile(
    r"(?:转接?|交给|转给)(?:到)?人工(?:客服|坐席)?|人工客服|"
    r"\b(?:transfer|hand|pass|escalate|put)(?:s|red|ed)?(?: (?:it|them|the call|the customer|"
    r"over|through))* to (?:a |an )?(?:human|live|real|agent|person|representative|operator)"
    r"(?: (?:agent|operator|person|representative))?s?\b", re.IGNORECASE)
# Connectives around the hand-off that are not part of its condition ("有问题[就]转人工").
_TRANSFER_FILLER = re.compile(r"(?:就|则|请|时|的话|需要|要|可以)+$|^(?:and|then|or)\s+",
                              re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class Brief:
    text: str
    chinese: bool
    purposes: tuple[str, ...]  # what the call is for, one clause each
    transfer: bool  # the brief asks for a hand-off to a human
    transfer_when: str  # its condition ("有问题"), "" when unconditional or absent


def parse(prompt: str) -> Brief | None:
    if not all(m in prompt for m in _MARKERS):
        return None
    at = prompt.find(_BRIEF, prompt.find("【结束语】"))
    if at < 0:
        return None
    return read(prompt[at + len(_BRIEF):])


def read(text: str) -> Brief | None:
    text = text.strip()
    if not text:
        return None
    latin = len(re.findall(r"[A-Za-z]", text))
    chinese = len(_CJK.findall(text)) * 2 >= latin  # a CJK character says more than a letter
    purposes: list[str] = []
    transfer, when = False, ""
    for clause in (c.strip() for c in _CLAUSES.split(text)):
        if not clause:
            continue
        m = _TRANSFER.search(clause)
        if m is None:
            purposes.append(clause)
            continue
        transfer = True
        rest = (clause[:m.start()] + clause[m.end():]).strip(" ，,")
        rest = _TRANSFER_FILLER.sub("", rest).strip()
        if len(rest) > 1:
            when = rest
    return Brief(text=text, chinese=chinese, purposes=tuple(purposes) or (text,),
                 transfer=transfer, transfer_when=when)
