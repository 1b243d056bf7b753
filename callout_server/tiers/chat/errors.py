"""Errors of the chat tier, each with its HTTP status and stable code (api/errors.py renders them).

    ApiError
      SessionNotFound (404 session_not_found)
      SessionExists   (409 session_exists)      POST /api/chat/sessions with a live call_id
      StaleTurn       (409 stale_revision)      a revision not newer than the one seen
                      (409 stale_turn)          a revision of a turn that is no longer the newest
      UnknownToolCall (409 unknown_call_id)     a tool output for no pending call
      TooManySessions (503 too_many_sessions)   the worker holds `[chat] max_sessions` already
"""

from __future__ import annotations

from callout_server.errors import Conflict, NotFound, ServiceUnavailable


class SessionNotFound(NotFound):
    code = "session_not_found"

    def __init__(self, call_id: str) -> None:
        super().__init__(f"no chat session for call_id {call_id!r} on this worker "
                         "(expired, deleted, or the request reached another worker)")


class SessionExists(Conflict):
    code = "session_exists"

    def __init__(self, call_id: str) -> None:
        super().__init__(f"a chat session for call_id {call_id!r} already exists; "
                         "DELETE it first to start over")


class StaleTurn(Conflict):
    code = "stale_revision"


class UnknownToolCall(Conflict):
    code = "unknown_call_id"

    def __init__(self, call_id: str) -> None:
        super().__init__(f"no pending tool call with call_id {call_id!r}")


class TooManySessions(ServiceUnavailable):
    code = "too_many_sessions"

    def __init__(self, limit: int, what: str = "chat sessions", setting: str = "max_sessions") -> None:
        super().__init__(f"this worker already holds {limit} {what} ([chat] {setting}); "
                         "end finished calls with DELETE, or add workers")
