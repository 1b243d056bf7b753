"""The FastAPI application: settings in, services built once in the lifespan, thin routers.

Services live on `app.state.services` (a `Services` instance) and reach routes through the
dependencies in `callout_server.api.deps`; tests can build the same services without HTTP.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from callout_server.api.errors import install_error_handlers
from callout_server.api.health import router as health_router
from callout_server.config.settings import Settings, load_settings
from callout_server.services import Services

log = logging.getLogger("callout_server")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or load_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = Services(settings)
        app.state.services = services
        await services.start()
        try:
            yield
        finally:
            await services.stop()

    app = FastAPI(title="callout-server", version="0.1.0", lifespan=lifespan)
    install_error_handlers(app)
    app.include_router(health_router)
    return app
