"""The long-lived services of one worker process, started and stopped with the app.

Each component is a plain async object; `start()` brings them up in dependency order and
`stop()` takes them down in reverse, so a failing shutdown of one never skips the others.
"""

from __future__ import annotations

import logging
from typing import Any

from callout_server.config.settings import Settings

log = logging.getLogger(__name__)


class Services:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stoppers: list[Any] = []

    async def start(self) -> None:
        """Build and start every component (filled in as the components land)."""

    async def stop(self) -> None:
        for stop in reversed(self._stoppers):
            try:
                await stop()
            except Exception:  # one component's failure must not leave the others running
                log.exception("error while stopping a service")
        self._stoppers.clear()
