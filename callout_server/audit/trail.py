"""Writing the trail: `record()` adds one event to the caller's own unit of work.

The row is added to the session that makes the change, never written apart: the change and
its audit event commit together or not at all (a failed change leaves no event, an event
that cannot be written fails the change).

    record(session, actor, "config.update", target="config:7", detail={...})

`scrub()` is the last guard on what a detail may hold: values under a key that names a
secret (password, key, token, cookie, secret, authorization) are dropped unless they are
one of the plain markers saying *that* it changed ("set", "replaced", "cleared", "reset"),
and long strings are cut. Callers pass field names and non-secret values only; this makes
a mistake there harmless.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from callout_server import privacy
from callout_server.audit.models import AuditEvent
from callout_server.db.base import utcnow
from callout_server.privacy import merge

Via = Literal["session", "token"]

# Name segments (split on "_", "-", ".") that mark a secret: `api_key`, `csrf_token`,
# `new_password`; `max_tokens` or `keyword` are not.
_SECRET_WORDS = frozenset({"password", "passwd", "secret", "token", "cookie", "key", "apikey",
                           "authorization", "csrf", "credentials", "sid"})
_SEGMENT = re.compile(r"[_\-.\s]+")
_MARKERS = frozenset({"set", "replaced", "cleared", "reset", "changed", "unchanged"})
MAX_TEXT = 200
MAX_ITEMS = 50
MAX_DEPTH = 4
REDACTED = "[redacted]"


@dataclass(frozen=True, slots=True)
class Actor:
    """Who made a change: a console user (session) or a bearer token, and from where.

    `ip` is the client address as the server sees it: the proxy's, unless the proxy is
    named in `--forwarded-allow-ips` (then the address it forwards).
    """

    name: str
    via: Via
    ip: str | None = None


def _secret_name(key: str) -> bool:
    parts = _SEGMENT.split(key.lower())
    return key.lower() == "session_id" or any(part in _SECRET_WORDS for part in parts)


def scrub(value: Any, depth: int = 0) -> Any:
    """A JSON-able copy of `value` with secret-named values redacted and sizes bounded."""
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            return "…"
        out: dict[str, Any] = {}
        for k, v in list(value.items())[:MAX_ITEMS]:
            key = str(k)[:MAX_TEXT]
            if _secret_name(key) and not (isinstance(v, str) and v in _MARKERS):
                if isinstance(v, dict):  # {"old": ..., "new": ...} of a secret: say it changed
                    out[key] = "changed"
                else:
                    out[key] = REDACTED
                continue
            out[key] = scrub(v, depth + 1)
        return out
    if isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            return "…"
        return [scrub(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"
    if value is None or isinstance(value, bool | int | float):
        return value
    return scrub(str(value), depth)


def record(session: AsyncSession, actor: Actor, action: str, *, target: str | None = None,
           detail: dict[str, Any] | None = None) -> None:
    """Add one event to `session`; it is written when the caller's unit of work commits.

    Customers' personal data in `target` and `detail` is replaced by pseudonyms
    (`privacy.current()`); what the redactor fails on is not stored (`redacted` says so)."""
    guard = privacy.current()
    target, found = guard.text(target[:256] if target else None)
    kept, more = guard.value(scrub(detail or {}))
    tally = merge(dict(found), more) if guard.enabled else None
    session.add(AuditEvent(at=utcnow(), actor=actor.name[:128], via=actor.via,
                           action=action, target=target[:256] if target else None,
                           detail=kept if kept is not None else {}, redacted=tally,
                           ip=(actor.ip or None) and actor.ip[:64]))
