"""Shadow evaluation in the console (Chromium, the real server on PostgreSQL, the emulator).

An operator starts an evaluation from a configuration row, watches its progress, reads the
comparison (agreement, latency chart, disagreements with the utterances), cancels another
one, and finds both in the list; in Chinese and in English. Screenshots:
test-artifacts/screenshots/real-05-evaluation-*.png.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import config_row, login, shot
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body

NODE = "browser-eval"
UTTERANCES = ["好的，明天可以", "明天没问题", "可以，明天吧", "行，就明天", "不用了谢谢", "我不需要这个服务"]


def answer(intent: str, time_slot: str | None) -> dict[str, Any]:
    import json

    return {"content": json.dumps({"intent": intent, "confidence": 0.9, "slots": {"time": time_slot}},
                                  ensure_ascii=False)}


def seed_traffic(base: str, emulator: Any) -> None:
    """Six recorded decisions on one node, made by a live model answering in a known order."""
    live = emulator.unique_model("qwen2.5-7b")
    for intent, slot in [("agree", "明天")] * 4 + [("refuse", None)] * 2:
        emulator.script_sync(live, answer(intent, slot), times=1)
    with httpx.Client(base_url=base, timeout=30) as c:
        r = c.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
            name="live-nlu", model=live, base_url=emulator.base_url("vllm"), is_active=True))
        assert r.status_code == 201, r.text
        for i, text in enumerate(UTTERANCES):
            r = c.post("/api/nlu/decide", headers=SERVICE_HEADERS, json={
                "call_id": f"be-{i}", "node_id": NODE, "utterance": text, "fallback_intent": "refuse",
                "intents": [{"name": "agree", "description": "同意"}, {"name": "refuse", "description": "拒绝"}],
                "slots": [{"name": "time", "description": "时间"}]})
            assert r.status_code == 200 and r.json()["intent"] == ("agree" if i < 4 else "refuse")
        # the call log writes in the background: wait until the six are there to replay
        for _ in range(200):
            items = c.get("/api/admin/diagnostics", headers=ADMIN_HEADERS,
                          params={"node_id": NODE}).json()["items"]
            if len(items) >= 6:
                break
            time.sleep(0.1)
        time.sleep(0.6)  # the inputs ride in the same batch as the records


def candidate(base: str, emulator: Any, name: str, reply: dict[str, Any]) -> str:
    model = emulator.unique_model("qwen2.5-7b")
    emulator.script_sync(model, reply)
    with httpx.Client(base_url=base, timeout=30, headers=ADMIN_HEADERS) as c:
        r = c.post("/api/admin/llm-configs", json=llm_config_body(
            name=name, model=model, base_url=emulator.base_url("vllm")))
        assert r.status_code == 201, r.text
    return model


def start_from_row(page: Any, name: str, calls: str) -> None:
    page.goto(page.url.split("#")[0] + "#/ai/models")
    row = config_row(page, name)
    row.get_by_role("button", name=f"用近期流量评估: {name}").click()
    dlg = page.get_by_test_id("eval-dialog")
    dlg.wait_for()
    # The recorded nodes are offered, with their calls.
    node = dlg.get_by_label("节点")
    assert "所有节点" in node.inner_text() and f"{NODE}（6 通）" in node.inner_text()
    node.select_option(NODE)
    dlg.get_by_label("通话数").fill(calls)
    before = page.url  # the report opened before: its own `?id=` matches the pattern too
    dlg.get_by_role("button", name="开始评估").click()
    page.wait_for_url(lambda url: "#/ai/evaluations?id=" in url and url != before)


def test_run_watch_read_cancel_and_list_an_evaluation(pg_url: str, console_server: str, emulator: Any,
                                                    page: Any) -> None:
    # pg_url first: a session fixture set up before the browser loop runs (async fixture)
    seed_traffic(console_server, emulator)
    # The candidate always says agree/明天, a little slowly: it disagrees on the last two calls.
    slow = answer("agree", "明天") | {"ttft_ms": 2500}
    candidate(console_server, emulator, "eval-candidate", slow)
    candidate(console_server, emulator, "eval-hang", {"hang": True})
    login(page, console_server)

    # the active row offers no evaluation of itself
    active_row = config_row(page, "live-nlu")
    active_row.wait_for()
    assert active_row.get_by_role("button", name="用近期流量评估: live-nlu").count() == 0

    start_from_row(page, "eval-candidate", "6")
    bar = page.get_by_test_id("eval-progress")
    bar.wait_for()
    assert bar.get_attribute("aria-valuemax") == "6"
    assert "{" not in page.get_by_test_id("eval-detail").inner_text()  # every placeholder filled
    # The screenshot at the first wave's end if the poll catches it (not asserted: timing).
    page.wait_for_function(
        "() => { const b = document.querySelector('[data-testid=eval-progress]');"
        " return !b || Number(b.getAttribute('aria-valuenow')) >= 4; }", timeout=30_000)
    shot(page, "real-05-evaluation-running")
    report = page.get_by_test_id("eval-report")
    report.wait_for(timeout=30_000)
    expect(page.get_by_test_id("eval-status").first).to_have_text("已完成")
    assert "66.7%" in page.get_by_test_id("eval-intent-agreement").inner_text()
    assert "66.7%" in page.get_by_test_id("eval-slot-agreement").inner_text()
    dis = page.get_by_test_id("eval-disagreements")
    expect(dis.locator("tbody tr")).to_have_count(2)
    assert "不用了谢谢" in dis.inner_text() and "我不需要这个服务" in dis.inner_text()
    assert "refuse" in dis.inner_text() and "agree" in dis.inner_text()
    chart = page.get_by_test_id("eval-latency-chart")
    assert "当时记录" in (chart.get_attribute("aria-label") or "")
    assert NODE in page.get_by_test_id("eval-nodes").inner_text()
    # The header says how many calls the numbers stand on (not just the limit asked for).
    expect(page.get_by_test_id("eval-replayed")).to_have_text("回放 6 通（上限 6）")
    shot(page, "real-05-evaluation-report", full_page=True)

    # a second one against a candidate that never answers: cancelled from the progress view
    start_from_row(page, "eval-hang", "6")
    page.get_by_test_id("eval-progress").wait_for()
    started = time.monotonic()
    page.get_by_role("button", name="取消评估").click()
    expect(page.get_by_test_id("eval-status").first).to_have_text("已取消", timeout=10_000)
    assert time.monotonic() - started < 8
    rows = page.get_by_test_id("eval-list").locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("已取消")  # the list is read again once it has ended
    expect(rows.nth(1)).to_contain_text("已完成")
    assert "没有回放完任何通话" in page.get_by_test_id("eval-detail").inner_text()
    shot(page, "real-05-evaluation-list", full_page=True)

    # the finished one, in English, at a laptop's width
    page.set_viewport_size({"width": 1024, "height": 768})
    page.get_by_role("button", name="English").click()
    rows.nth(1).get_by_role("link").click()
    page.get_by_test_id("eval-report").wait_for()
    assert "Intent agreement" in page.get_by_test_id("eval-intent-agreement").inner_text()
    expect(page.get_by_role("heading", name="Disagreements")).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"scrolls sideways by {overflow}px at 1024 wide"
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "real-05-evaluation-report-en")
    page.get_by_role("button", name="中文").click()
    page.set_viewport_size({"width": 1280, "height": 720})

    # From the page itself: a candidate among the inactive NLU configurations, a recorded node.
    page.get_by_test_id("eval-new").click()
    dlg = page.get_by_test_id("eval-dialog")
    dlg.wait_for()  # opens once the candidates and the recorded nodes are read
    candidates = dlg.get_by_label("候选配置").locator("option").all_inner_texts()
    assert any(c.startswith("eval-candidate") for c in candidates) and not any("live-nlu" in c for c in candidates)
    dlg.get_by_label("候选配置").select_option(label=next(c for c in candidates if c.startswith("eval-candidate")))
    dlg.get_by_label("节点").select_option(NODE)
    dlg.get_by_role("button", name="开始评估").click()
    page.wait_for_url("**#/ai/evaluations?id=*")
    # The new evaluation's own view: until it is drawn the page may still show the report
    # opened before (a busy machine), whose button would activate from the wrong one.
    new_id = page.url.rsplit("id=", 1)[1]
    expect(page.get_by_test_id("eval-detail").get_by_role("heading", level=2)).to_contain_text(
        f"#{new_id}", timeout=15_000)
    page.get_by_test_id("eval-report").wait_for(timeout=30_000)
    # ...and what the report is for, one step away: activate the candidate.
    page.get_by_test_id("eval-activate").click()
    page.locator("dialog[open]").get_by_role("button", name="确认").click()
    expect(page.get_by_test_id("eval-detail")).to_contain_text("该候选已是生效配置")
    with httpx.Client(base_url=console_server, headers=ADMIN_HEADERS, timeout=10) as c:
        assert c.get("/api/admin/llm-active").json()["tiers"]["nlu"]["config"]["name"] == "eval-candidate"
    assert not page.errors, page.errors
