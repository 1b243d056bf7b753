"""Errors of the lexicons package; each carries its HTTP status and stable code.

    ApiError (callout_server.errors)
      LexiconNotFound          404 not_found
      LexiconVersionConflict   409 version_conflict     stale `version`, nothing changed
      TooManyLexicons          422 too_many_lexicons    the count bounds the metrics' labels
      UnknownLexicons          422 validation_error     a chat session's guard names none such
"""

from __future__ import annotations

from collections.abc import Iterable

from callout_server.errors import Conflict, NotFound, UnprocessableEntity
from callout_server.i18n import msg


class LexiconNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(msg("lexicon_not_found", name=name), name=name)


class LexiconVersionConflict(Conflict):
    code = "version_conflict"

    def __init__(self, name: str, sent: int, current: int) -> None:
        super().__init__(msg("lexicon_version_conflict", name=name, sent=sent, current=current),
                         name=name, current_version=current)


class TooManyLexicons(UnprocessableEntity):
    code = "too_many_lexicons"

    def __init__(self, limit: int) -> None:
        super().__init__(msg("too_many_lexicons", limit=limit), limit=limit)


class UnknownLexicons(UnprocessableEntity):
    """A guard that names lexicons nobody saved: refused, never a guard that checks nothing."""

    def __init__(self, names: Iterable[str], *, field: str = "guard.lexicons") -> None:
        joined = ", ".join(sorted(names))
        reason = msg("unknown_lexicons", names=joined)
        super().__init__(msg("field_invalid", field=field, reason=reason),
                         fields=[{"field": field, "code": "unknown_lexicons", "message": reason}])
