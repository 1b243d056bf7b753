"""Names after a self-introduction (optional kind, off by default).

Only where the speaker says it is a name: `我叫张伟`, `我的名字是欧阳娜娜`, `我姓王` (the
surname), `我是李娜` / `我是王先生` (a common surname first), `my name is John Smith`,
`this is Mary`, `call me Tom`. A name is a known surname and at most two more characters that
do not start a common word: `我是学生`, `我是马上到`, `我是本人` stay. Names without a cue
(the agent's `王先生您好`) are not looked for: precision first, and this kind is opt-in.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# The commonest surnames (about 85 % of the population), compound ones first.
COMPOUND_SURNAMES = ("欧阳", "司马", "诸葛", "上官", "东方", "皇甫", "慕容", "令狐", "司徒", "夏侯")
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕"
    "丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃"
    "武戴莫孔向汤"
)
# After 我是 a surname char that also starts everyday words is too risky: 我是高中生, 我是马上.
_RISKY_AFTER_SHI = frozenset("高马方白向万于龙金石江任常安文明余全史成雷夏毛贺")
_STOP = frozenset("的了吗呢吧啊呀哦嗯是在有和跟我你他她们这那就都也还很太想要会能可说做去来到给从先女小"
                  "老经总工师家人本个位啥什怎么不没今昨上下里边号电手机卡证")
_HONORIFIC = re.compile(r"(?:先生|女士|小姐|老师|经理|总|工|师傅|阿姨|大哥|大姐)")
_ZH = re.compile(r"(我叫|我的名字叫|我的名字是|名字叫|本人叫|我姓|免贵姓|本人姓|我是|这里是|我这边是)\s?")
_EN = re.compile(r"(?i:\b(?:my name is|my name's|name is|this is|call me)\s+)"
                 r"([A-Z][a-z]+(?:[ -][A-Z][a-z]+){0,2})")
_EN_STOP = frozenset("I The A An Not Just Here Calling Sorry Fine Busy Good Happy Glad Sure Yes No "
                     "Ok Okay Mr Mrs Ms Miss Dr It That This What Why How When Where China".split())


class NameMatch(NamedTuple):
    start: int
    end: int
    value: str
    surname_len: int  # Chinese: characters of the surname; English: 0


def _zh_name(text: str, at: int, cue: str) -> tuple[int, int] | None:
    """(end, surname length) of a name starting at `at`, or None."""
    surname = text[at:at + 2] if text[at:at + 2] in COMPOUND_SURNAMES else text[at:at + 1]
    if not surname or (len(surname) == 1 and surname not in SURNAMES):
        return None
    if cue == "我是" or cue.endswith("这边是") or cue == "这里是":
        if surname in _RISKY_AFTER_SHI:
            return None
    end = at + len(surname)
    if cue.endswith("姓"):
        return end, len(surname)
    if _HONORIFIC.match(text, end):
        return end, len(surname)
    given = 0
    while given < 2 and end + given < len(text) and "\u4e00" <= text[end + given] <= "\u9fff" \
            and text[end + given] not in _STOP:
        given += 1
    if given == 0:
        return None
    return end + given, len(surname)


def find_names(text: str) -> list[NameMatch]:
    found: list[NameMatch] = []
    for m in _ZH.finditer(text):
        got = _zh_name(text, m.end(), m.group(1))
        if got is not None:
            found.append(NameMatch(m.end(), got[0], text[m.end():got[0]], got[1]))
    for m in _EN.finditer(text):
        words = m.group(1).split()
        while words and words[-1] in _EN_STOP:
            words.pop()
        if not words or words[0] in _EN_STOP:
            continue
        value = " ".join(words)
        found.append(NameMatch(m.start(1), m.start(1) + len(value), value, 0))
    found.sort(key=lambda f: f.start)
    return found
