"""Errors of the chat tier, each with its HTTP status and stable code (api/errors.py renders them).

    ApiError
      SessionNotFound (404 session_not_found)
      SessionExists   (409 session_exists)      POST /api/chat/sessions with a live call_id
      StaleTurn       (409 stale_revision)      a revision not newer than the one seen
                      (409 stale_turn)          a revision of a turn that is no longer the newest
      UnknownToolCall (409 unknown_call_id)     a tool output for no pending call
      TooManySessions (503 too_many_sessions)   the worker holds `[chat] max_sessions` already
      SessionStoreDown (503 session_store_unavailable)  sessions are in Redis, Redis is away
"""

from __future__ import annotations

from callout_server.errors import Conflict, NotFound, ServiceUnavailable
from callout_server.i18n import msg


class SessionNotFound(NotFound):
    code = "session_not_found"

    def __init__(self, call_id: str) -> None:
        super().__init__(msg("session_not_found", call_id=call_id))


class SessionExists(Conflict):
    code = "session_exists"

    def __init__(self, call_id: str) -> None:
        super().__init__(msg("session_exists", call_id=call_id))


class StaleTurn(Conflict):
    code = "stale_revision"


class UnknownToolCall(Conflict):
    code = "unknown_call_id"

    def __init__(self, call_id: str) -> None:
        super().__init__(msg("unknown_tool_call", call_id=call_id))


class TooManySessions(ServiceUnavailable):
    code = "too_many_sessions"

    def __init__(self, limit: int, *, in_bytes: bool = False) -> None:
        super().__init__(msg("too_many_session_bytes" if in_bytes else "too_many_sessions",
                             limit=limit))


class SessionStoreDown(ServiceUnavailable):
    code = "session_store_unavailable"
    retry_after_s = 1

    def __init__(self) -> None:
        super().__init__(msg("session_store_unavailable"))
