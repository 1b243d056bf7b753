"""Record ids known before the record is written.

A response names its diagnostic record (`diagnostic.id`) while the insert happens later in
the background, so ids come from blocks reserved ahead of time: taking one is a deque pop
with no I/O; reserving a block is one UPDATE done by the background writer.
"""

from __future__ import annotations

from collections import deque

from sqlalchemy import insert, update
from sqlalchemy.exc import IntegrityError

from callout_server.calllog.models import IdBlock
from callout_server.db.engine import Database


class IdAllocator:
    def __init__(self, db: Database, name: str, *, block_size: int = 1000) -> None:
        self._db = db
        self._name = name
        self._block_size = block_size
        self._ids: deque[int] = deque()

    @property
    def available(self) -> int:
        return len(self._ids)

    def take(self) -> int | None:
        """An id from the reserved block, or None when none is reserved (DB unreachable)."""
        return self._ids.popleft() if self._ids else None

    async def refill(self, low_water: int | None = None) -> None:
        """Reserve another block when fewer than `low_water` ids remain.

        Not bounded here: the engine sets no command timeout, so the caller bounds it (the
        recorder by its write timeout) or a database gone silent holds it for TCP's ~15 min.
        A reservation cut short only leaves a gap in the ids."""
        if len(self._ids) >= (self._block_size // 2 if low_water is None else low_water):
            return
        end = await self._reserve()
        self._ids.extend(range(end - self._block_size, end))

    async def _reserve(self) -> int:
        """Advance the counter by one block; returns the exclusive end of the new block."""
        n = self._block_size
        for _ in range(3):
            async with self._db.session() as s:
                result = await s.execute(
                    update(IdBlock).where(IdBlock.name == self._name)
                    .values(next_id=IdBlock.next_id + n).returning(IdBlock.next_id)
                )
                end = result.scalar_one_or_none()
                if end is not None:
                    return int(end)
            try:
                async with self._db.session() as s:
                    await s.execute(insert(IdBlock).values(name=self._name, next_id=1 + n))
                return 1 + n
            except IntegrityError:
                continue  # another worker created the row first: update it instead
        raise RuntimeError(f"could not reserve a block of ids for {self._name}")
