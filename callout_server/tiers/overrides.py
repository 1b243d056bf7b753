"""Per-request model overrides shared by every tier: a whitelist, anything else is a 422."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from callout_server.i18n import invalid
from callout_server.llm import PROTECTED_BODY_KEYS, LLMRequest
from callout_server.validation import RequestModel


class Overrides(RequestModel):
    """Node-level overrides: only these keys; anything else is a 422."""

    max_tokens: int | None = Field(None, ge=1, le=8192)
    temperature: float | None = Field(None, ge=0, le=2)
    enable_thinking: bool | None = None
    reasoning_effort: str | None = Field(None, max_length=20)
    extra_params: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float | None = Field(None, ge=0.1, le=120)  # below 100 ms no model answers

    @field_validator("extra_params")
    @classmethod
    def _no_protected(cls, v: dict[str, Any]) -> dict[str, Any]:
        bad = sorted(PROTECTED_BODY_KEYS & v.keys())
        if bad:
            raise invalid("protected_keys", keys=", ".join(bad))
        return v

    def apply(self, messages: list[dict[str, Any]], **fields: Any) -> LLMRequest:
        """An LLMRequest for `messages` with these overrides (None falls back to the config)."""
        return LLMRequest(messages=messages, max_tokens=self.max_tokens,
                          temperature=self.temperature, enable_thinking=self.enable_thinking,
                          reasoning_effort=self.reasoning_effort, extra_params=self.extra_params,
                          timeout_s=self.timeout_s, **fields)
