"""Browser-test fixtures: Debian's Chromium driven by Playwright, against real server processes.

    chromium          (package)  a headless Chromium (/usr/bin/chromium; never downloaded)
    console_server    (module)   base URL of the real callout-server (`callout-server serve`
                                 on PostgreSQL `pg_url`, model tiers on the vendor `emulator`,
                                 tables emptied first); its log in test-artifacts/logs/
    page              (function) a fresh browser context + page (1280x720, zh-CN); console
                                 errors and page errors collected on `page.errors`
    shot(page, name)             writes test-artifacts/screenshots/<name>.png

Screenshots land in `test-artifacts/screenshots/` (gitignored), named after the page they show.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.app import ServerProcess

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = REPO_ROOT / "test-artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin-pass-123"
VIEWPORT = {"width": 1280, "height": 720}


# Package scope: Playwright's sync API keeps an event loop running on the main thread while
# it is open, which would break every asyncio test collected after the browser tests.
@pytest.fixture(scope="package")
def chromium(pg_url: str, emulator: Any) -> Iterator[Any]:
    # Every browser test drives the real server, which needs the test database and the
    # emulator: set up here, before the browser, since an async fixture cannot start once
    # Playwright's event loop runs on this thread.
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium); browsers are never downloaded")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def console_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The real server (`callout-server serve`, tests.fixtures.app.ServerProcess) on the
    test database, emptied first, with every model tier pointed at the vendor emulator."""
    from tests.fixtures.database import reset_tables, test_env

    pg_url = request.getfixturevalue("pg_url")
    emulator = request.getfixturevalue("emulator")
    # On a thread of its own: a second module using this fixture runs while Playwright's
    # event loop is running on this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, reset_tables(pg_url)).result()
    env = {**test_env(pg_url, None, "callout-browser"),
           "CALLOUT_ADMIN_UI_DIR": str(REPO_ROOT / "admin_ui")}
    for tier in ("NLU", "CHAT", "SCRIPT"):
        env[f"CALLOUT_{tier}_BASE_URL"] = emulator.base_url("vllm")
    name = request.module.__name__.rsplit(".", 1)[-1]
    server = ServerProcess(env, REPO_ROOT / "test-artifacts" / "logs" / f"{name}.log", name)
    try:
        yield server.wait_ready_sync().url
    finally:
        server.stop()


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
    if full_page:
        # A whole-page picture is stitched from the top down: the sticky top bar and sidebar
        # would be drawn across the middle of it. Unstick them for the picture (CSSOM, which
        # the console's CSP allows), then put them back.
        page.evaluate("""() => document.querySelectorAll('.topbar, .sidebar')
            .forEach((el) => { el.style.position = 'static'; })""")
    page.screenshot(path=str(path), full_page=full_page)
    if full_page:
        page.evaluate("""() => document.querySelectorAll('.topbar, .sidebar')
            .forEach((el) => { el.style.position = ''; })""")
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
