"""The record detail of diagnostics words a chat record's `speech` (what the speech guard and
the filler did): the actions and lexicons with their counts and the filler, in Chinese and
in English; never a term (the record holds none). Chromium against the real server."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from typing import Any

import asyncpg
from playwright.sync_api import expect

from tests.browser.conftest import login, shot
from tests.fixtures.database import asyncpg_dsn

SPEECH = {"guard": {"replace": 2, "mask_pii": 1}, "lexicons": {"finance": 2}, "filler": True}


async def _insert(pg_url: str) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:  # a chat record as the writer stores it (an id far above the writer's blocks)
        await conn.execute(
            "INSERT INTO callout.llm_call_logs (id, at, tier, code, source, call_id, latency_ms,"
            " speech) VALUES (9000000001, now(), 'chat', 'ok', 'live', 'speech-1', 812.0, $1)",
            json.dumps(SPEECH))
    finally:
        await conn.close()


def test_the_record_detail_words_what_the_guard_did(page: Any, console_server: str,
                                                     pg_url: str) -> None:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _insert(pg_url)).result()
    login(page, console_server, route="/ai/diagnostics?call_id=speech-1")
    row = page.locator("tr.diag-row").first
    expect(row).to_contain_text("speech-1")
    row.locator("button.link-btn").click()
    detail = page.get_by_test_id("diag-detail")
    expect(detail).to_contain_text("播报守卫与垫话")
    expect(detail).to_contain_text("替换 ×2、隐去个人信息 ×1；词库：finance ×2；播放了垫话")
    shot(page, "diagnostics-speech")
    page.get_by_role("button", name="English").click()
    row = page.locator("tr.diag-row").first
    row.locator("button.link-btn").click()
    detail = page.get_by_test_id("diag-detail")
    expect(detail).to_contain_text("Speech guard and filler")
    expect(detail).to_contain_text(
        "Replace ×2, Mask personal data ×1; lexicons: finance ×2; filler spoken")
    assert page.errors == []
