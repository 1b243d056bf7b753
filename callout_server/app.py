"""The FastAPI application: settings in, services built once in the lifespan, thin routers.

The composition root (`services.py`) builds the worker's services in the lifespan; each
route asks for the one it needs by type (`api.deps.provide`), found in
`app.state.components`. `app.state.services` keeps the whole set for tests and tools.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig

from callout_server.api.connections import CLOSING_STATE
from callout_server.api.console import mount_console
from callout_server.api.docs import install_docs
from callout_server.api.edge import EdgeMiddleware
from callout_server.api.errors import install_error_handlers
from callout_server.api.lean import LeanDispatch
from callout_server.api.metrics import router as metrics_router
from callout_server.api.openapi import install_openapi
from callout_server.auth.deps import authenticate
from callout_server.auth.router import router as auth_router
from callout_server.calllog.router import calls_router
from callout_server.calllog.router import router as diagnostics_router
from callout_server.calllog.usage_router import router as usage_router
from callout_server.canary.router import router as canary_router
from callout_server.config.router import router as config_router
from callout_server.config.settings import Settings, load_settings
from callout_server.connectivity.router import router as connectivity_router
from callout_server.evaluation.router import router as evaluation_router
from callout_server.health import router as health_router
from callout_server.intents.router import router as intents_router
from callout_server.lexicons.router import router as lexicons_router
from callout_server.logs import write_through
from callout_server.people.audit_router import router as audit_router
from callout_server.people.router import router as people_router
from callout_server.service_keys.gate import KeyGate
from callout_server.service_keys.router import router as service_keys_router
from callout_server.services import Services
from callout_server.tiers.chat.router import router as chat_router
from callout_server.tiers.nlu.router import router as nlu_router
from callout_server.tiers.playground import router as playground_router
from callout_server.tiers.script.router import router as script_router

log = logging.getLogger("callout_server")


def tune_gc() -> None:
    """Keep the collector off the request path (measured with bench/bench_nlu.py).

    Start-up leaves a large, long-lived heap (FastAPI, pydantic, SQLAlchemy, the services);
    with the default thresholds every full collection walks all of it, a pause of several
    milliseconds that lands on whichever request allocated last. Freezing moves that heap
    out of the collector's sight, and a larger first-generation threshold makes the
    young collections (which a request's garbage triggers every few requests) rarer.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_GEN0_THRESHOLD, 20, 20)


# Objects allocated (minus freed) before a young collection; the default is 700.
GC_GEN0_THRESHOLD = 20_000


def tune_switching() -> None:
    """Hand the GIL back to the event loop sooner while a worker thread computes.

    The call log's writer redacts its batches in a thread (calllog/redact.py); holding the
    GIL for the default 5 ms slice, it makes every decision waiting on the loop wait that
    long too. 1 ms: the p99 at 16 and 64 in flight 5-21 % lower, the CPU per decision the
    same (bench/README.md, issue 20 phase 3)."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


SWITCH_INTERVAL_S = 0.001  # the default is 0.005

# FastAPI's native OpenTelemetry, unless [server] opentelemetry: otherwise every request asks
# the global providers whether one is configured.
NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or load_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        services = Services(settings)
        app.state.services = services
        app.state.components = services.components
        try:
            await services.start()
        except BaseException:
            await services.stop()  # whatever did start (tasks, pools) is taken down again
            raise
        tune_gc()
        tune_switching()
        try:
            # The lifespan's state: uvicorn hands it to every connection, whose shutdown()
            # ends the open streams through `closing` (api/connections.py).
            yield {CLOSING_STATE: services.closing}
        finally:
            # From here a line is written when it is logged: the process may be ended by
            # the signal uvicorn re-raises once this returns (see logs.py).
            write_through()
            await services.stop()

    app = FastAPI(title="callout-server", version="0.1.0", lifespan=lifespan,
                  docs_url=None, redoc_url=None,
                  telemetry=None if settings.server.opentelemetry else NO_TELEMETRY)
    install_error_handlers(app)
    install_openapi(app)
    install_docs(app, title=app.title)  # /docs and /redoc from local assets (no CDN)
    # Inside the edge (added first: the last added is outermost): a service key's tiers and
    # limits, once the edge has authenticated the caller (service_keys/gate.py).
    app.add_middleware(KeyGate, components=lambda: app.state.components)
    app.add_middleware(EdgeMiddleware, body_limit=settings.server.body_limit_named,
                       authenticate=authenticate, default_locale=settings.server.locale)
    # The dialer's hot routes first: every request is matched against the routes in order
    # (with the NLU route last of thirteen routers, matching cost a tenth of a decision).
    app.include_router(nlu_router)
    app.include_router(chat_router)
    app.include_router(health_router)
    app.include_router(auth_router)
    app.include_router(config_router)
    app.include_router(connectivity_router)
    app.include_router(metrics_router)
    app.include_router(diagnostics_router)
    app.include_router(calls_router)
    app.include_router(script_router)
    app.include_router(people_router)
    app.include_router(audit_router)
    app.include_router(evaluation_router)
    app.include_router(lexicons_router)
    app.include_router(intents_router)
    app.include_router(playground_router)
    app.include_router(canary_router)
    app.include_router(service_keys_router)
    app.include_router(usage_router)
    mount_console(app)
    # Last, once every route is in: a lean route's path, found once, skips the router after.
    app.state.lean_dispatch = LeanDispatch.install(app)
    return app
