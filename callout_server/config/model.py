"""The model tiers a configuration can serve.

The configuration value a call runs with (`LLMConfig`) is the shared client's own type and
lives in `callout_server.llm.config`; this package builds it from `config.toml` and rows.
"""

from __future__ import annotations

from typing import Literal

Tier = Literal["nlu", "chat", "script"]
TIERS: tuple[Tier, ...] = ("nlu", "chat", "script")
