"""Draft storage: SQL for `callout.scripts`, optimistic locking on `version`.

Every write records its audit event in its own transaction (`audit.trail.record`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select, update

from callout_server.audit.trail import Actor, record
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.errors import Conflict, NotFound
from callout_server.i18n import msg
from callout_server.tiers.script.models import ScriptDraft
from callout_server.tiers.script.schemas import Draft, DraftUpdate
from callout_server.validation import storable


def to_schema(row: ScriptDraft) -> Draft:
    return Draft(id=row.id, title=row.title, brief=row.brief, script=row.script,
                 reasoning=row.reasoning, status=row.status, model=row.model,
                 config_id=row.config_id, version=row.version, created_at=row.created_at,
                 updated_at=row.updated_at, updated_by=row.updated_by,
                 usage={"prompt_tokens": row.prompt_tokens,
                        "completion_tokens": row.completion_tokens,
                        "reasoning_tokens": row.reasoning_tokens})


class DraftStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, actor: Actor, **values: Any) -> int:
        """Store a generated script; the model's text is made storable first."""
        values = {k: storable(v) if isinstance(v, str) else v for k, v in values.items()}
        now = utcnow()
        async with self._db.session() as s:
            row = ScriptDraft(version=1, created_at=now, updated_at=now,
                              updated_by=actor.name, **values)
            s.add(row)
            await s.flush()
            record(s, actor, "draft.create", target=f"draft:{row.id}",
                   detail={"title": row.title, "status": row.status, "model": row.model})
            return row.id

    async def list(self, *, limit: int, before_id: int | None) -> list[Draft]:
        q = select(ScriptDraft).order_by(ScriptDraft.id.desc()).limit(limit)
        if before_id is not None:
            q = q.where(ScriptDraft.id < before_id)
        async with self._db.session() as s:
            return [to_schema(r) for r in (await s.scalars(q)).all()]

    async def get(self, draft_id: int) -> Draft:
        async with self._db.session() as s:
            row = await s.get(ScriptDraft, draft_id)
            if row is None:
                raise NotFound(msg("draft_not_found", draft_id=draft_id))
            return to_schema(row)

    async def update(self, draft_id: int, change: DraftUpdate, actor: Actor) -> Draft:
        values = change.model_dump(exclude={"version"}, exclude_none=True)
        async with self._db.session() as s:
            # One conditional UPDATE: a concurrent save cannot slip in between check and write.
            result = await s.execute(
                update(ScriptDraft)
                .where(ScriptDraft.id == draft_id, ScriptDraft.version == change.version)
                .values(**values, version=ScriptDraft.version + 1, updated_at=utcnow(),
                        updated_by=actor.name)
                .returning(ScriptDraft.id))
            if result.scalar_one_or_none() is not None:
                record(s, actor, "draft.update", target=f"draft:{draft_id}",
                       detail={"fields": sorted(values), "version": change.version + 1})
            else:
                current = await s.get(ScriptDraft, draft_id)
                if current is None:
                    raise NotFound(msg("draft_not_found", draft_id=draft_id))
                raise Conflict(msg("draft_version_conflict", draft_id=draft_id,
                                   current=current.version, sent=change.version),
                               code="version_conflict", current_version=current.version)
        return await self.get(draft_id)

    async def delete(self, draft_id: int, actor: Actor) -> None:
        async with self._db.session() as s:
            title = await s.scalar(delete(ScriptDraft).where(ScriptDraft.id == draft_id)
                                   .returning(ScriptDraft.title))
            if title is None:
                raise NotFound(msg("draft_not_found", draft_id=draft_id))
            record(s, actor, "draft.delete", target=f"draft:{draft_id}", detail={"title": title})
