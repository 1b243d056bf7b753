"""The shared LLM client: one OpenAI-compatible client under the NLU, chat and script tiers.

    from callout_server.llm import LLMClient, LLMRequest, LLMCallError

    client = LLMClient()
    completion = await client.complete(cfg, LLMRequest(messages=[...], json_mode=True))
    async with client.stream(cfg, req) as stream:
        async for event in stream:  # TextDelta | ReasoningDelta | ToolCall | Usage | Finish
            ...

Everything importable from here is the package's public surface (`tests/test_llm_exports.py`
pins it); other modules are internal to the package, and modules outside it import only
this one (an import contract in `pyproject.toml`):

    the client      LLMClient, LLMConfig, Endpoint, Price, ApiStyle, LLMRequest, Completion, LLMStream
    events          Event, TextDelta, ReasoningDelta, ToolCall, Usage, Finish
    verdicts        Diagnostic, Locale, LLMCallError, RETRY_AFTER_MAX_S (the longest wait
                    a vendor's Retry-After is believed for)
    vendors         DIALECTS, Dialect, resolve_dialect, effective_thinking, PROTECTED_BODY_KEYS
    keys and URLs   MASK, mask_api_key, mask_url, check_api_key, check_no_url_credentials,
                    has_url_credentials, same_origin
    text            SentenceBatcher, join_sentences, speakable (chat speech);
                    extract_json_object, JSONExtractionError (NLU answers)
    time limits     time_limit, time_limit_at, TimeLimit (asyncio.timeout's and timeout_at's
                    behaviour, one loop timer for all calls)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from callout_server.llm.client import Completion, LLMClient
from callout_server.llm.config import (
    PROTECTED_BODY_KEYS,
    TIER_PRIORITY,
    ApiStyle,
    Endpoint,
    LLMConfig,
    Price,
)
from callout_server.llm.credentials import (
    check_api_key,
    check_no_url_credentials,
    has_url_credentials,
    same_origin,
)
from callout_server.llm.diagnostics import Diagnostic, Locale
from callout_server.llm.dialects import DIALECTS, Dialect, resolve_dialect
from callout_server.llm.errors import LLMCallError
from callout_server.llm.events import Event, Finish, ReasoningDelta, TextDelta, ToolCall, Usage
from callout_server.llm.masking import MASK, mask_api_key, mask_url
from callout_server.llm.request import LLMRequest
from callout_server.llm.sentence_batcher import SentenceBatcher
from callout_server.llm.sentences import join_sentences
from callout_server.llm.speech import speakable
from callout_server.llm.stream import LLMStream
from callout_server.llm.targets import Refusal, TargetPolicy
from callout_server.llm.thinking import effective_thinking
from callout_server.llm.timeouts import TimeLimit, time_limit, time_limit_at
from callout_server.llm.transport import RETRY_AFTER_MAX_S, PoolLimits

if TYPE_CHECKING:
    from callout_server.llm.json_extract import JSONExtractionError, extract_json_object

# json_extract is a colleague's module on a different import path (NLU only); loading it
# lazily keeps `import callout_server.llm` cheap and independent of it.
_LAZY = {
    "extract_json_object": "callout_server.llm.json_extract",
    "JSONExtractionError": "callout_server.llm.json_extract",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DIALECTS",
    "MASK",
    "PROTECTED_BODY_KEYS",
    "RETRY_AFTER_MAX_S",
    "TIER_PRIORITY",
    "ApiStyle",
    "Completion",
    "Diagnostic",
    "Dialect",
    "Endpoint",
    "Event",
    "Finish",
    "JSONExtractionError",
    "LLMCallError",
    "LLMClient",
    "LLMConfig",
    "LLMRequest",
    "LLMStream",
    "Locale",
    "PoolLimits",
    "Price",
    "ReasoningDelta",
    "Refusal",
    "SentenceBatcher",
    "TargetPolicy",
    "TextDelta",
    "TimeLimit",
    "ToolCall",
    "Usage",
    "check_api_key",
    "check_no_url_credentials",
    "effective_thinking",
    "extract_json_object",
    "has_url_credentials",
    "join_sentences",
    "mask_api_key",
    "mask_url",
    "resolve_dialect",
    "same_origin",
    "speakable",
    "time_limit",
    "time_limit_at",
]
