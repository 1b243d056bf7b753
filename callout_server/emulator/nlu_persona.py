"""The NLU persona: decide the NLU tier's prompt from what the prompt offers, like a small model.

An offered intent is picked by simple evidence, each intent scored against the utterance:

* yes/no cues (:mod:`cues`) agreeing with the intent's own leaning (``agree``/"客户同意" lean
  yes, ``refuse``/"客户拒绝" lean no): +0.5, contradicting it: -0.5;
* shared words / CJK character pairs between the utterance and the intent's name and
  description: +0.6 each (up to 3); the intent's name said outright: +1;
* a question ("多少钱？") for an intent about asking ("询问", "question"): +0.6.

The best score wins (the earlier intent on a tie). No evidence at all gives the first offered
intent at confidence 0.4; otherwise confidence runs 0.6-0.95 with the score and its lead over
the runner-up. The answer never names an intent that was not offered. Slots come from
:mod:`slot_fill`. The answer is the JSON object the tier asks for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from callout_server.emulator.cues import is_question, polarity, words_and_pairs
from callout_server.emulator.nlu_prompt import IntentSpec, NluTask
from callout_server.emulator.slot_fill import fill

NO_EVIDENCE_CONFIDENCE = 0.4
_GENERIC = re.compile(r"客户|用户|顾客|对方|表示|\b(?:the|customer|user|says|and|with|for)\b",
                      re.IGNORECASE)
_ASKING = re.compile(r"问|询|咨询|疑问|了解|question|ask|inquir|query", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class Decision:
    intent: str | None
    confidence: float
    slots: dict[str, Any]
    reasons: tuple[str, ...]  # what the choice rested on, for the reasoning text

    def to_json(self) -> str:
        return orjson.dumps({"intent": self.intent, "confidence": self.confidence,
                             "slots": self.slots}).decode()


def decide(task: NluTask) -> Decision:
    slots = {s.name: fill(s, task.utterance) for s in task.slots}
    if not task.intents:
        filled = any(v is not None for v in slots.values())
        return Decision(None, 0.85 if filled else 0.5, slots, ())
    intent, confidence, reasons = pick_intent(task.intents, task.utterance)
    return Decision(intent, confidence, slots, reasons)


def pick_intent(intents: tuple[IntentSpec, ...], utterance: str
                ) -> tuple[str, float, tuple[str, ...]]:
    """(name of an offered intent, confidence, reasons)."""
    said = polarity(utterance)
    question = is_question(utterance)
    scored = [_score(i, utterance, said, question) for i in intents]
    best = max(range(len(intents)), key=lambda k: (scored[k][0], -k))
    score, reasons = scored[best]
    if score <= 0:
        return intents[0].name, NO_EVIDENCE_CONFIDENCE, ()
    runner_up = max((s for k, (s, _) in enumerate(scored) if k != best), default=0.0)
    strength = min(1.0, 0.5 * score + 0.5 * (score - runner_up))
    return intents[best].name, round(0.6 + 0.35 * strength, 2), reasons


@lru_cache(maxsize=1024)
def _profile(intent: IntentSpec) -> tuple[int, frozenset[str], bool]:
    """What an intent offers to match against (a node's intents repeat call after call)."""
    name_words = _CAMEL.sub(" ", re.sub(r"[_\-.:]+", " ", intent.name))
    about = f"{name_words} {intent.description}"
    return (polarity(about), frozenset(words_and_pairs(_GENERIC.sub(" ", about))),
            _ASKING.search(about) is not None)


def _score(intent: IntentSpec, utterance: str, said: int, question: bool
           ) -> tuple[float, tuple[str, ...]]:
    leaning, units, asking = _profile(intent)
    score, reasons = 0.0, []
    if said and leaning:
        score += 0.5 if said == leaning else -0.5
        if said == leaning:
            reasons.append("肯定" if said > 0 else "否定")
    shared = words_and_pairs(utterance) & units
    if shared:
        score += 0.6 * min(len(shared), 3)
        reasons.append("、".join(sorted(shared)[:3]))
    if len(intent.name) > 1 and intent.name.casefold() in utterance.casefold():
        score += 1.0
        reasons.append(intent.name)
    if question and asking:
        score += 0.6
        reasons.append("提问")
    return score, tuple(reasons)


def reasoning_lead(task: NluTask, decision: Decision) -> str:
    """A short deliberation that leads the reasoning text when the model thinks."""
    parts = [f"客户说：“{task.utterance}”。"]
    if task.intents:
        parts.append(f"可选意图：{'、'.join(i.name for i in task.intents)}。")
        why = "，".join(decision.reasons) or "没有明显线索，先取第一个"
        parts.append(f"依据：{why}，选 {decision.intent}。")
    filled = [f"{k}={v}" for k, v in decision.slots.items() if v is not None]
    if task.slots:
        parts.append(f"槽位：{'；'.join(filled) if filled else '客户没有提到，填 null'}。")
    return "".join(parts)
