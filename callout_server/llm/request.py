"""What a tier asks of the shared client, independent of vendor and API style."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from callout_server.config.model import Tier

# Thinking by tier when neither the call nor the configuration says: suppressed where a
# customer is waiting on the line, left to the vendor for offline script generation.
TIER_DEFAULT_THINKING: dict[Tier, bool | None] = {"nlu": False, "chat": False, "script": None}


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """One model call.

    `messages` use the Chat Completions shape (`role`/`content`, assistant `tool_calls`,
    `tool` messages with `tool_call_id`); the Responses adapter converts them. `tools` use
    the flat function-tool shape `{"type": "function", "name", "description", "parameters"}`.
    Every optional field left `None` falls back to the configuration, then the tier default.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    json_mode: bool = False
    max_tokens: int | None = None
    temperature: float | None = None
    enable_thinking: bool | None = None
    reasoning_effort: str | None = None
    extra_params: dict[str, Any] = field(default_factory=dict)
    timeout_s: float | None = None
