"""The console in Chromium against the real callout-server (PostgreSQL + the vendor emulator).

Screenshots of each page go
to test-artifacts/screenshots/real-*.png.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOT_DIR, config_row, login, shot
from tests.fixtures.app import free_port
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body

KEY = "sk-7f3a1234567890abcd"
MASKED = "sk-7f3a****abcd"


def admin(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30)


def active_config(base: str, emulator: Any, tier: str, model: str, **fields: Any) -> dict[str, Any]:
    """Create and activate a configuration over the admin API (bearer token)."""
    with admin(base) as c:
        r = c.post("/api/admin/llm-configs", json=llm_config_body(
            tier=tier, model=model, base_url=emulator.base_url("vllm"), is_active=True, **fields))
        assert r.status_code == 201, r.text
        return dict(r.json())


def test_console_page_and_assets(console_server: str) -> None:
    r = httpx.get(f"{console_server}/admin")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert r.headers["x-frame-options"] == "DENY" and r.headers["referrer-policy"] == "no-referrer"
    assert httpx.get(f"{console_server}/admin/").status_code == 200
    assets = re.findall(r'(?:src|href)="(/admin/static/[^"]+)"', r.text)
    assert assets and all("?v=" in a for a in assets), assets  # a new deploy busts the cache
    for asset in assets:
        assert httpx.get(f"{console_server}{asset}").status_code == 200, asset


def test_login_page_renders_accessibly(page: Any, console_server: str) -> None:
    page.goto(f"{console_server}/admin")
    page.wait_for_url("**#/login**")
    user, password = page.get_by_label("用户名"), page.get_by_label("密码")
    assert user.is_visible() and password.is_visible()
    assert password.get_attribute("type") == "password"
    assert user.get_attribute("autocomplete") == "username"
    assert user.evaluate("el => el === document.activeElement")
    assert page.get_by_role("heading", name="登录").is_visible()
    shot(page, "real-01-login")
    assert not page.errors, page.errors


@pytest.mark.parametrize("route", ["/ai/models", "/ai/diagnostics", "/ai/playground"])
def test_every_page_but_login_needs_a_session(page: Any, console_server: str, route: str) -> None:
    page.goto(f"{console_server}/admin#{route}")
    page.wait_for_url(f"**#/login?next={route.replace('/', '%2F')}")
    assert page.locator("nav.sidebar").is_hidden()


def test_login_and_logout(page: Any, console_server: str) -> None:
    page.goto(f"{console_server}/admin#/ai/models")
    page.get_by_label("用户名").fill("admin")
    page.get_by_label("密码").fill("wrong-password")
    page.get_by_role("button", name="登录", exact=True).click()
    page.locator(".login-form [role=alert]").filter(has_text="用户名或密码错误").wait_for()
    page.get_by_label("密码").fill("admin-pass-123")
    page.get_by_role("button", name="登录", exact=True).click()
    page.wait_for_url("**#/ai/models")
    page.get_by_role("button", name="退出登录").click()
    page.wait_for_url("**#/login")
    page.goto(f"{console_server}/admin#/ai/diagnostics")
    page.wait_for_url("**#/login?next=%2Fai%2Fdiagnostics")


def test_models_create_edit_conflict_and_test_connection(page: Any, console_server: str, emulator: Any) -> None:
    sent: list[dict[str, Any]] = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data or "{}"))
            if r.method == "PUT" and "/api/admin/llm-configs/" in r.url else None)
    model = emulator.unique_model("qwen3.5-2b")
    login(page, console_server)
    page.get_by_role("button", name="+ 新建配置").click()
    dlg = page.locator("dialog[open]")
    dlg.get_by_label("名称").fill("browser-nlu")
    dlg.get_by_label("接口地址").fill(emulator.base_url("vllm"))
    dlg.get_by_label("模型").fill(model)
    dlg.get_by_label("API Key").fill(KEY)
    # The vendor select is the server's dialect rows, the fallback included.
    vendor = dlg.get_by_label("厂商方言")
    options = vendor.locator("option").evaluate_all("os => os.map(o => [o.value, o.textContent])")
    assert ["selfhosted", "Self-hosted OpenAI-compatible (selfhosted)"] in options
    assert ["deepseek", "DeepSeek (deepseek)"] in options and options[0][0] == ""
    vendor.select_option("vllm")
    dlg.get_by_role("button", name="保存").click()
    row = config_row(page, "browser-nlu")
    row.wait_for()
    assert MASKED in row.inner_text() and KEY not in page.content()

    # edit with the key untouched: kept, and never sent
    row.get_by_role("button", name="编辑: browser-nlu").click()
    dlg = page.locator("dialog[open]")
    assert dlg.get_by_test_id("api-key-masked").inner_text() == MASKED
    dlg.get_by_label("max_tokens").fill("256")
    dlg.get_by_role("button", name="保存").click()
    dlg.wait_for(state="detached")
    assert "api_key" not in sent[-1]
    row.filter(has_text=MASKED).wait_for()
    shot(page, "real-02-models")

    # a version conflict
    cid = int(row.get_attribute("data-config-id") or 0)
    row.get_by_role("button", name="编辑: browser-nlu").click()
    with admin(console_server) as c:
        cur = c.get(f"/api/admin/llm-configs/{cid}").json()
        assert cur["vendor"] == "vllm"  # chosen from the server's list above
        assert c.put(f"/api/admin/llm-configs/{cid}", json={**llm_config_body(**{
            k: cur[k] for k in ("tier", "name", "base_url", "model", "max_tokens")}), "version": cur["version"],
            "max_tokens": 512}).status_code == 200
    dlg = page.locator("dialog[open]")
    dlg.get_by_label("max_tokens").fill("128")
    dlg.get_by_role("button", name="保存").click()
    dlg.get_by_test_id("version-conflict").wait_for()
    shot(page, "real-02-models-conflict")
    dlg.get_by_role("button", name="重新加载最新版本").click()
    expect(page.locator("dialog[open] input[name=max_tokens]")).to_have_value("512")
    page.locator("dialog[open]").get_by_role("button", name="取消").click()

    # test connection against the emulator
    row.get_by_role("button", name="测试连接: browser-nlu").click()
    result = page.get_by_test_id("test-result")
    result.get_by_test_id("test-status").wait_for(timeout=30_000)
    assert result.get_by_test_id("test-status").inner_text() == "连接正常", result.inner_text()
    assert "ms" in result.inner_text()
    # What was tested, each with its verdict; the test's own small cap is no warning.
    checks = result.get_by_test_id("test-checks")
    assert checks.locator("[data-check]").evaluate_all(
        "ls => ls.map(l => l.dataset.check + ':' + l.dataset.status)") == [
        "reachable:ok", "auth:ok", "model:ok", "thinking:ok", "answer:ok"], checks.inner_text()
    assert "已抑制" in checks.inner_text()
    assert result.locator(".diag-box").count() == 0 and "truncated" not in result.inner_text()
    page.locator(".toast").last.wait_for(state="detached", timeout=10_000)  # a clear picture
    page.get_by_test_id("detail-panel").scroll_into_view_if_needed()
    shot(page, "real-02-models-test-connection")
    # The same checks in English.
    page.get_by_role("button", name="English").click()
    row.get_by_role("button", name="Test connection: browser-nlu").click()
    status = result.get_by_test_id("test-status")
    status.filter(has_text="Connection OK").wait_for(timeout=30_000)
    assert "Suppressed: no reasoning came back" in result.inner_text()
    assert "the test reads only 16 tokens" in result.inner_text()
    page.get_by_test_id("detail-panel").scroll_into_view_if_needed()
    shot(page, "real-02-models-test-connection-en")
    page.get_by_role("button", name="中文").click()
    assert not page.errors, page.errors


def test_moving_a_keyed_config_to_another_host_asks_for_the_key(page: Any, console_server: str,
                                                               emulator: Any) -> None:
    sent: list[dict[str, Any]] = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data or "{}"))
            if r.method == "PUT" and "/api/admin/llm-configs/" in r.url else None)
    name = f"host-move-{int(time.time() * 1000) % 100000}"
    home = emulator.base_url("vllm")
    with admin(console_server) as c:
        r = c.post("/api/admin/llm-configs", json=llm_config_body(name=name, base_url=home, api_key=KEY))
        assert r.status_code == 201, r.text
    login(page, console_server)
    row = config_row(page, name)
    row.get_by_role("button", name=f"编辑: {name}").click()
    dlg = page.locator("dialog[open]")
    banner = dlg.get_by_test_id("key-host-changed")
    assert banner.count() == 0

    # Same host, another path: the key is kept, nothing asked.
    dlg.get_by_label("接口地址").fill(home.replace("/vllm/v1", "/openai/v1"))
    assert banner.count() == 0 and dlg.get_by_label("新的 API Key").count() == 0
    # Another port: the form says why and asks for the key; saving without one is refused here.
    dlg.get_by_label("接口地址").fill("http://127.0.0.1:1/v1")
    banner.wait_for()
    assert "不会发往新主机" in banner.inner_text()
    assert dlg.get_by_role("button", name="保持原 Key").count() == 0  # not a choice any more
    dlg.get_by_role("button", name="保存").click()
    dlg.locator(".field-error", has_text="接口地址换了主机").wait_for()
    assert sent == []
    shot(page, "real-02-models-host-moved")
    # Back to the stored host: back to "keep", no question.
    dlg.get_by_label("接口地址").fill(home)
    banner.wait_for(state="detached")
    assert dlg.get_by_test_id("api-key-masked").inner_text() == MASKED
    # Another host with the key for it: saved, and the key went with the request.
    new_key = "sk-9z8y7x6w5v4u3t2s1r"
    dlg.get_by_label("接口地址").fill("http://127.0.0.1:1/v1")
    dlg.get_by_label("新的 API Key").fill(new_key)
    dlg.get_by_role("button", name="保存").click()
    dlg.wait_for(state="detached")
    assert sent[-1]["api_key"] == new_key and sent[-1]["base_url"] == "http://127.0.0.1:1/v1"
    row.filter(has_text="sk-9z8y****2s1r").wait_for()

    # The same question in English.
    page.get_by_role("button", name="English").click()
    row.get_by_role("button", name=f"Edit: {name}").click()
    dlg = page.locator("dialog[open]")
    dlg.get_by_label("Base URL").fill(home)
    assert "never sent to a new host" in dlg.get_by_test_id("key-host-changed").inner_text()
    dlg.get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="中文").click()
    assert not page.errors, page.errors


def test_truncation_diagnostic_with_advice(page: Any, console_server: str, emulator: Any) -> None:
    model = emulator.unique_model("qwen3-8b")  # a thinking family: reasoning spends the whole budget
    emulator.script_sync(model, {"reasoning_tokens": 4000, "content": '{"intent": "agree"}'})
    active_config(console_server, emulator, "nlu", model, max_tokens=32, enable_thinking=True)
    login(page, console_server, route="/ai/playground")
    page.get_by_label("兜底意图").select_option("refuse")
    page.get_by_role("button", name="识别").click()
    page.get_by_test_id("nlu-result").locator(".diag-box").wait_for(timeout=30_000)
    assert "truncated_by_reasoning" in page.get_by_test_id("nlu-result").inner_text()
    shot(page, "real-04-playground-nlu-truncated")
    # The call log is written in the background (batched): wait for the record, then look.
    with admin(console_server) as api:
        for _ in range(100):
            found = api.get("/api/admin/diagnostics",
                            params={"code": "truncated_by_reasoning", "model": model}).json()
            if found["items"]:
                break
            time.sleep(0.1)
    page.goto(f"{console_server}/admin#/ai/diagnostics?code=truncated_by_reasoning&model={model}")
    trunc = page.locator("tr.row-truncated[data-code=truncated_by_reasoning]").first
    trunc.wait_for(timeout=15_000)
    trunc.locator("button.link-btn").click()
    detail = page.get_by_test_id("diag-detail")
    detail.get_by_test_id("diag-advice").wait_for()
    text = detail.inner_text()
    assert "max_tokens" in text and "思考 token 数" in text and "尝试次数" in text
    # Chinese details: labels, not wire keys; "—", not null / false / []
    for raw in ("finish_reason", "attempts", "reasoning_tokens", "null", "false", "[]"):
        assert raw not in text, (raw, text)
    shot(page, "real-03-diagnostics")
    assert not page.errors, page.errors


def test_playground_nlu_and_streamed_chat_with_cancel(page: Any, console_server: str, emulator: Any) -> None:
    nlu_model = emulator.unique_model("qwen3.5-2b")
    emulator.script_sync(nlu_model, {"content": '{"intent": "agree", "confidence": 0.9, "slots": {"time": "明天下午三点以后"}}'})
    active_config(console_server, emulator, "nlu", nlu_model)
    chat_model = emulator.unique_model("qwen3.5-2b")
    long_text = "".join(f"这是第{i}句话，用来测试打断。" for i in range(1, 40))
    emulator.script_sync(chat_model, {"content": long_text, "token_delay_ms": 120}, times=1)
    active_config(console_server, emulator, "chat", chat_model, max_tokens=2000)

    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    login(page, console_server, route="/ai/playground")
    page.get_by_role("button", name="识别").click()
    out = page.get_by_test_id("nlu-json")
    out.wait_for(timeout=30_000)
    assert json.loads(out.inner_text())["intent"] == "agree"
    shot(page, "real-04-playground-nlu")

    page.get_by_role("tab", name="流式对话").click()
    page.get_by_role("button", name="开始会话").click()
    page.get_by_test_id("chat-session").filter(has_text="playground-").wait_for()
    page.get_by_label("你的消息").fill("宽带还行吧")
    page.get_by_role("button", name="发送").click()
    page.get_by_test_id("sentences").last.locator("li").first.wait_for(timeout=30_000)
    page.get_by_test_id("barge-in").click()
    end = page.get_by_test_id("turn-end").last
    end.wait_for(timeout=15_000)
    assert end.get_attribute("data-reason") == "cancelled"
    shot(page, "real-04-playground-chat")
    # The next turn runs to its end (the emulator's stock reply).
    page.get_by_label("你的消息").fill("好的")
    page.get_by_role("button", name="发送").click()
    page.get_by_test_id("turn-end").nth(1).wait_for(timeout=30_000)
    assert page.get_by_test_id("turn-end").nth(1).get_attribute("data-reason") == "completed"

    # Script generation streams in with its progress (config.toml's script tier on the emulator).
    page.get_by_role("tab", name="话术生成").click()
    page.get_by_role("button", name="生成话术").click()
    page.get_by_test_id("script-progress").filter(has_text="完成").wait_for(timeout=60_000)
    assert "【" in page.get_by_test_id("script-output").inner_text()
    shot(page, "real-04-playground-script")
    # The script was kept as a draft: one click to read (and edit) it.
    page.get_by_test_id("script-draft").get_by_role("link", name="查看草稿").click()
    page.wait_for_url("**#/ai/scripts?id=*")
    expect(page.get_by_test_id("draft-script")).to_contain_text("【")

    # The playground's turns are no live traffic; the dialer's are. The chat card counts the
    # dialer's barge-in apart, with time to first token beside the latency.
    _dialer_chat_with_a_barge_in(console_server)
    with admin(console_server) as api:
        for _ in range(100):
            if len(api.get("/api/admin/diagnostics", params={"tier": "chat", "source": "live"})
                   .json()["items"]) >= 2:
                break
            time.sleep(0.1)
        played = api.get("/api/admin/diagnostics", params={"tier": "chat", "source": "playground"})
        assert len(played.json()["items"]) >= 2, played.text  # the console's turns above
    page.goto(f"{console_server}/admin#/ai/diagnostics")
    chat = page.get_by_test_id("diag-summary").locator("[data-tier=chat]")
    expect(chat.get_by_test_id("summary-cancelled")).to_have_text("其中 1 次被打断")
    expect(chat.get_by_test_id("summary-latency")).to_contain_text("不含被打断")
    expect(chat.get_by_test_id("summary-ttft")).to_contain_text("首字延迟")
    origin = urlparse(console_server).netloc
    assert all(urlparse(u).netloc == origin for u in requests if u.startswith("http")), "nothing leaves the server"
    assert not page.errors, page.errors


def _dialer_chat_with_a_barge_in(base: str) -> None:
    """A dialer's two turns (service token): one heard to its end, one cut by `cancel`."""
    with httpx.Client(base_url=base, headers=SERVICE_HEADERS, timeout=30) as svc:
        r = svc.post("/api/chat/sessions", json={"call_id": "dialer-1", "system_prompt": "你是客服"})
        assert r.status_code == 201, r.text
        r = svc.post("/api/chat/sessions/dialer-1/turns", json={"turn_id": "t1", "text": "你好"})
        assert '"reason":"completed"' in r.text, r.text
        with svc.stream("POST", "/api/chat/sessions/dialer-1/turns",
                        json={"turn_id": "t2", "text": "再说一遍", "output": "text"}) as turn:
            lines = turn.iter_lines()
            for line in lines:
                if '"text_delta"' in line:
                    break
            assert svc.post("/api/chat/sessions/dialer-1/cancel").status_code == 204
            assert any('"reason":"cancelled"' in line for line in lines)


