"""Bodies and views of `/api/admin/service-keys`.

Every bound is a 422 naming the field: a limit is a positive whole number (leave it out or
send null for none), a tier one of nlu / chat / script, an expiry in the future.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from callout_server.config.model import TIERS
from callout_server.i18n import invalid
from callout_server.validation import RequestModel, UtcDatetime

_CAMPAIGN = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def _tiers(value: list[str]) -> list[str]:
    if not value:
        raise invalid("tiers_empty")
    for tier in value:
        if tier not in TIERS:
            raise invalid("unknown_tier", tier=tier[:32], known=", ".join(TIERS))
    return sorted(set(value), key=TIERS.index)


def _campaign(value: str | None) -> str | None:
    if value is not None and not _CAMPAIGN.fullmatch(value):
        raise invalid("campaign_invalid")
    return value


def _future(value: datetime | None) -> datetime | None:
    if value is not None and value <= datetime.now(UTC):
        raise invalid("expiry_past")
    return value


Tiers = Annotated[list[Annotated[str, Field(max_length=32)]],
                  Field(max_length=8), AfterValidator(_tiers)]
Campaign = Annotated[str | None, AfterValidator(_campaign)]
Name = Annotated[str, Field(min_length=1, max_length=128, pattern=r"\S")]
Rpm = Annotated[int | None, Field(ge=1, le=1_000_000)]
InFlight = Annotated[int | None, Field(ge=1, le=100_000)]
DailyTokens = Annotated[int | None, Field(ge=1, le=10**12)]
Expiry = Annotated[UtcDatetime | None, AfterValidator(_future)]


class KeyCreate(RequestModel):
    name: Name
    tiers: Tiers
    campaign: Campaign = None
    rpm: Rpm = None
    max_in_flight: InFlight = None
    daily_tokens: DailyTokens = None
    expires_at: Expiry = None


class KeyUpdate(RequestModel):
    """What is sent changes (null removes a limit or the expiry); what is left out stays.
    `version` (optional): the version that was read; a stale one is a 409."""

    name: Name | None = None
    tiers: Tiers | None = None
    campaign: Campaign = None
    rpm: Rpm = None
    max_in_flight: InFlight = None
    daily_tokens: DailyTokens = None
    expires_at: Expiry = None
    enabled: bool | None = None
    version: Annotated[int | None, Field(ge=1, le=2**31 - 1)] = None


class KeyOut(BaseModel):
    id: int
    name: str
    prefix: str
    tiers: list[str]
    campaign: str | None
    rpm: int | None
    max_in_flight: int | None
    daily_tokens: int | None
    expires_at: datetime | None
    enabled: bool
    version: int
    created_at: datetime
    created_by: str | None
    updated_at: datetime
    last_used_at: datetime | None


class KeyCreated(KeyOut):
    key: str = Field(description="the key itself: shown this once, only its hash is stored")


class KeyList(BaseModel):
    items: list[KeyOut]
