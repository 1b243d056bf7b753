"""Request and response bodies of the admin configuration API (the contract's shapes).

Validation happens here so that a bad value is a 422 naming the field before any service
code runs. `vendor` (explicit dialect name, overrides detection from URL/model) is an
addition the contract is silent on.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from callout_server.config.model import Tier
from callout_server.config.vendors import check_vendor
from callout_server.i18n import invalid
from callout_server.llm import (
    PROTECTED_BODY_KEYS,
    ApiStyle,
    check_api_key,
    has_url_credentials,
)
from callout_server.validation import INT4_MAX, RequestModel

MAX_TOKENS_LIMIT = 200_000
TIMEOUT_LIMIT_S = 600.0
MAX_ENDPOINTS = 32
MAX_FALLBACKS = 8


def check_base_url(value: str) -> str:
    value = value.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid("url_scheme_host")
    if parts.query or parts.fragment:
        raise invalid("url_query_fragment")
    if has_url_credentials(value):
        raise invalid("url_credentials")
    return value.rstrip("/")


def check_extra_params(value: dict[str, Any]) -> dict[str, Any]:
    bad = sorted(PROTECTED_BODY_KEYS.intersection(value))
    if bad:
        raise invalid("protected_keys", keys=", ".join(bad))
    return value


class EndpointIn(BaseModel):
    """One more replica of the configuration's model (same key, style and dialect)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True,
                              hide_input_in_errors=True)

    base_url: str = Field(max_length=2048)
    weight: float = Field(1.0, gt=0, le=1000)

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        return check_base_url(v)


class PriceIn(BaseModel):
    """A model's price per million tokens (reasoning tokens are priced as output)."""

    model_config = ConfigDict(extra="forbid", from_attributes=True)

    input_per_mtok: float = Field(ge=0, le=1_000_000, allow_inf_nan=False)
    output_per_mtok: float = Field(ge=0, le=1_000_000, allow_inf_nan=False)
    currency: str = Field(pattern=r"^[A-Z]{3}$")


def check_endpoints(endpoints: list[EndpointIn]) -> list[EndpointIn]:
    seen: set[str] = set()
    for i, ep in enumerate(endpoints):
        if ep.base_url in seen:
            raise invalid("endpoint_repeated", index=i)
        seen.add(ep.base_url)
    return endpoints


def check_fallback_ids(ids: list[int]) -> list[int]:
    if len(set(ids)) != len(ids):
        raise invalid("fallback_twice")
    return ids


