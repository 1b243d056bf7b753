"""What a caller asks of the shared client, independent of vendor and API style."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """One model call.

    `messages` use the Chat Completions shape (`role`/`content`, assistant `tool_calls`,
    `tool` messages with `tool_call_id`); the Responses adapter converts them. `tools` use
    the flat function-tool shape `{"type": "function", "name", "description", "parameters"}`.
    Every optional field left `None` falls back to the configuration. Thinking then falls
    back to `default_thinking`: the caller's own policy (each tier passes its default),
    where None leaves it to the vendor.
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
    default_thinking: bool | None = None
