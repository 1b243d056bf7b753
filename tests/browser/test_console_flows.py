"""Console flows in Chromium against the real server (`console_server`): the guard and the
login by keyboard, the remembered language, key handling, validation next to its field,
conflicts, test connection, history and rollback, activation, deletion, the diagnostics'
filters and keyset paging, and the 1024 px laptop.

Data is made through the real API (a second operator's session, the service token), so
what the console shows is what the server answers: no stand-in to drift from it.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import config_row, login, shot
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body

KEY = "gpustack_7f3a1234567890f1a2"
MASKED = "gpustack_7f3a****f1a2"


def _api(base: str) -> httpx.Client:
    """A second operator, logged in over HTTP (for conflicts made behind the page's back)."""
    c = httpx.Client(base_url=base, timeout=10)
    assert c.post("/api/auth/login", json={"username": "admin", "password": "admin-pass-123"}).status_code == 204
    c.headers["X-CSRF-Token"] = c.get("/api/auth/me").json()["csrf_token"]
    return c


def create_config(page: Any, name: str, *, tier: str = "nlu", model: str = "qwen3.5-2b", key: str = KEY,
                  base_url: str = "http://gpustack.internal/v1") -> None:
    page.get_by_role("button", name="+ 新建配置").click()
    dlg = page.locator("dialog[open]")
    dlg.get_by_label("名称").fill(name)
    dlg.get_by_label("层级").select_option(tier)
    dlg.get_by_label("接口地址").fill(base_url)
    dlg.get_by_label("模型").fill(model)
    if key:
        dlg.get_by_label("API Key").fill(key)
    dlg.get_by_role("button", name="保存").click()
    page.locator(f"tr:has(th:has-text('{name}'))").wait_for()


def test_login_page_accessible_and_guarded(page: Any, console_server: str) -> None:
    page.goto(f"{console_server}/admin#/ai/diagnostics")
    page.wait_for_url("**#/login?next=%2Fai%2Fdiagnostics")
    user = page.get_by_label("用户名")
    assert user.evaluate("el => el === document.activeElement"), "focus starts in the username field"
    assert page.get_by_label("密码").get_attribute("type") == "password"
    assert page.locator("nav.sidebar").is_hidden()
    shot(page, "01-login")
    # wrong password: an alert, the same text whatever part was wrong
    user.fill("admin")
    page.keyboard.press("Tab")
    page.keyboard.type("nope")
    page.keyboard.press("Enter")
    alert = page.locator(".login-form [role=alert]")
    alert.filter(has_text="用户名或密码错误").wait_for()
    shot(page, "01-login-error")
    # keyboard-only login lands on the page asked for
    page.get_by_label("密码").fill("admin-pass-123")
    page.keyboard.press("Enter")
    page.wait_for_url("**#/ai/diagnostics")
    assert page.locator("h1").evaluate("el => el === document.activeElement"), "focus moves to the page heading"
    assert page.locator(".sidebar a[aria-current=page]").inner_text() == "诊断记录"
    # logout drops the session: the guard sends us back
    page.get_by_role("button", name="退出登录").click()
    page.wait_for_url("**#/login")
    page.goto(f"{console_server}/admin#/ai/models")
    page.wait_for_url("**#/login?next=%2Fai%2Fmodels")
    assert not page.errors, page.errors


def test_language_toggle_is_remembered(page: Any, console_server: str) -> None:
    login(page, console_server)
    page.get_by_role("button", name="English").click()
    page.get_by_role("heading", name="Model configurations").wait_for()
    page.reload()
    page.get_by_role("link", name="Diagnostics").wait_for()
    assert page.evaluate("document.documentElement.lang") == "en"
    shot(page, "05-models-en")
    page.get_by_role("button", name="中文").click()
    page.get_by_role("heading", name="模型配置").wait_for()


def test_models_create_edit_keep_key_conflict_validation(page: Any, console_server: str) -> None:
    sent: list[tuple[str, str, dict[str, Any], dict[str, str]]] = []
    page.on("request", lambda r: sent.append((r.method, r.url, json.loads(r.post_data or "null") or {}, r.headers))
            if "/api/admin/llm-configs" in r.url and r.method in ("POST", "PUT") else None)
    login(page, console_server)
    create_config(page, "qwen-nlu")
    r = config_row(page, "qwen-nlu")
    assert MASKED in r.inner_text() and KEY not in page.content()
    assert sent[-1][2]["api_key"] == KEY and sent[-1][3].get("x-csrf-token")

    # edit, key untouched: no api_key sent, masked key kept
    r.get_by_role("button", name="编辑: qwen-nlu").click()
    dlg = page.locator("dialog[open]")
    assert dlg.get_by_test_id("api-key-masked").inner_text() == MASKED
    dlg.get_by_label("max_tokens").fill("400")
    shot(page, "02-models-edit")
    dlg.get_by_role("button", name="保存").click()
    dlg.wait_for(state="detached")
    method, _, body, _ = sent[-1]
    assert method == "PUT" and "api_key" not in body and body["version"] == 1 and body["max_tokens"] == 400
    config_row(page, "qwen-nlu").filter(has_text="版本 2").wait_for()
    assert MASKED in config_row(page, "qwen-nlu").inner_text()

    # validation error next to its field
    config_row(page, "qwen-nlu").get_by_role("button", name="编辑: qwen-nlu").click()
    dlg = page.locator("dialog[open]")
    dlg.get_by_label("接口地址").fill("ftp://nowhere")
    dlg.get_by_role("button", name="保存").click()
    err = dlg.locator(".field[data-field=base_url] .field-error")
    err.wait_for()
    assert "http" in err.inner_text()
    assert dlg.get_by_label("接口地址").get_attribute("aria-invalid") == "true"
    shot(page, "02-models-validation")
    dlg.get_by_label("接口地址").fill("http://gpustack.internal/v1")

    # someone else saves first: conflict, reload, save again
    other = _api(console_server)
    cid = other.get("/api/admin/llm-configs").json()["items"][0]["id"]
    cur = other.get(f"/api/admin/llm-configs/{cid}").json()
    assert other.put(f"/api/admin/llm-configs/{cid}", json={**cur, "max_tokens": 512}).status_code == 200
    dlg.get_by_label("max_tokens").fill("256")
    dlg.get_by_role("button", name="保存").click()
    conflict = dlg.get_by_test_id("version-conflict")
    conflict.wait_for()
    assert "有人在你之前修改" in conflict.inner_text()
    shot(page, "02-models-conflict")
    conflict.get_by_role("button", name="重新加载最新版本").click()
    expect(page.locator("dialog[open] input[name=max_tokens]")).to_have_value("512")
    page.locator("dialog[open]").get_by_role("button", name="保存").click()
    page.locator("dialog[open]").wait_for(state="detached")
    assert sent[-1][2]["version"] == 3

    # replace the key
    config_row(page, "qwen-nlu").get_by_role("button", name="编辑: qwen-nlu").click()
    dlg = page.locator("dialog[open]")
    dlg.get_by_role("button", name="更换 Key").click()
    dlg.get_by_label("新的 API Key").fill("sk-5e6f7a8b9c0d1e2f3a4b")
    dlg.get_by_role("button", name="保存").click()
    dlg.wait_for(state="detached")
    assert sent[-1][2]["api_key"] == "sk-5e6f7a8b9c0d1e2f3a4b"
    config_row(page, "qwen-nlu").filter(has_text="sk-5e6f****3a4b").wait_for()
    assert not page.errors, page.errors


def test_models_test_connection_history_rollback_activate_delete(page: Any, console_server: str,
                                                                 emulator: Any) -> None:
    login(page, console_server)
    # A model that always thinks: reasoning comes back although the chat tier switches it off.
    create_config(page, "think-chat", tier="chat", model=emulator.unique_model("qwen3-30b-a3b-thinking-2507"),
                  base_url=emulator.base_url("vllm"))
    r = config_row(page, "think-chat")
    r.get_by_role("button", name="测试连接: think-chat").click()
    result = page.get_by_test_id("test-result")
    result.get_by_test_id("test-status").wait_for()
    # Reasoning came back although thinking was switched off: the one thing to look at.
    assert "连接正常，1 项需注意" in result.get_by_test_id("test-status").inner_text()
    checks = result.get_by_test_id("test-checks")
    assert checks.locator("[data-check]").evaluate_all(
        "ls => ls.map(l => l.dataset.check + ':' + l.dataset.status)") == [
        "reachable:ok", "auth:ok", "model:ok", "thinking:warn", "answer:info"]
    assert "已请求关闭思考，但仍返回了思考内容" in checks.inner_text()
    assert "truncated" not in result.inner_text()
    shot(page, "02-models-test-connection")

    # edit twice, then roll the max_tokens change back
    other = _api(console_server)
    cid = next(c["id"] for c in other.get("/api/admin/llm-configs").json()["items"] if c["name"] == "think-chat")
    cur = other.get(f"/api/admin/llm-configs/{cid}").json()
    other.put(f"/api/admin/llm-configs/{cid}", json={**cur, "max_tokens": 64})
    page.reload()
    config_row(page, "think-chat").get_by_role("button", name="修改历史: think-chat").click()
    revs = page.get_by_test_id("revisions")
    revs.locator(".revision").first.wait_for()
    assert "max_tokens" in revs.inner_text() and "64" in revs.inner_text()
    shot(page, "02-models-history")
    revs.locator(".revision").first.get_by_role("button", name="回滚此修改").click()
    page.locator("dialog[open]").get_by_role("button", name="确认").click()
    page.get_by_text("已回滚").wait_for()
    assert other.get(f"/api/admin/llm-configs/{cid}").json()["max_tokens"] == 300
    assert other.get(f"/api/admin/llm-configs/{cid}").json()["has_api_key"] is True

    # activate: the chat tier's active config now comes from the database
    config_row(page, "think-chat").get_by_role("button", name="设为生效: think-chat").click()
    page.locator("dialog[open]").get_by_role("button", name="确认").click()
    page.get_by_test_id("active-chat").filter(has_text="数据库").wait_for()
    shot(page, "02-models")

    # delete asks first; cancel keeps it, confirm removes it
    config_row(page, "think-chat").get_by_role("button", name="删除: think-chat").click()
    page.locator("dialog[open]").get_by_role("button", name="取消").click()
    assert config_row(page, "think-chat").count() == 1
    config_row(page, "think-chat").get_by_role("button", name="删除: think-chat").click()
    page.locator("dialog[open]").get_by_role("button", name="删除").click()
    config_row(page, "think-chat").wait_for(state="detached")
    assert not page.errors, page.errors


NODE = {"node_id": "confirm_time", "utterance": "明天下午三点以后都可以", "fallback_intent": "refuse",
        "intents": [{"name": "agree", "description": "客户同意并给出时间"}, {"name": "refuse", "description": "客户拒绝"}]}


def seed_calls(base: str, emulator: Any, *, ok: int, truncated: int, existing: int = 0) -> int:
    """Real NLU calls through the service token: `truncated` whose reasoning eats the budget,
    then `ok` plain ones; returns once the call log holds them all (written in batches)."""
    model = emulator.unique_model("qwen3-8b")  # a hybrid thinking family
    if truncated:
        emulator.script_sync(model, {"reasoning_tokens": 4000, "content": '{"intent": "agree"}'}, times=truncated)
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30) as admin:
        r = admin.post("/api/admin/llm-configs", json=llm_config_body(
            name=f"diag-nlu-{model[-4:]}", model=model, base_url=emulator.base_url("vllm"), is_active=True))
        assert r.status_code == 201, r.text
        with httpx.Client(base_url=base, headers=SERVICE_HEADERS, timeout=30) as svc:
            for i in range(truncated + ok):
                body = {**NODE, "call_id": f"c-diag-{i:04d}"}
                if i < truncated:
                    body["overrides"] = {"max_tokens": 32, "enable_thinking": True}
                assert svc.post("/api/nlu/decide", json=body).status_code == 200
        deadline = time.monotonic() + 20
        while len(admin.get("/api/admin/diagnostics", params={"limit": 500}).json()["items"]) < existing + ok + truncated:
            assert time.monotonic() < deadline, "the call log did not catch up"
            time.sleep(0.1)
    return ok + truncated


