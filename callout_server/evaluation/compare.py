"""Does a candidate's decision agree with the recorded one? Pure functions.

Intent: equal names (the tier already maps an answer onto the offered names, case folded).
Slots: every requested slot equal after normalising: text by Unicode NFKC (full-width
digits and letters as half-width), case folding, leading/trailing whitespace dropped and
inner runs collapsed to one space; numbers by value (3 = 3.0); booleans and null as they
are. A candidate that failed decided nothing: with no fallback intent it has no answer, and
its fallback answer is no decision of the model either, so it disagrees wherever something
was asked, except with a recorded fallback to the same intent (the dialer got the same). A
recorded fallback is compared as what the dialer got.

Global intent: the one the model named (`opt_out`, ...), beside the node's intent. When
either side named one, the intent agrees only if both named the same and their node
intents agree too (the dialer acts on the global intent first); when neither did, the
intent is compared as above. A decision recorded before global intents were kept has none.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Agreement:
    intent: bool | None  # None: the node offered no intents
    slots: bool | None  # None: the node asked for no slots

    @property
    def agrees(self) -> bool:
        return self.intent is not False and self.slots is not False


def normal(value: Any) -> Any:
    """A slot value as it is compared, tagged by kind (Python holds True == 1 == 1.0)."""
    if isinstance(value, str):
        return ("text", " ".join(unicodedata.normalize("NFKC", value).casefold().split()))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return ("number", float(value))
    return ("other", repr(value))


def same_slots(recorded: dict[str, Any] | None, candidate: dict[str, Any] | None) -> bool:
    if recorded is None or candidate is None:
        return recorded is candidate
    names = recorded.keys() | candidate.keys()
    return all(normal(recorded.get(n)) == normal(candidate.get(n)) for n in names)


def compare(*, intents_offered: bool, slots_asked: bool,
            recorded_intent: str | None, recorded_slots: dict[str, Any] | None,
            candidate_intent: str | None, candidate_slots: dict[str, Any] | None,
            candidate_decided: bool, candidate_fallback: bool = False,
            recorded_fallback: bool = False, recorded_global: str | None = None,
            candidate_global: str | None = None) -> Agreement:
    if candidate_fallback and not recorded_fallback:
        candidate_decided = False
    intent = None
    if intents_offered:
        intent = candidate_decided and candidate_intent == recorded_intent
    if recorded_global is not None or candidate_global is not None:
        intent = (candidate_decided and candidate_global == recorded_global
                  and intent is not False)
    slots = None
    if slots_asked:
        slots = candidate_decided and same_slots(recorded_slots, candidate_slots)
    return Agreement(intent, slots)
