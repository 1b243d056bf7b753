"""Yes/no cues in a short utterance (zh/en), the way a small model leans on them.

:func:`polarity` is +1 (agrees: 可以/好/行/是/同意/yes/ok...), -1 (declines: 不/没/拒绝/no/
not...) or 0. Negated positives ("不可以", "not interested") are read as one negative, and
fixed phrases whose characters mislead ("没问题" is a yes, "不好意思" is neither) are taken
out first. After a contrast word ("但是", "but") only the last clause counts, since that is
where the customer's answer is.
"""

from __future__ import annotations

import itertools
import re

_CONTRAST = re.compile(r"但是|可是|不过|\bbut\b|\bhowever\b", re.IGNORECASE)

# Phrases read before any single cue: (pattern, polarity).
_PHRASES: tuple[tuple[str, int], ...] = (
    (r"不好意思|不客气|没事儿?|对不起|不知道|不清楚|不确定", 0),
    (r"没问题|没关系|不错|不会不|当然", 1),
    (r"不(?:太|是很|怎么)?(?:可以|行|好|是|同意|要|需要|用|方便|感兴趣|想|合适|满意|愿意|考虑|买|对)",
     -1),
    (r"没(?:有)?(?:空|时间|兴趣|需要|需求|打算|想法)", -1),
    (r"\b(?:not|never|no longer)\s+(?:\w+\s+)?"
     r"(?:interested|ok|okay|good|fine|sure|agree|want|need|available|convenient|now)\b", -1),
    (r"\b(?:don't|do not|doesn't|won't|can't|cannot|wouldn't|didn't)\s+(?:\w+\s+)?\w+", -1),
    (r"\bno thanks?\b|\bno thank you\b|\bnot really\b", -1),
    (r"\bsounds good\b|\bworks for me\b|\bthat works\b|\bof course\b|\bno problem\b", 1),
)
_SINGLE_NEG = re.compile(
    r"拒绝|算了|别再?|不|没|\b(?:no|nope|nah|not|never|refuse|decline|reject|cancel|"
    r"unsubscribe|stop)\b", re.IGNORECASE)
_SINGLE_POS = re.compile(
    r"可以|好|行|是|对|嗯|同意|愿意|方便|满意|感兴趣|需要|有空|有时间|\b(?:yes|yeah|yep|yup|ok|okay|sure|"
    r"fine|agree|agreed|accept|alright|great|good|interested|confirm|confirmed|absolutely|"
    r"definitely|works)\b", re.IGNORECASE)
_PHRASE_RES = tuple((re.compile(p, re.IGNORECASE), v) for p, v in _PHRASES)

_QUESTION = re.compile(
    r"[?？]|吗|多少|怎么|什么|为什么|哪里|哪个|如何|几[个点号]|\b(?:how|what|why|when|where|which|"
    r"who|can you|could you|is it|are there|do you)\b", re.IGNORECASE)


def last_clause(text: str) -> str:
    """The part after the last contrast word ("好的，但是我没空" → "我没空")."""
    parts = _CONTRAST.split(text)
    return parts[-1] if parts[-1].strip() else text


def polarity(text: str) -> int:
    """+1 yes, -1 no, 0 neither (or both equally)."""
    rest = last_clause(text)
    score = 0
    for pattern, value in _PHRASE_RES:
        hits = len(pattern.findall(rest))
        if hits:
            score += 2 * value * hits  # a whole phrase outweighs a stray single cue
            rest = pattern.sub(" ", rest)
    score -= len(_SINGLE_NEG.findall(rest))
    score += len(_SINGLE_POS.findall(rest))
    return (score > 0) - (score < 0)


def is_question(text: str) -> bool:
    return _QUESTION.search(text) is not None


def words_and_pairs(text: str) -> set[str]:
    """Latin words (3+ letters, lower-cased) and CJK character pairs: what two short texts
    are compared by ("客户询问价格" and "价格怎么样" share "价格")."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)}
    pairs = {a + b for run in re.findall(r"[\u4e00-\u9fff]+", text)
             for a, b in itertools.pairwise(run)}
    return words | pairs
