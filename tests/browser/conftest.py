"""Browser-test fixtures: Debian's Chromium driven by Playwright, against real server processes.

    chromium          (session)  a headless Chromium (/usr/bin/chromium; never downloaded)
    fake_server       (session)  base URL of tests/browser/fake_backend.py in a uvicorn subprocess
    console_server    (module)   base URL of the real callout-server (PostgreSQL `pg_url`,
                                 model tiers pointed at the vendor `emulator`)
    page              (function) a fresh browser context + page (1280x720, zh-CN); console
                                 errors and page errors collected on `page.errors`
    shot(page, name)             writes test-artifacts/screenshots/<name>.png

Screenshots land in `test-artifacts/screenshots/` (gitignored), named after the page they show.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = REPO_ROOT / "test-artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin-pass-123"
VIEWPORT = {"width": 1280, "height": 720}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_uvicorn(target: str, env: dict[str, str], *, factory: bool, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "uvicorn", target, "--host", "127.0.0.1", "--port", str(port),
           "--log-level", "warning"]
    if factory:
        cmd.insert(4, "--factory")
    log.parent.mkdir(parents=True, exist_ok=True)
    out = log.open("wb")
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}; see {log}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base}/admin", timeout=1.0).status_code < 500:
                return proc, base
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"server did not come up on {base}; see {log}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


# Package scope: Playwright's sync API keeps an event loop running on the main thread while
# it is open, which would break every asyncio test collected after the browser tests.
@pytest.fixture(scope="package")
def chromium() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium); browsers are never downloaded")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def fake_server() -> Iterator[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CALLOUT_ADMIN_UI_DIR": str(REPO_ROOT / "admin_ui")}
    proc, base = _start_uvicorn("tests.browser.fake_backend:app", env, factory=False,
                                log=REPO_ROOT / "test-artifacts" / "logs" / "fake-backend.log")
    try:
        yield base
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def console_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real app (`callout_server.app:create_app`, console mounted) on PostgreSQL + the emulator."""
    from tests.fixtures.database import reset_tables, test_env

    pg_url = request.getfixturevalue("pg_url")
    emulator = request.getfixturevalue("emulator")
    # On a thread of its own: a second module using this fixture runs while Playwright's
    # event loop is running on this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, reset_tables(pg_url)).result()
    env = {**os.environ, **test_env(pg_url, None, "callout-browser"), "PYTHONUNBUFFERED": "1",
           "CALLOUT_ADMIN_UI_DIR": str(REPO_ROOT / "admin_ui")}
    env.pop("CALLOUT_REDIS_URL", None)
    for tier in ("NLU", "CHAT", "SCRIPT"):
        env[f"CALLOUT_{tier}_BASE_URL"] = emulator.base_url("vllm")
    proc, base = _start_uvicorn("tests.browser.server_app:create_app", env, factory=True,
                                log=REPO_ROOT / "test-artifacts" / "logs" / "console-server.log")
    try:
        yield base
    finally:
        _stop(proc)


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN", timezone_id="Asia/Shanghai")
    context.set_default_timeout(10_000)
    pg = context.new_page()
    pg.errors = []  # type: ignore[attr-defined]
    pg.on("pageerror", lambda e: pg.errors.append(f"pageerror: {e}"))  # type: ignore[attr-defined]
    pg.on("console", lambda m: pg.errors.append(f"console.{m.type}: {m.text}")  # type: ignore[attr-defined]
          if m.type == "error" and "Failed to load resource" not in m.text else None)
    try:
        yield pg
    finally:
        context.close()


def shot(page: Any, name: str, *, full_page: bool = False) -> Path:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.wait_for_timeout(150)  # let transitions settle
    page.screenshot(path=str(path), full_page=full_page)
    return path


def config_row(page: Any, name: str) -> Any:
    """A configuration's row in the models table (not its endpoints' rows in the upstream
    health table below, which name the configuration the same way)."""
    return page.get_by_test_id("configs-table").locator(f"tr:has(th .cell-name:text-is('{name}'))")


def login(page: Any, base: str, *, user: str = ADMIN_USER, password: str = ADMIN_PASSWORD,
          route: str = "/ai/models") -> None:
    page.goto(f"{base}/admin#{route}")
    page.wait_for_url("**#/login**")
    page.get_by_label("用户名").fill(user)
    page.get_by_label("密码").fill(password)
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(f"**#{route}")


def api_status(base: str, method: str, path: str, **kw: Any) -> int:
    """Status of a bare request (no credentials): 404 means the route does not exist yet."""
    try:
        return httpx.request(method, f"{base}{path}", timeout=10, **kw).status_code
    except httpx.TransportError:
        return 0


def require_route(base: str, method: str, path: str, what: str, **kw: Any) -> None:
    """Skip (naming the missing backend piece) when the route answers 404 / 405."""
    status = api_status(base, method, path, **kw)
    if status in (404, 405):
        pytest.skip(f"backend not there yet: {method} {path} answers {status} ({what})")