def test_diagnostics_truncation_filters_paging(page: Any, console_server: str, emulator: Any) -> None:
    total = seed_calls(console_server, emulator, ok=20, truncated=2)
    login(page, console_server, route="/ai/diagnostics")
    page.get_by_test_id("diag-summary").locator("svg.chart").first.wait_for()
    assert page.get_by_test_id("diag-summary").locator(".summary-card").count() == 3
    nlu_count = page.get_by_test_id("diag-summary").locator("[data-tier=nlu] [data-testid=summary-count]")
    expect(nlu_count).to_have_text(str(total))
    # 查询 reads the cards again with the list: one more call shows up in both.
    total += seed_calls(console_server, emulator, ok=1, truncated=0, existing=total)
    page.get_by_role("button", name="查询").click()
    expect(nlu_count).to_have_text(str(total))
    table = page.get_by_test_id("diag-table")
    table.locator("tbody tr").first.wait_for()
    ids = [int(x) for x in table.locator("tbody tr.diag-row").evaluate_all("rs => rs.map(r => r.dataset.recordId)")]
    assert ids == sorted(ids, reverse=True), "newest first"
    trunc = table.locator("tr.row-truncated[data-code=truncated_by_reasoning]").first
    assert "调大 max_tokens 或关闭思考模式" in trunc.inner_text()
    trunc.locator("button.link-btn").click()
    detail = page.get_by_test_id("diag-detail")
    detail.get_by_test_id("diag-advice").wait_for()
    text = detail.inner_text()
    for needle in ("调大 max_tokens 或关闭思考模式", "结束原因", "length", "max_tokens", "思考 token 数", "输出 token 数"):
        assert needle in text, needle
    assert "finish_reason" not in text and "null" not in text
    shot(page, "03-diagnostics")
    # filter by code
    page.get_by_label("结果码", exact=True).select_option("truncated_by_reasoning")
    page.get_by_role("button", name="查询").click()
    expect(table.locator("tbody tr.diag-row:not([data-code=truncated_by_reasoning])")).to_have_count(0)
    expect(table.locator("tbody tr.diag-row")).not_to_have_count(0)
    assert "code=truncated_by_reasoning" in page.url
    # keyset paging
    page.get_by_role("button", name="重置").click()
    page.get_by_label("每页", exact=True).select_option("20")
    page.get_by_role("button", name="查询").click()
    expect(table.locator("tbody tr.diag-row")).to_have_count(20)
    page.get_by_role("button", name="加载更早的记录").click()
    page.get_by_role("button", name="加载更早的记录").wait_for(state="hidden")
    expect(table.locator("tbody tr.diag-row")).to_have_count(total)
    # A page longer than the screen: the sidebar's column is painted all the way down, also
    # where the one-screen-tall sidebar is not (a whole-page picture, a browser without sticky).
    assert page.evaluate("document.documentElement.scrollHeight > 2 * window.innerHeight")
    page.evaluate("document.querySelector('.sidebar').style.position = 'static'")
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    below = page.evaluate("""() => {
      const el = document.elementFromPoint(20, window.innerHeight - 5);
      return [el && el.id, getComputedStyle(document.getElementById('app')).backgroundImage];
    }""")
    assert below[0] == "app" and below[1].startswith("linear-gradient(90deg, rgb(255, 255, 255) 0px"), below
    page.evaluate("document.querySelector('.sidebar').style.position = ''")
    page.evaluate("window.scrollTo(0, 0)")
    assert not page.errors, page.errors


@pytest.mark.parametrize("route", ["/ai/models", "/ai/diagnostics", "/ai/playground",
                                   "/ai/lexicons"])
def test_fits_a_1024_wide_laptop(page: Any, console_server: str, route: str) -> None:
    page.set_viewport_size({"width": 1024, "height": 720})
    login(page, console_server, route=route)
    page.wait_for_timeout(400)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{route} scrolls sideways by {overflow}px at 1024 wide"
    shot(page, f"06-1024{route.replace('/', '-')}")
