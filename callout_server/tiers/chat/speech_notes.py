"""What a run's speech guard and filler did, for its call-log record (the `speech` column).

    notes = SpeechNotes()
    notes.guarded("replace", "finance"); notes.filler = True
    notes.value()   # {"guard": {"replace": 1}, "lexicons": {"finance": 1}, "filler": True}

Counts only, never the term nor the sentence: what was done (`guard`: action -> sentences),
which lexicon did it (`lexicons`: name -> sentences; `mask_pii` has none) and whether this
run spoke the turn's filler. `value()` is None when neither happened, so a plain turn's
record stays NULL. The same counts are on the metrics (`callout_chat_guard_actions_total`,
`callout_chat_fillers_total`); the record says which call and which configuration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class SpeechNotes:
    guard: dict[str, int] = field(default_factory=dict)
    lexicons: dict[str, int] = field(default_factory=dict)
    filler: bool = False

    def guarded(self, action: str, lexicon: str | None) -> None:
        self.guard[action] = self.guard.get(action, 0) + 1
        if lexicon is not None:
            self.lexicons[lexicon] = self.lexicons.get(lexicon, 0) + 1

    def value(self) -> dict[str, Any] | None:
        if not self.guard and not self.filler:
            return None
        out: dict[str, Any] = {}
        if self.guard:
            out["guard"] = dict(self.guard)
        if self.lexicons:
            out["lexicons"] = dict(self.lexicons)
        if self.filler:
            out["filler"] = True
        return out
