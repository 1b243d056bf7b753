"""What each tier asks of a model when neither the call nor its configuration says.

Thinking (the HTTP contract: `enable_thinking: null` is the tier's default): suppressed where
a customer is waiting on the line (`nlu`, `chat`), left to the vendor for offline script
generation (`script`). Each tier passes its value as `LLMRequest.default_thinking`; the
shared client applies it only when neither the call nor the configuration sets a switch. The
console's "test connection" is handed this same table at start-up (`Services`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from callout_server.config.model import Tier

THINKING_DEFAULT: Mapping[Tier, bool | None] = MappingProxyType(
    {"nlu": False, "chat": False, "script": None})
