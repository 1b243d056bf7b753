"""The answer of `GET /api/admin/audit`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel


class AuditEventOut(BaseModel):
    id: int
    at: datetime
    actor: str
    via: Literal["session", "token"]
    action: str
    target: str | None
    detail: dict[str, Any]
    ip: str | None


class AuditPage(BaseModel):
    items: list[AuditEventOut]
    next_before_id: int | None  # set when an older page may exist: pass it as before_id
