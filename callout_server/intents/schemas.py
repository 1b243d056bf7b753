"""Bodies of the global intents' routes (the contract's shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator

from callout_server.i18n import invalid
from callout_server.phrases import GlobalIntent, IntentRules
from callout_server.validation import RequestModel

_NAME = r"^[A-Za-z0-9_\-.:\u4e00-\u9fff]{1,64}$"  # an intent's name, as the decide route's
Action = Literal["end_call", "transfer", "flag"]
MAX_INTENTS = 50
MAX_PHRASES = 2000


class GlobalIntentIn(RequestModel):
    name: str = Field(pattern=_NAME)
    description: str = Field("", max_length=500)
    phrases: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(
        max_length=MAX_PHRASES)
    action: Action
    enabled: bool = True

    def value(self) -> GlobalIntent:
        return GlobalIntent(self.name, self.description, self.action, self.enabled,
                            tuple(self.phrases))


class GlobalIntentsPut(RequestModel):
    items: list[GlobalIntentIn] = Field(max_length=MAX_INTENTS)
    version: int = Field(ge=0)

    @field_validator("items")
    @classmethod
    def _usable(cls, items: list[GlobalIntentIn]) -> list[GlobalIntentIn]:
        names = [i.name for i in items]
        if len(names) != len(set(names)):
            raise invalid("names_unique", kind="items")
        # Every phrase must be able to match: one that folds to nothing (punctuation only,
        # a lone `*`) is refused, naming it, rather than stored to never fire.
        rules = IntentRules([i.value().phrases_for_rules() for i in items])
        if rules.ignored:
            intent, phrase = rules.ignored[0]
            raise invalid("phrase_matches_nothing", intent=intent, phrase=phrase)
        return items


class GlobalIntentOut(BaseModel):
    name: str
    description: str
    phrases: list[str]
    action: Action
    enabled: bool


class GlobalIntentsOut(BaseModel):
    items: list[GlobalIntentOut]
    version: int
    updated_by: str | None = None
    updated_at: datetime | None = None


class TryRequest(RequestModel):
    utterance: str = Field(max_length=4000)
    # An unsaved list (the console's form) to try instead of the one every worker serves.
    items: list[GlobalIntentIn] | None = Field(None, max_length=MAX_INTENTS)


class TriedHit(BaseModel):
    intent: str
    action: str | None
    phrase: str  # the phrase as configured
    start: int  # where in the utterance it was said
    end: int
    text: str


class TriedStop(BaseModel):
    intent: str
    phrase: str
    start: int
    end: int
    reason: Literal["negated", "context"]
    cue: str  # the negation cue or the context phrase that stopped it
    cue_start: int
    cue_end: int


class TryResult(BaseModel):
    """What the rules answer for one sentence, and why."""

    global_intent: TriedHit | None
    hits: list[TriedHit]
    stopped: list[TriedStop]
    version: int
