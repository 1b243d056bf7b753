"""Read the NLU tier's prompt back: offered intents, slots to fill, the customer's utterance.

The format is the one ``callout_server/tiers/nlu/prompt.py`` writes (line-based, Chinese
labels)::

    可选意图（intent 只能取以下名称之一）：          or  本节点不做意图判断，"intent" 填 null。
    - agree: 客户同意并给出时间
    需要抽取的槽位：                                or  本节点不抽取槽位，"slots" 填 {}。
    - time (字符串): 客户方便的时间
    - plan (枚举，取值 gold | silver): 套餐
    ...
    客户最新的话：明天下午三点以后都可以

:func:`parse` returns ``None`` for anything else, and the caller keeps its generic answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

INTENTS_HEADER = "可选意图（intent 只能取以下名称之一）："
NO_INTENTS = '本节点不做意图判断，"intent" 填 null。'
SLOTS_HEADER = "需要抽取的槽位："
NO_SLOTS = '本节点不抽取槽位，"slots" 填 {}。'
UTTERANCE = "客户最新的话："

_KINDS = {"字符串": "string", "数字": "number", "整数": "integer", "true/false": "boolean"}
_SLOT = re.compile(r"^- (\S+) \((枚举，取值 (?P<values>.*?)|[^()]+)\)(?:: (?P<desc>.*))?$")
_SECTION_END = ("需要抽取的槽位", "本节点不", "节点说明：", "对话上文：", UTTERANCE)


@dataclass(frozen=True, slots=True)
class IntentSpec:
    name: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class SlotSpec:
    name: str
    type: str = "string"  # string | number | integer | boolean | enum
    description: str = ""
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NluTask:
    intents: tuple[IntentSpec, ...]
    slots: tuple[SlotSpec, ...]
    utterance: str


def parse(prompt: str) -> NluTask | None:
    """The task in an NLU-tier prompt, or None when the prompt is not one."""
    if UTTERANCE not in prompt:
        return None
    has_intents, has_slots = INTENTS_HEADER in prompt, SLOTS_HEADER in prompt
    if not (has_intents or NO_INTENTS in prompt) or not (has_slots or NO_SLOTS in prompt):
        return None
    lines = prompt.splitlines()
    intents = tuple(_intent(x) for x in _section(lines, INTENTS_HEADER)) if has_intents else ()
    slots = tuple(s for x in _section(lines, SLOTS_HEADER) if (s := _slot(x))) \
        if has_slots else ()
    if (has_intents and not intents) or (has_slots and not slots):
        return None
    # The utterance is the rest of the user message after the first line-start label that
    # follows the node description (a context turn cannot shadow it).
    start = prompt.find("\n" + UTTERANCE, prompt.find(SLOTS_HEADER if has_slots else NO_SLOTS))
    if start < 0:
        return None
    utterance = prompt[start + 1 + len(UTTERANCE):].strip()
    return NluTask(intents=intents, slots=slots, utterance=utterance) if utterance else None


def _section(lines: list[str], header: str) -> list[str]:
    """Item lines under ``header``; an unlabelled line continues the previous item."""
    items: list[str] = []
    inside = False
    for line in lines:
        if line == header:
            inside = True
        elif inside:
            if line.startswith("- "):
                items.append(line)
            elif not line.strip() or line.startswith(_SECTION_END) or not items:
                break
            else:
                items[-1] += " " + line.strip()  # a description that spans lines
    return items


def _intent(line: str) -> IntentSpec:
    # Names carry no spaces, so the first ": " ends the name (a name may contain ":").
    name, _, desc = line[2:].partition(": ")
    return IntentSpec(name=name.strip(), description=desc.strip())


def _slot(line: str) -> SlotSpec | None:
    m = _SLOT.match(line)
    if m is None:
        return None
    desc = (m.group("desc") or "").strip()
    if m.group("values") is not None:
        values = tuple(v.strip() for v in m.group("values").split(" | ") if v.strip())
        return SlotSpec(name=m.group(1), type="enum", description=desc, values=values)
    kind = _KINDS.get(m.group(2).strip())
    return SlotSpec(name=m.group(1), type=kind, description=desc) if kind else None
