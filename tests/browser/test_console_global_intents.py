"""The Global intents page in Chromium against the real server, in both languages: the list
(config.toml's defaults until saved), "try a sentence" saying which phrase hit or which
negation or context stopped it, an operator's edit tried before saving and then saved, a
stale save shown as a conflict, and a viewer who reads and tries but cannot edit.

Screenshots: test-artifacts/screenshots/real-23-global-intents-{zh,en}.png.
"""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import login, shot
from tests.fixtures.database import ADMIN_HEADERS

ROUTE = "/ai/global-intents"
URL = "/api/admin/nlu/global-intents"


def try_sentence(page: Any, text: str) -> Any:
    page.get_by_test_id("gi-try-input").fill(text)
    page.get_by_test_id("gi-try").click()
    return page.get_by_test_id("gi-try-result")


def test_global_intents_page(page: Any, console_server: str) -> None:
    login(page, console_server, route=ROUTE)
    table = page.get_by_test_id("gi-table")
    expect(table.locator("tbody tr")).to_have_count(3)
    assert [table.locator("tbody tr").nth(n).get_attribute("data-intent") for n in range(3)] == [
        "opt_out", "complaint", "human_agent"]
    expect(page.get_by_test_id("gi-version")).to_contain_text("config.toml")

    result = try_sentence(page, "你们别再给我打电话了")
    expect(result.get_by_test_id("gi-hit")).to_have_attribute("data-intent", "opt_out")
    expect(result.get_by_test_id("gi-hit")).to_contain_text("结束通话")
    result = try_sentence(page, "我不投诉就问问")
    expect(result.get_by_test_id("gi-miss")).to_be_visible()
    stop = result.get_by_test_id("gi-stop")
    expect(stop).to_have_attribute("data-reason", "negated")
    expect(stop).to_contain_text("投诉")
    expect(stop).to_contain_text("否定词「不」")
    result = try_sentence(page, "现在不方便，别打了，晚点打")
    expect(result.get_by_test_id("gi-stop").first).to_have_attribute("data-reason", "context")
    shot(page, "real-23-global-intents-zh")

    # An operator edits: complaint disabled, tried on the form before saving, then saved.
    page.get_by_test_id("gi-edit").click()
    complaint = page.get_by_test_id("gi-intent-form").nth(1)
    complaint.get_by_label("启用").uncheck()
    result = try_sentence(page, "我要投诉你们")
    expect(result.get_by_test_id("gi-miss")).to_be_visible()
    expect(result).to_contain_text("尚未保存")
    page.get_by_test_id("gi-save").click()
    expect(page.get_by_test_id("gi-version")).to_contain_text("版本 1")
    expect(page.get_by_test_id("gi-table").locator("tr[data-intent='complaint']")).to_contain_text("停用")
    with httpx.Client(base_url=console_server, headers=ADMIN_HEADERS, timeout=30) as api:
        saved = api.get(URL).json()
        assert saved["version"] == 1
        assert [i["enabled"] for i in saved["items"]] == [True, False, True]

        # Someone else saves meanwhile: this form's save is a conflict, nothing is lost.
        page.get_by_test_id("gi-edit").click()
        assert api.put(URL, json={"items": saved["items"], "version": 1}).status_code == 200
        page.get_by_test_id("gi-save").click()
        expect(page.get_by_test_id("gi-conflict")).to_be_visible()
        # Cancelled while the reload is still in flight (held here): the list shows what it
        # had, then the latest version when the reload lands; the form does not come back.
        held: list[Any] = []
        page.route(f"**{URL}", lambda route: held.append(route))
        page.get_by_role("button", name="重新加载最新版本").click()
        page.get_by_role("button", name="取消").click()
        expect(page.get_by_test_id("gi-version")).to_contain_text("版本 1")
        while not held:
            page.wait_for_timeout(20)
        held[0].continue_()
        page.unroute(f"**{URL}")
        expect(page.get_by_test_id("gi-version")).to_contain_text("版本 2")
        expect(page.get_by_test_id("gi-form")).to_have_count(0)

        # English.
        page.get_by_role("button", name="English").click()
        expect(page.get_by_role("heading", name="Global intents", level=1)).to_be_visible()
        result = try_sentence(page, "不用转人工你说吧")
        expect(result.get_by_test_id("gi-stop")).to_contain_text("stopped by the negation")
        result = try_sentence(page, "please stop calling me")
        expect(result.get_by_test_id("gi-hit")).to_contain_text("Matches")
        expect(result.get_by_test_id("gi-hit")).to_contain_text("end the call")
        shot(page, "real-23-global-intents-en")
        page.get_by_role("button", name="中文").click()

        # A viewer reads and tries, and has nothing to edit with.
        assert api.post("/api/admin/users", json={"username": "gina", "password": "gina-viewer-password",
                                                  "role": "viewer"}).status_code == 201
    page.get_by_role("button", name="退出登录").click()
    page.wait_for_url("**#/login")
    page.goto("about:blank")
    login(page, console_server, user="gina", password="gina-viewer-password", route=ROUTE)
    expect(page.get_by_test_id("gi-table").locator("tbody tr")).to_have_count(3)
    assert page.get_by_test_id("gi-edit").count() == 0
    expect(try_sentence(page, "帮我转人工").get_by_test_id("gi-hit")).to_have_attribute(
        "data-intent", "human_agent")
    assert not page.errors, page.errors
