"""Service keys, usage and one call's page in Chromium, in both languages, against the real
server (PostgreSQL + the vendor emulator).

An admin creates a key in the console and sees it once; the dialer calls with it; the Usage
page (a viewer's) charts the day and lists the campaign with its cost; a call id in the
diagnostics opens the Call page with that call's model calls in order.
Screenshots: test-artifacts/screenshots/usage-{zh,en}-*.png.
"""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import login, shot
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body

HAN = re.compile("[\u4e00-\u9fff]")
PRICE = {"input_per_mtok": 2.0, "output_per_mtok": 8.0, "currency": "CNY"}


def _api(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30)


def _written(base: str, campaign: str, within_s: float = 30.0) -> None:
    """Until the call log's writer has summed the campaign's calls (it flushes in batches;
    a busy machine delays it)."""
    deadline = time.monotonic() + within_s
    with _api(base) as api:
        while True:
            r = api.get("/api/admin/usage", params={"group_by": "campaign"})
            if r.status_code == 200 and any(
                    i.get("group") == campaign for i in r.json()["items"]):
                return
            assert time.monotonic() < deadline, f"no usage for {campaign}: {r.text}"
            time.sleep(0.1)


def test_keys_usage_and_a_call_in_both_languages(console_server: str, page: Any,
                                                 emulator: Any) -> None:
    base = console_server
    with _api(base) as api:
        r = api.post("/api/admin/llm-configs", json=llm_config_body(
            name="priced-nlu", base_url=emulator.base_url("vllm"), is_active=True, price=PRICE))
        assert r.status_code == 201, r.text

    login(page, base, route="/admin/service-keys")
    expect(page.get_by_test_id("keys-empty")).to_be_visible()
    page.get_by_test_id("new-key").click()
    dialog = page.get_by_test_id("key-dialog")
    dialog.get_by_label("名称").fill("外呼集群甲")
    dialog.get_by_label("活动").fill("renewals-q4")
    dialog.get_by_label("每分钟请求数").fill("600")
    dialog.get_by_role("button", name="保存").click()
    once = page.get_by_test_id("key-once")
    key = once.get_by_test_id("key-once-value").input_value()
    assert key.startswith("csk_")
    shot(page, "usage-zh-key-once")
    once.get_by_role("button", name="关闭", exact=True).last.click()
    row = page.get_by_test_id("keys-table").locator("tr[data-key-id]")
    expect(row).to_contain_text("renewals-q4")
    expect(row.get_by_test_id("key-limits")).to_contain_text("600")
    assert key not in page.content()  # shown once, never again

    dialer = {"Authorization": f"Bearer {key}"}
    for node in ("greet", "confirm_time"):
        r = httpx.post(f"{base}/api/nlu/decide", headers=dialer, timeout=30, json={
            "call_id": "c-browser-1", "node_id": node, "utterance": "可以",
            "intents": [{"name": "agree"}, {"name": "refuse"}], "fallback_intent": "refuse"})
        assert r.status_code == 200, r.text

    _written(base, "renewals-q4")  # the page reads the summary once: after the writer's flush
    page.goto(f"{base}/admin#/ai/usage?group_by=campaign")
    table = page.get_by_test_id("usage-table")
    campaign = table.locator("tr[data-group='renewals-q4']")
    expect(campaign).to_contain_text("CNY", timeout=15_000)
    expect(page.get_by_test_id("usage-chart").locator("rect")).to_have_count(30)  # 30 days
    shot(page, "usage-zh-usage")

    page.goto(f"{base}/admin#/ai/diagnostics")
    page.get_by_test_id("call-link").first.click()
    page.wait_for_url("**#/ai/call?id=c-browser-1")
    records = page.get_by_test_id("call-records").locator("tbody tr")
    expect(records).to_have_count(2)
    assert "greet" in records.nth(0).inner_text() and "confirm_time" in records.nth(1).inner_text()
    expect(page.get_by_test_id("call-totals")).to_contain_text("renewals-q4")
    shot(page, "usage-zh-call")

    # English: the same pages, no Chinese left but the data (the key's name).
    page.locator("#lang-toggle").click()
    expect(page.get_by_role("heading", name="Call")).to_be_visible()
    for route, name in (("/ai/call?id=c-browser-1", "call"), ("/ai/usage?group_by=key", "usage"),
                        ("/admin/service-keys", "keys")):
        page.goto(f"{base}/admin#{route}")
        page.wait_for_selector("[data-testid$='-table'], [data-testid='call-records']")
        page.wait_for_timeout(200)
        text = page.locator("#main").inner_text().replace("外呼集群甲", "")
        assert not HAN.search(text), (route, HAN.findall(text)[:10])
        shot(page, f"usage-en-{name}")
    assert page.errors == []  # type: ignore[attr-defined]
