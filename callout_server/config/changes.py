"""What a configuration write leaves behind: its revision row and its audit event.

Both are written in the write's own session (one unit of work with the change itself), and
neither ever holds key material: the key's change is "set", "replaced" or "cleared", and
credentials in base URLs are masked (old and new).
"""

from __future__ import annotations

from typing import Any

from callout_server.audit.trail import Actor, record
from callout_server.config.models import LLMConfigRevision, LLMConfigRow
from callout_server.config.repository import ConfigRepository
from callout_server.db.base import utcnow
from callout_server.llm import mask_url

# Fields whose values the audit detail names only as changed: free-form JSON may hold anything.
_OPAQUE_FIELDS = frozenset({"extra_params"})


def touch(row: LLMConfigRow, actor: str) -> None:
    """A new version of the row, by `actor`, now."""
    row.version += 1
    row.updated_at = utcnow()
    row.updated_by = actor


async def add_revision(repo: ConfigRepository, row: LLMConfigRow, action: str,
                       changes: dict[str, Any], actor: str, generation: int) -> None:
    await repo.add_revision(LLMConfigRevision(
        config_id=row.id, config_version=row.version, tier=row.tier, action=action,
        actor=actor, at=utcnow(), generation=generation, fields=sorted(changes),
        changes=masked_changes(changes)))


def audit(repo: ConfigRepository, actor: Actor, action: str, row: LLMConfigRow,
          changes: dict[str, Any], deactivated: list[int]) -> None:
    """The audit event of a configuration write, in the write's own session.

    The detail says which configuration (tier, name, version) and what changed: old and
    new values for plain fields (base URLs masked), "set"/"replaced"/"cleared" for the key,
    "changed" for extra_params; never key material.
    """
    detail: dict[str, Any] = {"tier": row.tier, "name": row.name, "model": row.model,
                              "version": row.version}
    changed: dict[str, Any] = {}
    for field, change in masked_changes(changes).items():
        if field == "api_key":
            changed[field] = change.get("change", "changed")
        elif field in _OPAQUE_FIELDS:
            changed[field] = "changed"
        elif action == "config.create":
            changed[field] = change.get("new")
        else:
            changed[field] = change
    if action == "config.create":
        changed = {k: v for k, v in changed.items() if k in ("base_url", "is_active", "api_key")}
    if changed:
        detail["changes"] = changed
    if deactivated:
        detail["deactivated"] = [f"config:{i}" for i in deactivated]
    record(repo.session, actor, action, target=f"config:{row.id}", detail=detail)


def masked_changes(changes: dict[str, Any]) -> dict[str, Any]:
    """Revision `changes` with credentials in base_url values masked (old and new)."""
    url = changes.get("base_url")
    if not isinstance(url, dict):
        return changes
    return {**changes, "base_url": {k: mask_url(v) if isinstance(v, str) else v
                                    for k, v in url.items()}}
