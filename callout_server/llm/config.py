"""The configuration one model call runs with: the shared client's own input value.

Built by the configuration layer from a `config.toml` section or a database row; the API key
is held decrypted only here, in memory, and `repr()` never shows it (nor credentials in
`base_url`). The client reads the
call parameters; `tier`, `name`, `id`, `version` and `source` say where the value came from
and are carried for the callers (call log, console), never read by the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Literal

from callout_server.llm.masking import mask_url

ApiStyle = Literal["chat-completions", "responses"]
API_STYLES: tuple[str, ...] = ("chat-completions", "responses")
# Keys extra_params (and node overrides) may never override: they define the call itself.
PROTECTED_BODY_KEYS = frozenset({"model", "messages", "input", "stream"})
# The order the tiers are served in when they contend for one server, lower first (NLU: a
# caller waits on the line; scripts: an operator at a desk). The pools' slot queue and the
# `priority` request field (`LLMConfig.send_priority`) both follow it; another tier: 1.
TIER_PRIORITY: Mapping[str, int] = MappingProxyType({"nlu": 0, "chat": 1, "script": 2})


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One more replica of a configuration: same model, key, style and dialect, another URL."""

    base_url: str
    weight: float = 1.0

    def __repr__(self) -> str:
        return f"Endpoint(base_url={mask_url(self.base_url)!r}, weight={self.weight!r})"


@dataclass(frozen=True, slots=True)
class Price:
    """What a model's tokens cost, per million; reasoning tokens are output tokens."""

    input_per_mtok: float
    output_per_mtok: float
    currency: str

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None,
             reasoning_tokens: int | None = None) -> float:
        """The cost of one call. `completion_tokens` as vendors report it already includes
        reasoning (OpenAI-style usage); reasoning reported beside an empty completion count
        is priced as output all the same."""
        output = max(completion_tokens or 0, reasoning_tokens or 0)
        return ((prompt_tokens or 0) * self.input_per_mtok
                + output * self.output_per_mtok) / 1_000_000


def _price(value: Any) -> Price | None:
    """A Price from a row's JSON object, a pydantic model or a Price."""
    if value is None or isinstance(value, Price):
        return value
    get = value.get if isinstance(value, dict) else lambda k: getattr(value, k)
    return Price(float(get("input_per_mtok")), float(get("output_per_mtok")),
                 str(get("currency")))


def _endpoint(value: Any) -> Endpoint:
    """An Endpoint from a row's JSON object, a pydantic model or an Endpoint."""
    if isinstance(value, Endpoint):
        return value
    if isinstance(value, dict):
        return Endpoint(str(value["base_url"]), float(value.get("weight", 1.0)))
    return Endpoint(str(value.base_url), float(getattr(value, "weight", 1.0)))


@dataclass(frozen=True, slots=True)
class LLMConfig:
    tier: str  # the caller's label for its slot; the client reads it only to pick a pool
    name: str
    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    api_style: ApiStyle = "chat-completions"
    timeout_s: float = 30.0
    max_tokens: int = 300
    temperature: float | None = None
    enable_thinking: bool | None = None  # None: the request's default (see LLMRequest)
    reasoning_effort: str | None = None
    extra_params: dict[str, Any] = field(default_factory=dict)
    vendor: str | None = None  # explicit dialect name; wins over detection
    # The pool (callout_server.upstream reads these; the client itself calls one URL):
    endpoints: tuple[Endpoint, ...] = ()  # replicas besides base_url (which has weight 1)
    fallback_ids: tuple[int, ...] = ()  # configurations of the same tier to fall back to
    hedge_after_ms: int | None = None  # non-streamed: a second request after this long
    max_in_flight: int | None = None  # per endpoint, per worker
    price: Price | None = None  # what the call log costs a call at (None: unpriced)
    send_priority: bool = False  # the tier's priority in the body (dialects with the field)
    id: int | None = None  # database row id; None for a config.toml section
    version: int = 0
    source: Literal["db", "file"] = "file"

    def __post_init__(self) -> None:
        # Rows hold JSON lists and the admin API pydantic models: one shape from here on.
        if not (isinstance(self.endpoints, tuple)
                and all(type(e) is Endpoint for e in self.endpoints)):
            object.__setattr__(self, "endpoints",
                               tuple(_endpoint(e) for e in self.endpoints or ()))
        if self.price is not None and type(self.price) is not Price:
            object.__setattr__(self, "price", _price(self.price))
        if not isinstance(self.fallback_ids, tuple):
            object.__setattr__(self, "fallback_ids", tuple(int(i) for i in self.fallback_ids or ()))

    def __repr__(self) -> str:  # dataclass keeps this one: the base URL is shown masked
        shown = ", ".join(
            f"{f.name}={mask_url(self.base_url) if f.name == 'base_url' else getattr(self, f.name)!r}"
            for f in fields(self) if f.repr)
        return f"LLMConfig({shown})"
