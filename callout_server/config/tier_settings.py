"""The model tiers' settings: `[llm.<tier>]` (a configuration written in the file) and
`[limits.<tier>]` (the tier's connection pool and answer size), and the base every
settings section shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from callout_server.config.model import TIERS, Tier
from callout_server.config.schemas import (
    ConfigValues,
    EndpointIn,
    call_values,
    check_endpoints,
    repeated_base_url,
)
from callout_server.config.vendors import check_vendor
from callout_server.i18n import invalid
from callout_server.llm import (
    LLMConfig,
    PoolLimits,
    check_api_key,
    check_no_url_credentials,
)


class Section(BaseModel):
    # Error messages name the key, never its value: settings hold keys, tokens, passwords.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)


class LLMSection(Section, ConfigValues):
    """A `[llm.<tier>]` section: the same fields and bounds as a stored configuration."""

    name: str = Field("", max_length=128)  # "" -> "<tier>-file"
    api_key: SecretStr = SecretStr("")

    @field_validator("vendor")
    @classmethod
    def _vendor(cls, v: str | None) -> str | None:
        return check_vendor(v)  # a misspelt name is a start-up error, not silently ignored

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, v: str) -> str:
        return check_no_url_credentials(v)

    @field_validator("endpoints")
    @classmethod
    def _replicas(cls, v: list[EndpointIn]) -> list[EndpointIn]:
        return check_endpoints(v)

    @field_validator("fallback_ids")
    @classmethod
    def _no_fallbacks(cls, v: list[int]) -> list[int]:
        if v:  # they name stored configurations, which a file cannot vouch for
            raise invalid("fallback_ids_in_file")
        return v

    @model_validator(mode="after")
    def _not_twice(self) -> LLMSection:
        if repeated_base_url(self.base_url, self.endpoints) is not None:
            raise invalid("endpoint_repeats_base_url")
        return self

    @field_validator("api_key")
    @classmethod
    def _sendable_key(cls, v: SecretStr) -> SecretStr:
        # Stripped like the admin API does: a key file read into ${VAR} often ends in "\n".
        return SecretStr(check_api_key(v.get_secret_value().strip()))

    def to_config(self, tier: Tier) -> LLMConfig:
        values = call_values(self) | {"name": self.name or f"{tier}-file",
                                      "extra_params": dict(self.extra_params)}
        return LLMConfig(tier=tier, api_key=self.api_key.get_secret_value(), source="file",
                         **values)


class LLMSections(Section):
    nlu: LLMSection
    chat: LLMSection
    script: LLMSection


class TierLimits(Section):
    """`[limits.<tier>]`: the tier's own connection pool to its upstreams, per worker."""

    # Upstream connections this worker keeps for the tier at most; a call beyond them waits
    # for one inside its own time limits. Separate per tier: a chat burst never takes NLU's.
    max_connections: int = Field(ge=1, le=65_536)
    # The largest answer read (a body streamed or not, the test connection's included):
    # an upstream sending more is cut off unread with `response_too_large`.
    max_response_bytes: int = Field(ge=64 * 1024, le=1024 * 1024 * 1024)

    def pool(self) -> PoolLimits:
        return PoolLimits(self.max_connections, self.max_response_bytes)


# A decision is a few hundred bytes (with reasoning a few KB); a streamed chat reply costs
# ~200 bytes of framing a token; a script of max_tokens 200,000 with reasoning, streamed,
# ~50 MB. The pools: one worker serves ~1,800 decisions/s (bench/README.md) and streams
# ~500 chat turns at 25 tokens/s on one core (77 us a delta); script calls are rare.
class NluLimits(TierLimits):
    max_connections: int = Field(512, ge=1, le=65_536)
    max_response_bytes: int = Field(1024 * 1024, ge=64 * 1024, le=1024 * 1024 * 1024)


class ChatLimits(TierLimits):
    max_connections: int = Field(1024, ge=1, le=65_536)
    max_response_bytes: int = Field(8 * 1024 * 1024, ge=64 * 1024, le=1024 * 1024 * 1024)


class ScriptLimits(TierLimits):
    max_connections: int = Field(64, ge=1, le=65_536)
    max_response_bytes: int = Field(64 * 1024 * 1024, ge=64 * 1024, le=1024 * 1024 * 1024)


class LimitsSettings(Section):
    nlu: NluLimits = Field(default_factory=NluLimits)
    chat: ChatLimits = Field(default_factory=ChatLimits)
    script: ScriptLimits = Field(default_factory=ScriptLimits)

    def pools(self) -> dict[str, PoolLimits]:
        return {tier: getattr(self, tier).pool() for tier in TIERS}
