"""Errors of the global intents.

    ApiError
      IntentsVersionConflict   409 version_conflict   the list changed since it was read
"""

from __future__ import annotations

from callout_server.errors import Conflict
from callout_server.i18n import msg


class IntentsVersionConflict(Conflict):
    code = "version_conflict"

    def __init__(self, sent: int, current: int) -> None:
        super().__init__(msg("global_intents_version_conflict", sent=sent, current=current),
                         current_version=current)
