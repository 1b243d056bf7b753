"""Erasing a call from the console (issue 22): an admin opens a record in diagnostics, is
asked to confirm, and every stored row of that call is gone; in Chinese and in English,
Chromium against the real server. A viewer is offered no such button."""

from __future__ import annotations

import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import login, shot
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS


def _records(base: str, call_id: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30) as admin:
        return list(admin.get("/api/admin/diagnostics", params={"call_id": call_id}).json()["items"])


def _call(base: str, call_id: str) -> None:
    r = httpx.post(f"{base}/api/nlu/decide", headers=SERVICE_HEADERS, timeout=30, json={
        "call_id": call_id, "utterance": "好的", "intents": [{"name": "agree"}],
        "fallback_intent": "agree"})
    assert r.status_code == 200, r.text
    for _ in range(100):  # written in the background
        if _records(base, call_id):
            return
        time.sleep(0.1)
    raise AssertionError(f"no record of {call_id}")


def _erase(page: Any, call_id: str, button: str, confirm: str) -> None:
    page.goto(page.url.split("#")[0] + f"#/ai/diagnostics?call_id={call_id}")
    row = page.locator("tr.diag-row").first
    expect(row).to_contain_text(call_id)
    row.locator("button.link-btn").click()
    erase = page.get_by_test_id("diag-erase")
    expect(erase).to_have_text(button)
    erase.click()
    dlg = page.locator("dialog[open]")
    expect(dlg).to_contain_text(call_id)
    expect(dlg).to_contain_text(confirm)
    dlg.get_by_role("button", name=button).click()
    expect(page.locator("tr.diag-row")).to_have_count(0)


def test_an_admin_erases_a_call_in_both_languages(page: Any, console_server: str) -> None:
    _call(console_server, "erase-zh")
    _call(console_server, "erase-en")
    login(page, console_server, route="/ai/diagnostics")
    _erase(page, "erase-zh", "删除这通电话的数据", "不可撤销")
    shot(page, "real-10-erase-call")
    assert _records(console_server, "erase-zh") == []
    page.get_by_role("button", name="English").click()
    _erase(page, "erase-en", "Erase this call", "cannot be undone")
    assert _records(console_server, "erase-en") == []
    with httpx.Client(base_url=console_server, headers=ADMIN_HEADERS, timeout=30) as admin:
        assert admin.delete("/api/admin/calls/erase-en").status_code == 404
        trail = admin.get("/api/admin/audit", params={"action": "call.erase"}).json()["items"]
        assert {e["target"] for e in trail} >= {"call:erase-zh", "call:erase-en"}
    assert page.errors == []


def test_a_viewer_is_offered_no_erasure(page: Any, console_server: str) -> None:
    _call(console_server, "erase-viewer")
    with httpx.Client(base_url=console_server, headers=ADMIN_HEADERS, timeout=30) as admin:
        r = admin.post("/api/admin/users", json={"username": "vera.p", "role": "viewer",
                                                 "password": "vera-secret-pass"})
        assert r.status_code in (201, 409), r.text
    login(page, console_server, user="vera.p", password="vera-secret-pass",
          route="/ai/diagnostics?call_id=erase-viewer")
    row = page.locator("tr.diag-row").first
    expect(row).to_contain_text("erase-viewer")
    row.locator("button.link-btn").click()
    expect(page.get_by_test_id("diag-detail")).to_be_visible()
    expect(page.get_by_test_id("diag-erase")).to_have_count(0)
