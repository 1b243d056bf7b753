"""Canary rollout in the console (Chromium, the real server on PostgreSQL, the emulator).

An operator starts a canary from a configuration row, sees both sides' figures fill in as
live calls arrive, finds the banner on the models page, and promotes it (in Chinese); a
second canary, started from an evaluation report's button, is stopped in English (after a
422 shown on its field); a viewer
reads a canary without its buttons; a rolled-back canary says why; a chat configuration
offers a canary (its dialog says what a chat fallback is), a script one none. Screenshots:
test-artifacts/screenshots/real-06-canary-*.png.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import config_row, login, shot
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body


def _config(base: str, emulator: Any, name: str, content: str, **fields: Any) -> dict[str, Any]:
    model = emulator.unique_model("qwen2.5-7b")
    emulator.script_sync(model, {"content": content})
    with httpx.Client(base_url=base, timeout=30, headers=ADMIN_HEADERS) as c:
        r = c.post("/api/admin/llm-configs", json=llm_config_body(
            **{"name": name, "model": model, "base_url": emulator.base_url("vllm"), **fields}))
        assert r.status_code == 201, r.text
        return dict(r.json())


def _traffic(base: str, n: int, prefix: str) -> None:
    with httpx.Client(base_url=base, timeout=30, headers=SERVICE_HEADERS) as c:
        for i in range(n):
            r = c.post("/api/nlu/decide", json={
                "call_id": f"{prefix}-{i}", "node_id": "browser-canary", "utterance": "好的",
                "intents": [{"name": "agree"}, {"name": "refuse"}], "fallback_intent": "refuse"})
            assert r.status_code == 200, r.text


def _start_from_row(page: Any, name: str, percent: str, *, expect_text: str | None = None) -> Any:
    """The "灰度" button on configuration `name`'s row, its dialog filled in: the running canary."""
    config_row(page, name).get_by_role("button", name=f"以此配置开始灰度发布: {name}").click()
    dlg = page.get_by_test_id("canary-dialog")
    if expect_text is not None:
        expect(dlg).to_contain_text(expect_text)
    dlg.get_by_label("灰度比例（%）").fill(percent)
    dlg.get_by_label("最少调用数").fill("1000")
    dlg.get_by_test_id("canary-submit").click()
    page.wait_for_url("**#/ai/canaries?id=*")
    detail = page.get_by_test_id("canary-detail")
    expect(detail.get_by_test_id("canary-status")).to_have_text("进行中")
    return detail


def _set_lang(page: Any, lang: str) -> None:
    toggle = page.locator("#lang-toggle")
    if (toggle.inner_text() == "English") == (lang == "en"):
        toggle.click()


def test_start_watch_promote_stop_and_read_a_canary(page: Any, console_server: str,
                                                     emulator: Any) -> None:
    base = console_server
    intent = '{"intent": "%s", "confidence": 0.9, "slots": {}}'
    _config(base, emulator, "live-nlu", intent % "agree", is_active=True)
    cand = _config(base, emulator, "cand-nlu", intent % "refuse")
    login(page, base)

    # Start from the configuration row (Chinese).
    detail = _start_from_row(page, "cand-nlu", "50")
    _traffic(base, 60, "zh")
    sides = detail.get_by_test_id("canary-sides")
    expect(sides.locator("tbody tr").first.locator("td").nth(1)).not_to_have_text("0", timeout=15_000)
    shot(page, "real-06-canary-running")

    page.goto(f"{base}/admin#/ai/models")
    banner = page.get_by_test_id("canary-banner")
    expect(banner).to_contain_text("cand-nlu")
    expect(banner).to_contain_text("50%")
    shot(page, "real-06-canary-banner")
    banner.get_by_role("link").click()
    page.wait_for_url("**#/ai/canaries?id=*")
    page.get_by_test_id("canary-promote").click()
    page.get_by_role("button", name="确认").click()
    expect(detail.get_by_test_id("canary-status")).to_have_text("已推广")
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS) as c:
        active = c.get("/api/admin/llm-active").json()["tiers"]["nlu"]["config"]
    assert active["id"] == cand["id"]
    page.goto(f"{base}/admin#/ai/models")
    config_row(page, "cand-nlu").wait_for()
    expect(page.get_by_test_id("canary-banner")).to_have_count(0)

    # A second one from an evaluation report, in English, then stopped.
    other = _config(base, emulator, "next-nlu", intent % "agree")
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30) as c:
        r = c.post("/api/admin/evaluations", json={"candidate_id": other["id"], "limit": 5})
        assert r.status_code == 202, r.text
        evaluation = r.json()["id"]
        deadline = time.monotonic() + 30
        while c.get(f"/api/admin/evaluations/{evaluation}").json()["status"] == "running":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    _set_lang(page, "en")
    page.goto(f"{base}/admin#/ai/evaluations?id={evaluation}")
    page.get_by_test_id("eval-canary").click()
    dlg = page.get_by_test_id("canary-dialog")
    dlg.get_by_label("Share of calls (%)").fill("0")
    dlg.get_by_test_id("canary-submit").click()
    expect(dlg.locator(".field-error").first).to_be_visible()  # the server's 422, on its field
    dlg.get_by_label("Share of calls (%)").fill("10")
    dlg.get_by_test_id("canary-submit").click()
    page.wait_for_url("**#/ai/canaries?id=*")
    expect(detail.get_by_test_id("canary-status")).to_have_text("running")
    expect(detail.get_by_test_id("canary-sides")).to_contain_text("Canary side")
    shot(page, "real-06-canary-english")
    page.get_by_test_id("canary-stop").click()
    page.get_by_role("button", name="Confirm").click()
    expect(detail.get_by_test_id("canary-status")).to_have_text("stopped")
    assert page.errors == []  # type: ignore[attr-defined]

    # A limit crossed: rolled back by itself, and the page says why.
    broken = _config(base, emulator, "broken-nlu", "no JSON")
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30) as c:
        r = c.post("/api/admin/canaries", json={"candidate_id": broken["id"], "percent": 100,
                                                 "rollback": {"max_fallback_rate": 0.1, "min_calls": 3}})
        assert r.status_code == 201, r.text
        canary_id = r.json()["id"]
        _traffic(base, 5, "bad")
        deadline = time.monotonic() + 15
        while c.get(f"/api/admin/canaries/{canary_id}").json()["status"] == "running":
            assert time.monotonic() < deadline
            _traffic(base, 1, f"bad-{time.monotonic_ns()}")
    page.goto(f"{base}/admin#/ai/canaries?id={canary_id}")
    expect(detail.get_by_test_id("canary-status")).to_have_text("rolled back")
    expect(detail.get_by_test_id("canary-reason")).to_contain_text("fallback rate")
    _set_lang(page, "zh")
    expect(detail.get_by_test_id("canary-reason")).to_contain_text("回退率")
    shot(page, "real-06-canary-rolled-back")
    assert other["id"] != broken["id"]


