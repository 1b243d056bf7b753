"""The `[privacy]` section of config.toml (part of `config.settings.Settings`).

    [privacy]
    redact = true                       # false: stored text keeps personal data (warned at start)
    kinds = ["mobile", "landline", "id_number", "bank_card", "email"]   # + "name", "address"
    key = "${CALLOUT_PRIVACY_KEY:-}"    # pseudonym key; empty: derived from CALLOUT_SECRET_KEY
    [privacy.retention_days]            # days each data class is kept (unset: the older setting)
    nlu_inputs = 7
    call_log = 30
    evaluations = 7
    audit = 365
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from callout_server.i18n import invalid
from callout_server.redaction import ALL_KINDS, DEFAULT_KINDS, MIN_KEY_BYTES


class RetentionDays(BaseModel):
    """Days per data class; None: the older setting that already said it
    (`[calllog] nlu_inputs_days`, `[diagnostics] retention_days`, `[audit] retention_days`)."""

    model_config = ConfigDict(extra="forbid")

    nlu_inputs: int | None = Field(None, ge=0, le=3650)  # 0 keeps none
    call_log: int | None = Field(None, ge=1, le=3650)
    evaluations: int | None = Field(None, ge=1, le=3650)
    audit: int | None = Field(None, ge=1, le=36500)


class PrivacySettings(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    redact: bool = True
    kinds: list[str] = Field(default_factory=lambda: sorted(DEFAULT_KINDS))
    # The pseudonyms' key. Empty: derived from CALLOUT_SECRET_KEY (its first entry, or the
    # generated key file). Set it to keep pseudonyms the same across a secret-key rotation.
    key: SecretStr = SecretStr("")
    retention_days: RetentionDays = Field(default_factory=RetentionDays)
    # Rows deleted per statement by the retention purge (a long backlog never holds a long lock).
    purge_batch: int = Field(5000, ge=1, le=100_000)
    purge_interval_s: float = Field(3600.0, gt=0)

    @field_validator("kinds")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        unknown = sorted(set(v) - ALL_KINDS)
        if unknown:
            raise invalid("privacy_kinds_unknown", unknown=", ".join(unknown),
                          known=", ".join(sorted(ALL_KINDS)))
        return sorted(set(v))

    @field_validator("key")
    @classmethod
    def _long_enough(cls, v: SecretStr) -> SecretStr:
        raw = v.get_secret_value()
        if raw and len(raw.encode()) < MIN_KEY_BYTES:
            raise invalid("privacy_key_short", min_bytes=MIN_KEY_BYTES)
        return v
