"""Global intents in a decision: the phrase rules first, then what the model may name.

    hit = rule_hit(req, intents)              # an IntentHit, or None (ask the model)
    offered = offered_to_model(req, intents)  # the enabled intents the prompt lists
    global_intent, answer = read_global(answer, req, intents)

Every decision checks the enabled global intents (`CompiledIntents`, read from the
snapshot: memory only) unless the node opted out (`"global_intents": false`). A rule hit
answers at once, without a model call: `global_intent` set (`source: "rule"`), `intent`
null, `fallback` false. Otherwise the model is offered them beside the node's intents and
may name one (`"global_intent": <name>`); a name it makes up is ignored (the node's
decision stands), and a global intent it puts in `intent` is moved where it belongs. With
none enabled nothing changes: no rule runs, the prompt is the node's own.
"""

from __future__ import annotations

from typing import Any

from callout_server.intents.compiled import CompiledIntents
from callout_server.phrases import GlobalIntent, IntentHit
from callout_server.tiers.nlu.schemas import DecideRequest, GlobalIntentAnswer


def in_play(req: DecideRequest, intents: CompiledIntents | None) -> CompiledIntents | None:
    """The intents this decision checks: None when the node opted out or none is enabled."""
    if intents is None or not req.global_intents or intents.rules is None:
        return None
    return intents


def rule_hit(req: DecideRequest, intents: CompiledIntents | None) -> IntentHit | None:
    if intents is None or intents.rules is None:
        return None
    return intents.rules.check(req.utterance).hit


def offered_to_model(intents: CompiledIntents | None) -> tuple[GlobalIntent, ...]:
    return () if intents is None else intents.enabled


def answer_of(name: str, intents: CompiledIntents, source: str) -> GlobalIntentAnswer:
    return GlobalIntentAnswer(name=name, action=intents.action(name),  # type: ignore[arg-type]
                              source=source)  # type: ignore[arg-type]


def read_global(answer: dict[str, Any], req: DecideRequest, intents: CompiledIntents | None
                ) -> tuple[GlobalIntentAnswer | None, bool]:
    """(the global intent the model named or None, whether it named it as `intent`).

    `answer` is the model's JSON object; a name is matched as the node's intents are
    (exact, else case-folded), and only among the enabled global intents."""
    if intents is None:
        return None, False
    named = _match(answer.get("global_intent"), intents)
    raw = answer.get("intent")
    if isinstance(raw, str) and not any(raw.strip() == i.name for i in req.intents):
        as_intent = _match(raw, intents)
        if as_intent is not None:  # "intent": "opt_out" at a node without such an intent
            return answer_of(named or as_intent, intents, "model"), True
    return (answer_of(named, intents, "model") if named else None), False


def _match(raw: object, intents: CompiledIntents) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    if raw in intents.actions:
        return raw
    folded = [n for n in intents.actions if n.casefold() == raw.strip().casefold()]
    return folded[0] if len(folded) == 1 else None
