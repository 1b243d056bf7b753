"""Request and answer of `POST /api/nlu/decide` (the contract's shapes)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from callout_server.i18n import invalid
from callout_server.tiers.overrides import Overrides
from callout_server.validation import RequestModel

SlotType = Literal["string", "number", "integer", "boolean", "enum"]
_NAME = r"^[A-Za-z0-9_\-.:\u4e00-\u9fff]{1,64}$"


class Intent(RequestModel):
    name: str = Field(pattern=_NAME)
    description: str = Field("", max_length=500)


class Slot(RequestModel):
    name: str = Field(pattern=_NAME)
    description: str = Field("", max_length=500)
    type: SlotType = "string"
    values: list[Annotated[str, Field(max_length=200)]] | None = Field(None, max_length=100)

    @model_validator(mode="after")
    def _enum_needs_values(self) -> Slot:
        if self.type == "enum" and not self.values:
            raise invalid("enum_needs_values", slot=self.name)
        return self


class Turn(RequestModel):
    role: Literal["assistant", "user"]
    content: str = Field(max_length=4000)


class DecideRequest(RequestModel):
    call_id: str | None = Field(None, max_length=200)
    node_id: str | None = Field(None, max_length=200)
    utterance: str = Field(max_length=4000)
    context: list[Turn] = Field(default_factory=list, max_length=50)
    intents: list[Intent] = Field(default_factory=list, max_length=100)
    slots: list[Slot] = Field(default_factory=list, max_length=50)
    instructions: str | None = Field(None, max_length=8000)
    # Bounded like an intent's name: it is answered as `intent` (and stored in the call log).
    fallback_intent: str | None = Field(None, pattern=_NAME)
    overrides: Overrides = Field(default_factory=Overrides)
    deadline_ms: int | None = Field(None, ge=50, le=120_000)
    # False: this node does not check the global intents (no rule, none offered the model).
    global_intents: bool = True

    @field_validator("utterance")
    @classmethod
    def _said_something(cls, v: str) -> str:
        # Silence (ASR gave nothing) is no decision for a model to guess: the dialer's own
        # no-input branch, told apart from a model failure (docs/nlu.md).
        if not v.strip():
            raise invalid("utterance_blank")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> DecideRequest:
        if not self.intents and not self.slots:
            raise invalid("intents_or_slots")
        for kind, items in (("intents", self.intents), ("slots", self.slots)):
            names = [i.name for i in items]
            if len(names) != len(set(names)):
                raise invalid("names_unique", kind=kind)
        if self.fallback_intent is not None and self.intents and \
                self.fallback_intent not in {i.name for i in self.intents}:
            raise invalid("fallback_not_offered")
        return self


class GlobalIntentAnswer(BaseModel):
    name: str
    action: Literal["end_call", "transfer", "flag"]
    source: Literal["rule", "model"]


class Decision(BaseModel):
    intent: str | None
    confidence: float | None
    slots: dict[str, Any]
    fallback: bool
    model: str | None  # None: the phrase rules answered (a global intent), no model call
    latency_ms: int
    diagnostic: dict[str, Any] | None
    global_intent: GlobalIntentAnswer | None = None


AnsweredBy = Literal["human", "voicemail", "carrier", "ivr", "unknown"]
CarrierStatus = Literal["powered_off", "vacant", "suspended", "busy", "unreachable"]


class ScreenRequest(RequestModel):
    """`POST /api/nlu/screen`: the first thing heard after the line connected."""

    call_id: str | None = Field(None, max_length=200)
    # Blank is an answer (nothing but noise was heard: `unknown`), not a refusal.
    utterance: str = Field(max_length=4000)
    deadline_ms: int | None = Field(None, ge=50, le=120_000)


class Screened(BaseModel):
    answered_by: AnsweredBy
    carrier_status: CarrierStatus | None
    source: Literal["rule", "model", "fallback"]
    latency_ms: int
    diagnostic: dict[str, Any] | None
