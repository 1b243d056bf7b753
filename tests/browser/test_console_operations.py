"""What a new operator and an ops engineer reach for, in Chromium against the real server,
in both languages: the script drafts (list, read, edit with a conflict, delete; a viewer only
reads), sending a tier back to config.toml, draining one endpoint of a pool and restoring it,
the configuration form's presets, "fetch models" and test connection before saving, marks
that go once a field is filled, and the history following a change.

Screenshots: test-artifacts/screenshots/real-09-*.png (the drafts, the form's tools, the
health table with a drained endpoint), in Chinese and English.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOT_DIR, config_row, login, shot
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body

BRIEFS = ["回访上周购买净水器的客户，确认安装满意度，有问题转人工", "提醒客户宽带套餐下月到期，询问是否续约"]


def admin(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=60)


def shot_path(name: str) -> Any:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    return SCREENSHOT_DIR / f"{name}.png"


def make_drafts(base: str) -> list[int]:
    """Two drafts the way the dialer makes them: generation with the service token."""
    ids = []
    with httpx.Client(base_url=base, headers=SERVICE_HEADERS, timeout=60) as svc:
        for brief in BRIEFS:
            r = svc.post("/api/scripts/generate", json={"brief": brief, "stream": False})
            assert r.status_code == 200 and r.json()["draft_id"], r.text
            ids.append(int(r.json()["draft_id"]))
    return ids


def test_script_drafts_are_read_edited_and_deleted(page: Any, console_server: str) -> None:
    first, second = make_drafts(console_server)
    login(page, console_server, route="/ai/scripts")
    table = page.get_by_test_id("drafts-table")
    expect(table.locator("tbody tr")).to_have_count(2)
    assert table.locator("tbody tr").first.get_attribute("data-draft-id") == str(second)  # newest first
    table.locator(f"tr[data-draft-id='{first}'] a").click()
    detail = page.get_by_test_id("draft-detail")
    expect(detail.get_by_test_id("draft-brief")).to_have_text(BRIEFS[0])
    assert "【" in detail.get_by_test_id("draft-script").inner_text()
    assert f"?id={first}" in page.url
    assert detail.locator("details.draft-reasoning").count() == 1  # the model's reasoning, folded
    shot(page, "real-09-drafts")

    # Edit: an empty title is marked, and the mark goes once the title is there again.
    detail.get_by_role("button", name="编辑").click()
    form = page.get_by_test_id("draft-form")
    form.get_by_label("标题").fill("")
    form.get_by_role("button", name="保存").click()
    mark = form.locator(".field[data-field=title] .field-error")
    expect(mark).to_have_text("必填")
    form.get_by_label("标题").fill("净水器回访（改）")
    expect(mark).to_be_hidden()
    form.get_by_label("话术").fill("【开场白】您好，这里是清源净水。")
    form.get_by_role("button", name="保存").click()
    expect(detail.get_by_test_id("draft-heading")).to_contain_text("净水器回访（改）")
    expect(table.locator(f"tr[data-draft-id='{first}']")).to_contain_text("净水器回访（改）")
    with admin(console_server) as api:
        saved = api.get(f"/api/admin/scripts/{first}").json()
        assert (saved["version"], saved["script"]) == (2, "【开场白】您好，这里是清源净水。")

        # Someone else saves first: the page says so and reloads their version.
        detail.get_by_role("button", name="编辑").click()
        assert api.put(f"/api/admin/scripts/{first}", json={"version": 2, "title": "别人的标题"}).status_code == 200
    form.get_by_label("标题").fill("我的标题")
    form.get_by_role("button", name="保存").click()
    conflict = page.get_by_test_id("draft-conflict")
    conflict.wait_for()
    conflict.get_by_role("button", name="重新加载最新版本").click()
    expect(page.get_by_test_id("draft-form").get_by_label("标题")).to_have_value("别人的标题")
    page.get_by_test_id("draft-form").get_by_role("button", name="取消").click()

    # In English.
    page.get_by_role("button", name="English").click()
    page.get_by_role("heading", name="Script drafts").wait_for()
    table.locator(f"tr[data-draft-id='{second}'] a").click()
    expect(page.get_by_test_id("draft-heading")).to_contain_text(f"Draft #{second}")
    assert "Show the reasoning" in page.get_by_test_id("draft-detail").inner_text()
    shot(page, "real-09-drafts-en")
    page.get_by_test_id("draft-detail").get_by_role("button", name="Delete").click()
    page.locator("dialog[open]").get_by_role("button", name="Delete").click()
    expect(table.locator("tbody tr")).to_have_count(1)
    page.get_by_role("button", name="中文").click()
    with admin(console_server) as api:
        assert api.get(f"/api/admin/scripts/{second}").status_code == 404
        trail = api.get("/api/admin/audit", params={"action": "draft"}).json()["items"]
        assert {e["action"] for e in trail} >= {"draft.update", "draft.delete"}

        # A viewer reads them and changes nothing.
        assert api.post("/api/admin/users", json={"username": "vic", "password": "vic-viewer-password",
                                                  "role": "viewer"}).status_code == 201
    page.get_by_role("button", name="退出登录").click()
    page.wait_for_url("**#/login")
    page.goto("about:blank")  # a fresh page load: the login below starts from nothing
    login(page, console_server, user="vic", password="vic-viewer-password", route="/ai/scripts")
    page.get_by_test_id("drafts-table").locator(f"tr[data-draft-id='{first}'] a").click()
    expect(page.get_by_test_id("draft-heading")).to_contain_text("别人的标题")
    assert page.get_by_test_id("draft-detail").get_by_role("button").count() == 0
    assert not page.errors, page.errors


def test_deactivate_back_to_config_toml_and_the_history_follows(page: Any, console_server: str,
                                                               emulator: Any) -> None:
    with admin(console_server) as api:
        cfg = api.post("/api/admin/llm-configs", json=llm_config_body(
            name="db-chat", tier="chat", model=emulator.unique_model("qwen3.5-2b"),
            base_url=emulator.base_url("vllm"), is_active=True)).json()
    login(page, console_server)
    row = config_row(page, "db-chat")
    expect(page.get_by_test_id("active-chat")).to_contain_text("数据库")
    row.get_by_role("button", name="修改历史: db-chat").click()
    revs = page.get_by_test_id("revisions")
    expect(revs.locator(".revision").first).to_contain_text("创建")
    # The active row's slot says what it does now: back to config.toml.
    row.get_by_role("button", name="停用，改用 config.toml: db-chat").click()
    page.locator("dialog[open]").get_by_role("button", name="确认").click()
    page.locator(".toast", has_text="现在使用 config.toml").wait_for()
    expect(page.get_by_test_id("active-chat")).to_contain_text("配置文件")
    # The open history was read again: the deactivation is on top, nothing stale.
    expect(revs.locator(".revision").first).to_contain_text("停用")
    expect(row.get_by_role("button", name="设为生效: db-chat")).to_be_visible()
    row.get_by_role("button", name="设为生效: db-chat").click()
    page.locator("dialog[open]").get_by_role("button", name="确认").click()
    expect(revs.locator(".revision").first).to_contain_text("生效")
    expect(page.get_by_test_id("active-chat")).to_contain_text("数据库")
    # English dates read like the filters: YYYY-MM-DD, never DD/MM.
    page.get_by_role("button", name="English").click()
    config_row(page, "db-chat").get_by_role("button", name="History: db-chat").click()
    when = page.get_by_test_id("revisions").locator("time").first.inner_text()
    assert time.strftime("%Y-") in when and "/" not in when, when
    page.get_by_role("button", name="中文").click()
    with admin(console_server) as api:
        trail = api.get("/api/admin/audit", params={"action": "config.deactivate"}).json()["items"]
        assert [e["target"] for e in trail] == [f"config:{cfg['id']}"]
    assert not page.errors, page.errors


def test_drain_one_endpoint_from_the_health_table_and_restore_it(page: Any, console_server: str,
                                                                  emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    a, b = emulator.replica_url("gpu-1"), emulator.replica_url("gpu-2")
    with admin(console_server) as api:
        pool = api.post("/api/admin/llm-configs", json=llm_config_body(
            name="pool-nlu", model=model, base_url=a, endpoints=[{"base_url": b}], is_active=True)).json()
        with httpx.Client(base_url=console_server, headers=SERVICE_HEADERS, timeout=30) as svc:
            for i in range(4):  # observed latencies for the table
                assert svc.post("/api/nlu/decide", json={"call_id": f"d{i}", "utterance": "好的",
                                                         "intents": [{"name": "agree"}]}).status_code == 200
    login(page, console_server)
    table = page.get_by_test_id("upstreams")
    row_b = table.locator(f"tr[data-endpoint='{b}']")
    expect(row_b).to_contain_text("pool-nlu")
    expect(row_b).to_contain_text("NLU 意图识别")
    # Two replicas on one host are told apart: the whole URL, never an ellipsis.
    assert a in table.locator(f"tr[data-endpoint='{a}']").inner_text() and b in row_b.inner_text()
    row_b.get_by_role("button", name=f"摘除: {b}").click()
    page.locator("dialog[open]").get_by_role("button", name="摘除").click()
    expect(row_b).to_have_attribute("data-drained", "true")
    expect(row_b.get_by_test_id("upstream-drained")).to_have_text("已摘除")
    with admin(console_server) as api:
        items = {i["base_url"]: i for i in api.get("/api/admin/upstreams").json()["items"]}
        assert items[b]["drained"] is True and items[a]["drained"] is False
    expect(table.locator("[data-testid=upstream-latency]").first).to_contain_text("最近一次")
    # At a laptop's widths a tier and a number with its unit stay on one line each.
    for width in (1024, 1280):
        page.set_viewport_size({"width": width, "height": 800})
        # Lines = the distinct tops of the content's boxes (text and badges alike).
        lines = page.evaluate("""() => [...document.querySelectorAll(
            '.upstreams-table .nowrap, .upstreams-table td.num > div, [data-testid=configs-table] td.nowrap')]
            .map((el) => { const r = document.createRange(); r.selectNodeContents(el);
              const boxes = [...r.getClientRects()].filter((b) => b.width > 0).sort((a, b) => a.top - b.top);
              let n = 0, bottom = -1e9;
              for (const b of boxes) { if (b.top >= bottom - 2) { n += 1; bottom = b.bottom; } else bottom = Math.max(bottom, b.bottom); }
              return n; })""")
        assert lines and all(n == 1 for n in lines), (width, lines)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.evaluate("document.getElementById('toasts').replaceChildren()")  # a clear picture
    table.locator("..").screenshot(path=str(shot_path("real-09-upstream-drained")))
    page.get_by_role("button", name="English").click()
    row_b = page.get_by_test_id("upstreams").locator(f"tr[data-endpoint='{b}']")
    expect(row_b.get_by_test_id("upstream-drained")).to_have_text("drained")
    page.evaluate("document.getElementById('toasts').replaceChildren()")
    page.get_by_test_id("upstreams").locator("..").screenshot(path=str(shot_path("real-09-upstream-drained-en")))
    row_b.get_by_role("button", name=f"Restore: {b}").click()
    page.locator("dialog[open]").get_by_role("button", name="Restore").click()
    expect(row_b).to_have_attribute("data-drained", "false")
    page.get_by_role("button", name="中文").click()
    with admin(console_server) as api:
        trail = api.get("/api/admin/audit", params={"action": "upstream"}).json()["items"]
        assert [e["action"] for e in trail] == ["upstream.undrain", "upstream.drain"]
        assert trail[0]["target"] == f"endpoint:{pool['id']}"
    assert not page.errors, page.errors


def test_the_form_fills_presets_fetches_models_and_tests_before_saving(page: Any, console_server: str,
                                                                      emulator: Any) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    emulator.script_sync(model, {"content": "好的"})  # the emulator now serves (lists) it
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method in ("POST", "PUT") else None)
    login(page, console_server)
    page.get_by_role("button", name="+ 新建配置").click()
    dlg = page.locator("dialog[open]")
    url = dlg.get_by_label("接口地址")
    # A vendor's preset fills an empty base URL, and replaces another preset...
    dlg.get_by_label("厂商方言").select_option("deepseek")
    expect(url).to_have_value("https://api.deepseek.com/v1")
    dlg.get_by_label("厂商方言").select_option("vllm")
    expect(url).to_have_value("http://127.0.0.1:8000/v1")
    # ...but never what the operator typed.
    url.fill(emulator.base_url("vllm"))
    dlg.get_by_label("厂商方言").select_option("sglang")
    expect(url).to_have_value(emulator.base_url("vllm"))
    dlg.get_by_label("厂商方言").select_option("vllm")

    # Fetch models: asked by the server, offered as suggestions.
    dlg.get_by_test_id("fetch-models").click()
    expect(dlg.get_by_test_id("models-status")).to_contain_text("个模型")
    options = dlg.locator("datalist option").evaluate_all("os => os.map(o => o.value)")
    assert model in options and "qwen3.5-2b" in options
    dlg.get_by_label("模型").fill(model)

    # Test before saving: the verdict in the dialog, nothing stored.
    dlg.get_by_test_id("form-test").click()
    result = dlg.get_by_test_id("form-test-result")
    expect(result.get_by_test_id("test-status")).to_have_text("连接正常", timeout=30_000)
    assert any(u.endswith("/api/admin/llm-configs/test") for u in sent)
    with admin(console_server) as api:
        assert not [c for c in api.get("/api/admin/llm-configs").json()["items"] if c["model"] == model]
    result.scroll_into_view_if_needed()
    dlg.screenshot(path=str(shot_path("real-09-form-tools")))

    # A required mark goes once the field is filled.
    dlg.get_by_role("button", name="保存").click()
    name_mark = dlg.locator(".field[data-field=name] .field-error")
    expect(name_mark).to_have_text("必填")
    dlg.get_by_label("名称").fill("preset-nlu")
    expect(name_mark).to_be_hidden()
    dlg.get_by_role("button", name="保存").click()
    dlg.wait_for(state="detached")
    config_row(page, "preset-nlu").wait_for()

    # The same in English.
    page.get_by_role("button", name="English").click()
    page.get_by_role("button", name="+ New configuration").click()
    dlg = page.locator("dialog[open]")
    assert "fills in its base URL" in dlg.inner_text()
    dlg.get_by_label("Base URL").fill("http://127.0.0.1:9/v1")
    dlg.get_by_test_id("fetch-models").click()
    expect(dlg.get_by_test_id("models-status")).to_contain_text("Could not fetch")
    dlg.screenshot(path=str(shot_path("real-09-form-tools-en")))
    dlg.get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="中文").click()
    assert not page.errors, page.errors