def test_a_viewer_reads_a_canary_without_its_buttons(page: Any, console_server: str,
                                                      emulator: Any) -> None:
    base = console_server
    cand = _config(base, emulator, "viewer-cand", '{"intent": "agree", "confidence": 0.9, "slots": {}}')
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30) as c:
        r = c.post("/api/admin/users", json={"username": "vera", "password": "vera-secret-pass",
                                             "role": "viewer"})
        assert r.status_code == 201, r.text
        running = [x for x in c.get("/api/admin/canaries").json()["items"] if x["status"] == "running"]
        for x in running:
            c.post(f"/api/admin/canaries/{x['id']}/stop")
        r = c.post("/api/admin/canaries", json={"candidate_id": cand["id"], "percent": 5,
                                                 "rollback": {"min_calls": 100}})
        assert r.status_code == 201, r.text
        canary_id = r.json()["id"]
    login(page, base, user="vera", password="vera-secret-pass")
    expect(page.get_by_test_id("canary-banner")).to_contain_text("viewer-cand")
    expect(config_row(page, "viewer-cand").get_by_role("button", name="以此配置开始灰度发布: viewer-cand")).to_have_count(0)
    page.goto(f"{base}/admin#/ai/canaries?id={canary_id}")
    detail = page.get_by_test_id("canary-detail")
    expect(detail.get_by_test_id("canary-status")).to_have_text("进行中")
    expect(detail.get_by_test_id("canary-promote")).to_have_count(0)
    expect(detail.get_by_test_id("canary-stop")).to_have_count(0)


def test_a_chat_configuration_offers_a_canary_a_script_one_none(
        page: Any, console_server: str, emulator: Any) -> None:
    base = console_server
    _config(base, emulator, "cand-chat", "您好。", tier="chat")
    _config(base, emulator, "cand-script", "【开场白】", tier="script")
    login(page, base)
    config_row(page, "cand-script").wait_for()
    expect(config_row(page, "cand-script").get_by_role("button", name="编辑: cand-script")).to_be_visible()
    expect(config_row(page, "cand-script").get_by_role(
        "button", name="以此配置开始灰度发布: cand-script")).to_have_count(0)
    # The dialog says what a chat turn's fallback is.
    _start_from_row(page, "cand-chat", "20", expect_text="顾客打断不算")
    canary_id = page.url.rsplit("=", 1)[1]
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30) as c:
        canary = c.get(f"/api/admin/canaries/{canary_id}").json()
        assert (canary["tier"], canary["candidate"]["name"]) == ("chat", "cand-chat")
        assert c.post(f"/api/admin/canaries/{canary_id}/stop").status_code == 200
    assert page.errors == []  # type: ignore[attr-defined]
