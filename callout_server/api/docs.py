"""`/docs` (Swagger UI) and `/redoc` (ReDoc) from assets this server serves itself.

FastAPI's own pages load their scripts from a CDN, so on an intranet without internet access
they stay blank. The asset files come from the `fastapi-standalone-docs` package (its
static folder only: the package's way of patching FastAPI's functions is not used); the
pages are FastAPI's own HTML pointed at them, with the console's icon and no web fonts.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_standalone_docs
from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = Path(fastapi_standalone_docs.__file__).resolve().parent / "static"
FAVICON = "/admin/static/favicon.svg"


def install_docs(app: FastAPI, *, title: str) -> None:
    """Serve the API documentation pages at /docs and /redoc (create the app with
    `docs_url=None, redoc_url=None` so that FastAPI's CDN-backed ones are not there)."""
    openapi_url = app.openapi_url or "/openapi.json"
    app.mount("/docs/assets", StaticFiles(directory=ASSETS / "swagger"), name="docs-assets")
    app.mount("/redoc/assets", StaticFiles(directory=ASSETS / "redoc"), name="redoc-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{title} · Swagger UI",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css", swagger_favicon_url=FAVICON,
            oauth2_redirect_url="/docs/oauth2-redirect")

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url, title=f"{title} · ReDoc",
            redoc_js_url="/redoc/assets/redoc.standalone.js", redoc_favicon_url=FAVICON,
            with_google_fonts=False)