def test_console_details_for_a_first_time_operator(page: Any, console_server: str, emulator: Any) -> None:
    """Key hints that fit the case, no rollback of a creation, an empty result that says what
    comes, one date format, and a 1024 px laptop where nothing is squeezed or out of line."""
    model = emulator.unique_model("qwen3.5-2b")
    emulator.script_sync(model, {"content": "好的，我明白您的意思了。我们会尽快安排专人跟进。"})
    name = f"details-{int(time.time() * 1000) % 100000}"
    with admin(console_server) as c:
        created = c.post("/api/admin/llm-configs", json=llm_config_body(
            name=name, model=model, base_url=emulator.base_url("vllm"), max_tokens=4, is_active=True)).json()
        assert c.put(f"/api/admin/llm-configs/{created['id']}", json={
            "version": created["version"], "max_tokens": 6}).status_code == 200
        r = c.post("/api/nlu/decide", json={"call_id": "details-1", "utterance": "好的",
                                            "intents": [{"name": "agree"}], "fallback_intent": "agree"})
        assert r.json()["fallback"] is True  # truncated at 6 tokens: a record for the list
    page.set_viewport_size({"width": 1024, "height": 768})
    login(page, console_server)

    # Create: nothing to keep yet, so no "leave it to keep the key".
    page.get_by_role("button", name="+ 新建配置").click()
    dlg = page.locator("dialog[open]")
    hint = dlg.get_by_test_id("key-hint").inner_text()
    assert "留空" in hint and "保留原 Key" not in hint, hint
    dlg.get_by_role("button", name="取消").click()
    # Edit a configuration without a key: "set", not "replace" or "keep".
    row = config_row(page, name)
    row.get_by_role("button", name=f"编辑: {name}").click()
    dlg = page.locator("dialog[open]")
    assert "还没有 Key" in dlg.get_by_test_id("key-hint").inner_text()
    assert dlg.get_by_role("button", name="设置 Key").count() == 1
    assert dlg.get_by_role("button", name="更换 Key").count() == 0
    dlg.get_by_role("button", name="取消").click()

    # History: the update can be rolled back, the creation cannot (it has no earlier values).
    row.get_by_role("button", name=f"修改历史: {name}").click()
    revs = page.get_by_test_id("revisions")
    revs.locator(".revision").first.wait_for()
    assert revs.locator(".revision[data-revision-version='2'] button", has_text="回滚此修改").count() == 1
    first = revs.locator(".revision[data-revision-version='1']")
    assert first.locator("button").count() == 0
    assert first.locator("thead th").all_inner_texts() == ["字段", "值"]

    # 1024 px: the configurations table fits, its action buttons line up from row to row,
    # and the actions cell is still a table cell (its separator in line with the others).
    table_wrap = page.locator(".table-wrap:has([data-testid=configs-table])")
    shot(page, "real-05-models-1024")
    assert table_wrap.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    xs = page.locator("[data-testid=configs-table] .act-test").evaluate_all(
        "bs => bs.map(b => Math.round(b.getBoundingClientRect().left))")
    assert len(xs) >= 2 and len(set(xs)) == 1, xs
    assert page.locator("[data-testid=configs-table] td:has(.cell-actions)").first.evaluate(
        "td => getComputedStyle(td).display") == "table-cell"
    shot(page, "real-05-models-1024")

    # Diagnostics: one date format whatever the browser's, checked before it is sent.
    sent: list[str] = []
    page.on("request", lambda req: sent.append(req.url) if "/api/admin/diagnostics?" in req.url else None)
    page.goto(f"{console_server}/admin#/ai/diagnostics")
    since = page.get_by_label("起始时间")
    assert since.get_attribute("type") == "text" and since.get_attribute("placeholder") == "YYYY-MM-DD HH:mm"
    page.locator("tr.diag-row").first.wait_for(timeout=15_000)
    since.fill("12/01/2026")
    page.get_by_role("button", name="查询").click()
    page.locator(".field-error", has_text="2026-12-01 09:30").wait_for()  # the format, by example
    since.fill("2026-12-01 09:30")
    page.get_by_role("button", name="查询").click()
    page.wait_for_function("() => !document.querySelector('.field-error:not([hidden])')")
    expect(page.locator(".list-status")).not_to_be_empty()
    assert any("since=2026-12-01T01%3A30%3A00.000Z" in u for u in sent), sent  # Asia/Shanghai
    # ... and the message column keeps its room at 1024 px (the model moves under the code).
    page.goto(f"{console_server}/admin#/ai/diagnostics?model={model}")
    message = page.locator("tr.diag-row td.cell-message").first
    message.wait_for(timeout=15_000)
    assert message.evaluate("td => td.getBoundingClientRect().width") >= 240
    assert page.locator("tr.diag-row .narrow-only").first.is_visible()
    shot(page, "real-05-diagnostics-1024")

    # Playground: before the first run the result says what will appear there; a slot's
    # description keeps its width, and enum values get a line of their own.
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{console_server}/admin#/ai/playground")
    assert "决策 JSON 与延迟显示在这里" in page.get_by_test_id("nlu-result").inner_text()
    desc = page.locator("[data-testid=slot-rows] input[name=slot_desc]").first
    assert desc.evaluate("el => el.getBoundingClientRect().width") >= 150
    assert desc.evaluate("el => el.scrollWidth <= el.clientWidth")  # 客户方便的时间 fits
    page.locator("[data-testid=slot-rows] select[name=slot_type]").first.select_option("enum")
    values = page.locator("[data-testid=slot-rows] input[name=slot_values]").first
    assert values.is_visible()
    assert values.evaluate("el => el.getBoundingClientRect().top") > desc.evaluate(
        "el => el.getBoundingClientRect().bottom")
    assert desc.evaluate("el => el.getBoundingClientRect().width") >= 150
    shot(page, "real-05-playground-empty")


