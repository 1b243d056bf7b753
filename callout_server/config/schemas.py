"""Request and response bodies of the admin configuration API (the contract's shapes).

Validation happens here so that a bad value is a 422 naming the field before any service
code runs. `vendor` (explicit dialect name, overrides detection from URL/model) is an
addition the contract is silent on.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from callout_server.config.model import Tier
from callout_server.config.vendors import check_vendor
from callout_server.llm.config import PROTECTED_BODY_KEYS, ApiStyle
from callout_server.llm.credentials import check_api_key, check_no_url_credentials
from callout_server.validation import INT4_MAX, RequestModel

MAX_TOKENS_LIMIT = 200_000
TIMEOUT_LIMIT_S = 600.0


def check_base_url(value: str) -> str:
    value = value.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    if parts.query or parts.fragment:
        raise ValueError("must not carry a query string or fragment")
    return check_no_url_credentials(value).rstrip("/")


def check_extra_params(value: dict[str, Any]) -> dict[str, Any]:
    bad = sorted(PROTECTED_BODY_KEYS.intersection(value))
    if bad:
        raise ValueError(f"may not override {', '.join(bad)}")
    return value


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
        return None if v is None else check_api_key(v)

    @field_validator("extra_params", check_fields=False)
    @classmethod
    def _extra(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else check_extra_params(v)

    @field_validator("vendor", check_fields=False)
    @classmethod
    def _vendor(cls, v: str | None) -> str | None:
        return None if v is None else check_vendor(v)


_NAME = Field(min_length=1, max_length=128)
_MODEL = Field(min_length=1, max_length=256)
_EFFORT = Field(None, pattern=r"^[a-z]{1,32}$")
_VENDOR = Field(None, pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")


class LLMConfigCreate(_Writable):
    tier: Tier
    name: str = _NAME
    base_url: str = Field(max_length=2048)
    api_key: str | None = Field(None, max_length=4096)
    model: str = _MODEL
    api_style: ApiStyle = "chat-completions"
    timeout_s: float = Field(30.0, ge=0.1, le=TIMEOUT_LIMIT_S)
    max_tokens: int = Field(300, ge=1, le=MAX_TOKENS_LIMIT)
    temperature: float | None = Field(None, ge=0, le=2)
    enable_thinking: bool | None = None
    reasoning_effort: str | None = _EFFORT
    extra_params: dict[str, Any] = Field(default_factory=dict)
    vendor: str | None = _VENDOR
    is_active: bool = False


class LLMConfigUpdate(_Writable):
    """PUT body: `version` plus any writable fields; a field left out keeps its value.

    Non-nullable fields default to None only to detect "left out" (`model_fields_set`);
    an explicit `null` for them is a 422. Read-only fields of the returned object are
    accepted and ignored, so a console may send back what it read.
    """

    version: int = Field(ge=1, le=INT4_MAX)
    tier: Tier = None  # type: ignore[assignment]
    name: str = Field(None, min_length=1, max_length=128)  # type: ignore[assignment]
    base_url: str = Field(None, max_length=2048)  # type: ignore[assignment]
    api_key: str | None = Field(None, max_length=4096)
    model: str = Field(None, min_length=1, max_length=256)  # type: ignore[assignment]
    api_style: ApiStyle = None  # type: ignore[assignment]
    timeout_s: float = Field(None, ge=0.1, le=TIMEOUT_LIMIT_S)  # type: ignore[assignment]
    max_tokens: int = Field(None, ge=1, le=MAX_TOKENS_LIMIT)  # type: ignore[assignment]
    temperature: float | None = Field(None, ge=0, le=2)
    enable_thinking: bool | None = None
    reasoning_effort: str | None = _EFFORT
    extra_params: dict[str, Any] = None  # type: ignore[assignment]
    vendor: str | None = _VENDOR
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


class LLMConfigOut(BaseModel):
    id: int | None
    tier: Tier
    name: str
    base_url: str
    api_key_masked: str
    has_api_key: bool
    model: str
    api_style: ApiStyle
    timeout_s: float
    max_tokens: int
    temperature: float | None
    enable_thinking: bool | None
    reasoning_effort: str | None
    extra_params: dict[str, Any]
    vendor: str | None
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


class ConnectionTestResult(BaseModel):
    ok: bool
    latency_ms: int | None
    model: str
    thinking_suppressed: bool | None
    diagnostic: dict[str, Any] | None
