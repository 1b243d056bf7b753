"""The `[audit]` section of config.toml (part of `config.settings.Settings`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AuditSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Events older than this are purged in the background (each worker, hourly).
    retention_days: int = Field(365, ge=1, le=36500)
    purge_interval_s: float = Field(3600.0, gt=0)
