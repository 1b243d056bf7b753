"""The admin web console: `GET /admin` renders the single-page shell, `/admin/static` serves it,
`GET /` redirects to it.

The console is a hash-routed page of vanilla ES modules under `admin_ui/` (no build step).
It talks only to the JSON API, with the session cookie and an `X-CSRF-Token` header.

`admin_ui` is found, in order: `$CALLOUT_ADMIN_UI_DIR`, `<repo>/admin_ui` next to the
package (editable install / source checkout), `./admin_ui` in the working directory.
"""

from __future__ import annotations

import hashlib
import logging
import os
from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

from callout_server import __version__

log = logging.getLogger("callout_server.console")

STATIC_PREFIX = "/admin/static"

# The console loads nothing from anywhere but this server.
CONSOLE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONSOLE_CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def admin_ui_dir() -> Path:
    """Where the console's templates and static files live."""
    env = os.environ.get("CALLOUT_ADMIN_UI_DIR")
    if env:
        return Path(env).expanduser().resolve()
    repo_dir = Path(__file__).resolve().parents[2] / "admin_ui"
    if (repo_dir / "templates").is_dir():
        return repo_dir
    cwd_dir = Path.cwd() / "admin_ui"
    if (cwd_dir / "templates").is_dir():
        return cwd_dir
    return repo_dir


@lru_cache(maxsize=4)
def _asset_tag(static_dir: Path) -> str:
    """A short hash of the static tree (names, sizes, mtimes): changes on every deploy."""
    h = hashlib.sha256(__version__.encode())
    if static_dir.is_dir():
        for p in sorted(static_dir.rglob("*")):
            if p.is_file():
                st = p.stat()
                h.update(f"{p.relative_to(static_dir)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:10]


def build_router(ui_dir: Path | None = None) -> APIRouter:
    ui = ui_dir or admin_ui_dir()
    env = Environment(loader=FileSystemLoader(str(ui / "templates")),
                      autoescape=select_autoescape(["html"]), auto_reload=False)
    router = APIRouter(include_in_schema=False)

    def asset(path: str) -> str:
        return f"{STATIC_PREFIX}/{path}?v={_asset_tag(ui / 'static')}"

    @router.get("/admin", response_class=HTMLResponse)
    @router.get("/admin/", response_class=HTMLResponse)
    async def console_page(request: Request) -> Response:
        html = env.get_template("index.html").render(
            version=__version__, asset=asset, static_prefix=STATIC_PREFIX,
        )
        return HTMLResponse(html, headers=SECURITY_HEADERS)

    @router.get("/")
    async def root() -> Response:
        # A newcomer opens the server's address: the console is what there is to see.
        return RedirectResponse("/admin", status_code=307)

    @router.get("/admin/index.html")
    async def console_alias() -> Response:
        return RedirectResponse("/admin", status_code=308)

    return router


class _ConsoleStatic(StaticFiles):
    """StaticFiles with nosniff and revalidation on every load.

    Module imports inside the page (`./pages/x.js`) carry no cache-busting query, so assets are
    served `no-cache`: the browser keeps them but revalidates (ETag -> 304) on each page load.
    """

    async def get_response(self, path: str, scope):  # type: ignore[no-untyped-def]
        resp = await super().get_response(path, scope)
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Cache-Control", "no-cache")
        if path.endswith(".js"):
            resp.headers["Content-Type"] = "text/javascript; charset=utf-8"
        return resp


def mount_console(app: FastAPI) -> None:
    """Serve the console at /admin and its assets at /admin/static (idempotent)."""
    if getattr(app.state, "console_mounted", False):
        return
    ui = admin_ui_dir()
    static_dir = ui / "static"
    if not (ui / "templates" / "index.html").is_file() or not static_dir.is_dir():
        log.warning("admin console not served: %s has no templates/index.html or static/ "
                    "(set CALLOUT_ADMIN_UI_DIR)", ui)
        return
    app.include_router(build_router(ui))
    app.mount(STATIC_PREFIX, _ConsoleStatic(directory=str(static_dir)), name="admin-static")
    app.state.console_mounted = True
