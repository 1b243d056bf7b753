"""The negation cues global intent rules use, Chinese and English (defaults; callers may pass
their own `Negation`).

- `before`: a cue at most `BEFORE_TOKENS` tokens before a phrase, in the same clause, stops
  it: 我**不**投诉, **不用**转人工, 我**没说**不要再打了, I **didn't** say stop calling.
- `after`: a cue at most `AFTER_TOKENS` tokens after a phrase stops it, even past a comma:
  转人工**就不用了**, 投诉？**算了**.
- `not_negation`: words that contain a cue but negate nothing; a cue inside one of them is
  no cue: **不好意思**我要投诉, **不然**我就投诉你们, 我**受不了**了要投诉, 你们**能不能**别再打了.

Cues are folded like everything else (`normalize.fold`): `don't` is `dont`, `do not` is
`donot` (and still two tokens for the distance).
"""

from __future__ import annotations

from dataclasses import dataclass

BEFORE_TOKENS = 3
AFTER_TOKENS = 2


@dataclass(frozen=True, slots=True)
class Negation:
    before: tuple[str, ...]
    after: tuple[str, ...]
    not_negation: tuple[str, ...]


DEFAULT = Negation(
    before=(
        # Chinese
        "不", "没", "别", "甭", "勿", "未", "无需", "无须", "不用", "不要", "不想", "不是", "不必",
        "不需要", "没有", "没说", "谁说", "并非", "不会", "不打算", "用不着", "犯不着", "何必",
        # English
        "not", "no", "never", "dont", "doesnt", "didnt", "wont", "isnt", "arent", "wasnt",
        "cant", "cannot", "wouldnt", "shouldnt", "havent", "hasnt", "nobody", "noneed",
        "without",
    ),
    after=(
        "不用了", "就不用了", "不需要了", "就不需要", "算了", "就算了", "没必要", "不必了",
        "就不必", "先不", "暂时不", "还是不", "不了",
        "notnecessary", "notneeded", "nothanks", "nevermind",
    ),
    not_negation=(
        "不好意思", "不过", "不然", "要不", "要不然", "不管", "不停", "不断", "受不了", "忍不了",
        "不得不", "不少", "没完没了", "不行了", "不耐烦", "不对劲", "没想到", "不知道",
        "没错", "差不多", "了不起", "对不起", "不得了", "不一定",
        "能不能", "可不可以", "行不行", "是不是", "要不要", "好不好", "会不会", "不满", "不爽",
        "nomatter", "notonly", "cannotstand", "cantstand",
    ),
)