class _Writable(RequestModel):
    # hide_input_in_errors: a validation error rendered anywhere never quotes a key.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True,
                              hide_input_in_errors=True)

    @field_validator("base_url", check_fields=False)
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        return None if v is None else check_base_url(v)

    @field_validator("api_key", check_fields=False)
    @classmethod
    def _key(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            return check_api_key(v)
        except ValueError:
            raise invalid("api_key_chars") from None

    @field_validator("extra_params", check_fields=False)
    @classmethod
    def _extra(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else check_extra_params(v)

    @field_validator("vendor", check_fields=False)
    @classmethod
    def _vendor(cls, v: str | None) -> str | None:
        return None if v is None else check_vendor(v)

    @field_validator("endpoints", check_fields=False)
    @classmethod
    def _endpoints(cls, v: list[EndpointIn] | None) -> list[EndpointIn] | None:
        return None if v is None else check_endpoints(v)

    @field_validator("fallback_ids", check_fields=False)
    @classmethod
    def _fallbacks(cls, v: list[int] | None) -> list[int] | None:
        return None if v is None else check_fallback_ids(v)


class ConfigValues(BaseModel):
    """A configuration's call parameters with their bounds: the one place they are written.

    Everything else follows from this class (`CALL_FIELDS`): the create, update and answer
    bodies, the config.toml section (settings.py), the snapshot value `LLMConfig` (whose
    fields a test holds equal to these), the row views and the revision diffs. A new field
    is a line here, a line in `LLMConfig`, a column (row + migration) and the console form.
    """

    name: str = Field(min_length=1, max_length=128)
    base_url: str = Field(max_length=2048)
    model: str = Field(min_length=1, max_length=256)
    api_style: ApiStyle = "chat-completions"
    timeout_s: float = Field(30.0, ge=0.1, le=TIMEOUT_LIMIT_S)
    max_tokens: int = Field(300, ge=1, le=MAX_TOKENS_LIMIT)
    temperature: float | None = Field(None, ge=0, le=2)
    enable_thinking: bool | None = None
    reasoning_effort: str | None = Field(None, pattern=r"^[a-z]{1,32}$")
    extra_params: dict[str, Any] = Field(default_factory=dict)
    vendor: str | None = Field(None, max_length=64)  # a known dialect row (check_vendor)
    # Upstream pools (docs/pools.md): replicas besides base_url, configurations of the same
    # tier to fall back to, hedging of non-streamed calls, the per-endpoint in-flight cap.
    endpoints: list[EndpointIn] = Field(default_factory=list, max_length=MAX_ENDPOINTS)
    fallback_ids: list[Annotated[int, Field(ge=1, le=INT4_MAX)]] = Field(
        default_factory=list, max_length=MAX_FALLBACKS)
    hedge_after_ms: int | None = Field(None, ge=10, le=60_000)
    max_in_flight: int | None = Field(None, ge=1, le=100_000)
    price: PriceIn | None = None  # cost on every call-log record (docs/usage.md)
    # vLLM's `priority` request field, by tier (NLU first): for a server started with
    # `--scheduling-policy priority` (vLLM refuses a non-zero priority otherwise).
    send_priority: bool = False


# The call parameters, in order; with `tier` and `is_active`, what an operator writes on a row.
CALL_FIELDS: tuple[str, ...] = tuple(ConfigValues.model_fields)
ROW_FIELDS: tuple[str, ...] = ("tier", *CALL_FIELDS, "is_active")


def call_values(source: object) -> dict[str, Any]:
    """The call parameters of a row, a snapshot value or a config.toml section."""
    return {name: getattr(source, name) for name in CALL_FIELDS}


def repeated_base_url(base_url: str, endpoints: Any) -> int | None:
    """Index of the endpoint that repeats `base_url` (already the first endpoint), if any."""
    base = base_url.rstrip("/")
    for i, ep in enumerate(endpoint_dicts(endpoints)):
        if ep["base_url"].rstrip("/") == base:
            return i
    return None


def endpoint_dicts(endpoints: Any) -> list[dict[str, Any]]:
    """Endpoints as stored and shown: [{"base_url", "weight"}] from models, rows or values."""
    out = []
    for ep in endpoints or ():
        if isinstance(ep, dict):
            out.append({"base_url": ep["base_url"], "weight": float(ep.get("weight", 1.0))})
        else:
            out.append({"base_url": ep.base_url, "weight": float(ep.weight)})
    return out


class LLMConfigCreate(_Writable, ConfigValues):
    tier: Tier
    api_key: str | None = Field(None, max_length=4096)
    is_active: bool = False


def _left_out_allowed(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s fields with their bounds, each defaulting to None to mean "left out".

    The types stay as they are, so an explicit `null` for a non-nullable field is a 422
    (pydantic does not validate a default), while leaving it out keeps the stored value.
    """
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        left_out = copy.copy(info)
        left_out.default, left_out.default_factory = None, None
        fields[name] = (info.annotation, left_out)
    return fields


class _UpdateBase(_Writable):
    """PUT body: `version` plus any writable fields; a field left out keeps its value.

    Read-only fields of the returned object are accepted and ignored, so a console may send
    back what it read.
    """

    version: int = Field(ge=1, le=INT4_MAX)
    tier: Tier = None  # type: ignore[assignment]
    api_key: str | None = Field(None, max_length=4096)
    is_active: bool = None  # type: ignore[assignment]
    # read-only, ignored
    id: int | None = Field(None, exclude=True)
    api_key_masked: str | None = Field(None, exclude=True)
    has_api_key: bool | None = Field(None, exclude=True)
    updated_at: str | None = Field(None, exclude=True)
    updated_by: str | None = Field(None, exclude=True)

    def changes(self) -> dict[str, Any]:
        """The writable fields the caller actually sent (api_key handled by the service)."""
        ignored = {"version", "id", "api_key_masked", "has_api_key", "updated_at", "updated_by"}
        return {f: getattr(self, f) for f in self.model_fields_set if f not in ignored}


if TYPE_CHECKING:  # what the derived class below is, for the type checker
    class LLMConfigUpdate(_UpdateBase, ConfigValues): ...
else:
    LLMConfigUpdate = create_model("LLMConfigUpdate", __base__=_UpdateBase,
                                   __doc__=_UpdateBase.__doc__, __module__=__name__,
                                   **_left_out_allowed(ConfigValues))


class LLMConfigOut(ConfigValues):
    id: int | None
    tier: Tier
    api_key_masked: str
    has_api_key: bool
    is_active: bool
    version: int
    updated_at: datetime | None
    updated_by: str | None


class LLMConfigList(BaseModel):
    items: list[LLMConfigOut]


class RevisionOut(BaseModel):
    id: int
    config_id: int
    config_version: int | None
    tier: str
    action: str
    actor: str | None
    at: datetime
    generation: int | None
    fields: list[str]
    changes: dict[str, Any]


class RevisionList(BaseModel):
    items: list[RevisionOut]


class ActiveTierOut(BaseModel):
    source: Literal["db", "file"]
    config: LLMConfigOut
    error: str | None = None  # the tier's database row is unusable (e.g. undecryptable key)


class ActiveOut(BaseModel):
    generation: int
    tiers: dict[str, ActiveTierOut]


class ConnectionDraft(_Writable, ConfigValues):
    """The configuration form's values before they are saved: test them, list the models.

    `config_id`: the stored configuration being edited, whose key is used when `api_key`
    is left out (and only for its own origins: connectivity/service.resolve_key).
    """

    name: str = Field("", max_length=128)  # a draft may be unnamed yet
    tier: Tier = "nlu"
    api_key: str | None = Field(None, max_length=4096)
    config_id: int | None = Field(None, ge=1, le=INT4_MAX)


class ModelsRequest(_Writable):
    """Where to list the served models (`GET <base_url>/models`), and with which key."""

    base_url: str = Field(max_length=2048)
    api_key: str | None = Field(None, max_length=4096)
    config_id: int | None = Field(None, ge=1, le=INT4_MAX)


class ModelList(BaseModel):
    """The models an endpoint serves (ids, sorted). `ok` false: `diagnostic` says why the
    request failed, or `reason` is `not_a_model_list` when the answer was no model list."""

    ok: bool
    models: list[str] = []
    latency_ms: int | None = None
    diagnostic: dict[str, Any] | None = None
    reason: str | None = None


class ConnectionCheck(BaseModel):
    """One thing the test request showed (connectivity/checks.py): a code and its numbers."""

    name: Literal["reachable", "auth", "model", "thinking", "answer"]
    status: Literal["ok", "warn", "fail", "info", "skipped"]
    code: str
    values: dict[str, Any] = {}


class EndpointTestResult(BaseModel):
    base_url: str  # credentials masked
    ok: bool
    latency_ms: int | None
    diagnostic: dict[str, Any] | None


class ConnectionTestResult(BaseModel):
    """The configuration's own base URL in the top-level fields (`ok`: every endpoint
    answered); each endpoint of the pool, base URL first, in `endpoints`."""

    ok: bool
    latency_ms: int | None
    model: str
    thinking_suppressed: bool | None
    # Only what the operator can act on: never the test's own small output cap.
    diagnostic: dict[str, Any] | None
    checks: list[ConnectionCheck] = []
    test_max_tokens: int | None = None  # the test's own output cap
    endpoints: list[EndpointTestResult] = []
