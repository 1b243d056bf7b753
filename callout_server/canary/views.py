"""A canary row as the API answers it (its rollback reason worded in the reader's language)."""

from __future__ import annotations

from collections.abc import Mapping

from callout_server.canary.models import CanaryRow
from callout_server.canary.schemas import CanaryOut, ConfigRef, Figures, Reason
from callout_server.config.models import LLMConfigRow
from callout_server.i18n import current, text


def reason_view(reason: Mapping[str, object] | None) -> Reason | None:
    if not reason:
        return None
    words = text(f"canary_reason_{reason['limit']}", current(), value=reason["value"],
                 limit=reason["max"], calls=reason["calls"])
    return Reason.model_validate({**reason, "message": words})


def _ref(config_id: int | None, configs: Mapping[int, LLMConfigRow]) -> ConfigRef:
    row = configs.get(config_id) if config_id is not None else None
    return ConfigRef(id=config_id, name=row.name if row else None,
                     model=row.model if row else None)


def canary_view(row: CanaryRow, figures: Figures,
                configs: Mapping[int, LLMConfigRow]) -> CanaryOut:
    return CanaryOut(
        id=row.id, tier=row.tier, status=row.status,  # type: ignore[arg-type]
        candidate=_ref(row.candidate_id, configs), active=_ref(row.active_id, configs),
        percent=row.percent,
        rollback={"max_fallback_rate": row.max_fallback_rate,
                  "max_error_rate": row.max_error_rate, "max_p95_ms": row.max_p95_ms,
                  "min_calls": row.min_calls},
        started_at=row.started_at, started_by=row.started_by, ended_at=row.ended_at,
        ended_by=row.ended_by, reason=reason_view(row.reason), figures=figures)
