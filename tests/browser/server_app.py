"""The real app for browser tests: `callout_server.app.create_app`, with the console mounted.

Until `create_app` calls `mount_console` itself, this adds it; afterwards it changes nothing
(`mount_console` is idempotent).
"""

from __future__ import annotations

from fastapi import FastAPI

from callout_server.api.console import mount_console
from callout_server.app import create_app as _create_app


def create_app() -> FastAPI:
    app = _create_app()
    mount_console(app)
    return app
