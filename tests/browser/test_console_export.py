"""The diagnostics page's CSV export, in the real console against the real server: the
download holds the records of the filter on screen, worded in the console's language."""

from __future__ import annotations

import csv
import io
import time
from typing import Any

import httpx

from tests.browser.conftest import login, shot
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body


def _failed_decisions(base: str, emulator: Any, model: str, n: int) -> None:
    emulator.script_sync(model, {"reasoning_tokens": 4000, "content": '{"intent": "agree"}'})
    with httpx.Client(base_url=base, timeout=30) as c:
        r = c.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
            tier="nlu", model=model, base_url=emulator.base_url("vllm"), is_active=True,
            max_tokens=32, enable_thinking=True))
        assert r.status_code == 201, r.text
        for i in range(n):
            r = c.post("/api/nlu/decide", headers=SERVICE_HEADERS, json={
                "call_id": f"export-{i}", "utterance": "可以", "intents": [{"name": "agree"}],
                "fallback_intent": "agree"})
            assert r.status_code == 200 and r.json()["fallback"] is True, r.text
        for _ in range(100):  # the call log is written in the background
            found = c.get("/api/admin/diagnostics", headers=ADMIN_HEADERS,
                          params={"model": model}).json()["items"]
            if len(found) == n:
                return
            time.sleep(0.1)
    raise AssertionError("records not written")


def _download(page: Any) -> list[dict[str, str]]:
    with page.expect_download() as info:
        page.get_by_test_id("diag-export").click()
    download = info.value
    assert download.suggested_filename.startswith("diagnostics-")
    assert download.suggested_filename.endswith(".csv")
    with open(download.path(), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(text[1:])))


def test_export_downloads_the_filtered_records_in_the_consoles_language(
        pg_url: str, console_server: str, emulator: Any, page: Any) -> None:
    # (The database and server first: their fixtures run an event loop of their own, which
    # cannot start once Playwright's runs.)
    model = emulator.unique_model("qwen3-8b")
    _failed_decisions(console_server, emulator, model, 3)
    login(page, console_server, route=f"/ai/diagnostics?model={model}")
    page.locator("tr.row-truncated").first.wait_for(timeout=15_000)
    export = page.get_by_test_id("diag-export")
    assert export.inner_text() == "导出 CSV"
    shot(page, "real-03-diagnostics-export")
    rows = _download(page)
    assert [r["call_id"] for r in rows] == ["export-2", "export-1", "export-0"]
    assert {r["model"] for r in rows} == {model}
    assert rows[0]["message"].startswith("模型输出触顶 max_tokens 限制 (32)")
    page.get_by_role("button", name="English").click()
    page.get_by_test_id("diag-export").filter(has_text="Export CSV").wait_for()
    rows = _download(page)
    assert len(rows) == 3 and rows[0]["message"].startswith("The output hit the max_tokens limit (32)")
    assert not page.errors, page.errors
