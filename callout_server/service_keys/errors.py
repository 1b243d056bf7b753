"""Errors of service keys and their limits; each carries its status and stable code.

    ApiError
      KeyNotFound          404 not_found
      KeyVersionConflict   409 version_conflict     stale `version`, nothing changed
      TierRefused          403 forbidden            a tier outside the key's scope
      LimitExceeded        429 rate_limited | too_many_in_flight | budget_exhausted,
                           with Retry-After (seconds until the limit has room again)
"""

from __future__ import annotations

from callout_server.errors import ApiError, Conflict, Forbidden, NotFound
from callout_server.i18n import msg


class KeyNotFound(NotFound):
    def __init__(self, key_id: int) -> None:
        super().__init__(msg("service_key_not_found", key_id=key_id), key_id=key_id)


class KeyVersionConflict(Conflict):
    code = "version_conflict"

    def __init__(self, key_id: int, sent: int, current: int) -> None:
        super().__init__(msg("service_key_version_conflict", key_id=key_id, sent=sent,
                             current=current), key_id=key_id, current_version=current)


class TierRefused(Forbidden):
    def __init__(self, tier: str, tiers: frozenset[str]) -> None:
        super().__init__(msg("service_key_tier", tier=tier, tiers=", ".join(sorted(tiers))))


# The stable codes of a 429 (each also the catalogue key of its message).
RATE_LIMITED, TOO_MANY_IN_FLIGHT, BUDGET_EXHAUSTED = (
    "rate_limited", "too_many_in_flight", "budget_exhausted")


class LimitExceeded(ApiError):
    status = 429

    def __init__(self, code: str, limit: int, retry_after_s: int) -> None:
        self.retry_after_s = max(1, retry_after_s)
        super().__init__(msg(code, limit=limit, retry_after_s=self.retry_after_s), code=code,
                         limit=limit, retry_after_s=self.retry_after_s)