# -- upstream pools (in this module: it shares the module's server; a browser-test module of
#    its own would start another server after the browser, which the fixtures cannot do) ----

# Element screenshots beside the others (copied into docs/screenshots/ by hand, like them).
DOCS_SHOTS = SCREENSHOT_DIR


DECIDE = {"call_id": "c-pool", "node_id": "n1", "utterance": "可以的，明天下午",
          "intents": [{"name": "agree", "description": "客户同意"},
                      {"name": "refuse", "description": "客户拒绝"}],
          "fallback_intent": "refuse", "deadline_ms": 1500}


def test_pool_edited_in_the_form_and_health_shown(page: Any, console_server: str,
                                                  emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with httpx.Client(base_url=console_server, headers=ADMIN_HEADERS, timeout=30) as api:
        backup = api.post("/api/admin/llm-configs", json=llm_config_body(
            name="backup-nlu", model=model, base_url=emulator.replica_url("backup"))).json()
        pool = api.post("/api/admin/llm-configs", json=llm_config_body(
            name="pool-nlu", model=model, base_url=emulator.replica_url("gpu-1"),
            is_active=True)).json()

    login(page, console_server)
    row = page.locator(f"tr[data-config-id='{pool['id']}']")
    row.get_by_role("button", name="编辑: pool-nlu").click()
    dlg = page.locator("dialog[open]")
    section = dlg.get_by_test_id("pool-section")
    section.get_by_test_id("add-endpoint").click()
    section.get_by_test_id("endpoint-url-0").fill(emulator.replica_url("gpu-2"))
    section.get_by_test_id("endpoint-weight-0").fill("2")
    section.get_by_test_id("add-endpoint").click()
    section.get_by_test_id("endpoint-url-1").fill(dead)
    section.get_by_test_id("fallback-select").select_option(str(backup["id"]))
    section.get_by_test_id("add-fallback").click()
    expect(section.locator(f"[data-fallback-id='{backup['id']}']")).to_contain_text("backup-nlu")
    dlg.get_by_label("对冲等待（毫秒）").fill("150")
    dlg.get_by_label("每端点并发上限").fill("8")
    dlg.get_by_label("发送请求优先级").check()
    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
    dlg.screenshot(path=str(DOCS_SHOTS / "real-05-pool-form.png"))
    dlg.get_by_role("button", name="保存").click()
    dlg.wait_for(state="detached")

    with httpx.Client(base_url=console_server, headers=ADMIN_HEADERS, timeout=30) as api:
        saved = api.get(f"/api/admin/llm-configs/{pool['id']}").json()
    assert saved["endpoints"] == [{"base_url": emulator.replica_url("gpu-2"), "weight": 2.0},
                                  {"base_url": dead, "weight": 1.0}]
    assert saved["fallback_ids"] == [backup["id"]]
    assert (saved["hedge_after_ms"], saved["max_in_flight"]) == (150, 8)
    assert saved["send_priority"] is True
    expect(row.get_by_test_id("pool-summary")).to_contain_text("3 个副本")
    expect(row.get_by_test_id("pool-summary")).to_contain_text("备用 backup-nlu")

    # Live traffic finds the dead replica; the health table shows it cooling down.
    with httpx.Client(base_url=console_server, headers=SERVICE_HEADERS, timeout=30) as svc:
        deadline = time.monotonic() + 20
        while True:
            r = svc.post("/api/nlu/decide", json=DECIDE)
            assert r.status_code == 200 and r.json()["fallback"] is False, r.text
            with httpx.Client(base_url=console_server, headers=ADMIN_HEADERS) as api:
                items = api.get("/api/admin/upstreams").json()["items"]
            if any(i["base_url"] == dead and i["state"] == "cooling_down" for i in items):
                break
            assert time.monotonic() < deadline, items
    table = page.get_by_test_id("upstreams")
    table.locator("..").get_by_role("button", name="重新加载").click()
    dead_row = table.locator(f"tr[data-endpoint='{dead}']")
    expect(dead_row).to_have_attribute("data-state", "cooling_down")
    expect(dead_row.get_by_test_id("upstream-state")).to_have_text("冷却中")
    expect(dead_row.locator("[data-code=connect_error]").first).to_be_visible()  # its label: 连接失败
    expect(table.locator(f"tr[data-endpoint='{emulator.replica_url('backup')}']")).to_contain_text("备用")
    table.locator("..").screenshot(path=str(DOCS_SHOTS / "real-05-upstream-health.png"))
    assert not page.errors, page.errors
