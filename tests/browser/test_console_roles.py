"""The console as each role sees it, in Chromium against the real server (PostgreSQL).

A viewer reads and changes nothing (no edit buttons, no playground, no people); an operator
edits models but manages no people; an admin manages people (a generated password shown
once) and reads the audit trail. Screenshots: test-artifacts/screenshots/real-05..08-*.png.
"""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import config_row, login, shot
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body


def _api(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30)


def _user(base: str, username: str, role: str, password: str) -> None:
    with _api(base) as c:
        r = c.post("/api/admin/users", json={"username": username, "role": role, "password": password})
        assert r.status_code in (201, 409), r.text


def _config(base: str, name: str) -> None:
    with _api(base) as c:
        if not any(x["name"] == name for x in c.get("/api/admin/llm-configs").json()["items"]):
            r = c.post("/api/admin/llm-configs", json=llm_config_body(name=name, api_key="sk-7f3a1234567890abcd"))
            assert r.status_code == 201, r.text


def _nav(page: Any) -> list[str]:
    return [x.strip() for x in page.locator("nav.sidebar a:visible").all_inner_texts()]


def test_people_routes_are_for_admins_only(console_server: str) -> None:
    # First in the module, without a browser: the server (and its database) start before
    # Chromium's event loop does.
    _user(console_server, "early-viewer", "viewer", "early-viewer-password")
    with httpx.Client(base_url=console_server, timeout=10) as c:
        assert c.post("/api/auth/login", json={"username": "early-viewer",
                                               "password": "early-viewer-password"}).status_code == 204
        assert c.get("/api/admin/users").status_code == 403
        assert c.get("/api/admin/audit").status_code == 403


def test_a_viewer_reads_and_changes_nothing(console_server: str, page: Any) -> None:
    _config(console_server, "viewer-sees-this")
    _user(console_server, "vera", "viewer", "vera-viewer-password")
    login(page, console_server, user="vera", password="vera-viewer-password")
    row = config_row(page, "viewer-sees-this")
    row.wait_for()
    assert page.get_by_test_id("user-role").inner_text() == "只读"
    assert _nav(page) == ["模型配置", "诊断记录", "影子评估", "灰度发布", "话术草稿", "话术词库", "全局意图", "用量与费用"]
    assert page.get_by_role("button", name="+ 新建配置").count() == 0
    assert [b.strip() for b in row.locator("button").all_inner_texts()] == ["修改历史"]
    assert "sk-7f3a****abcd" in row.inner_text()
    row.get_by_role("button", name="修改历史: viewer-sees-this").click()
    page.get_by_test_id("revisions").locator("li.revision").first.wait_for()
    assert page.get_by_test_id("revisions").get_by_role("button", name="回滚此修改").count() == 0
    shot(page, "real-05-viewer-models")
    for route in ("/ai/playground", "/admin/people", "/admin/audit"):
        page.goto(f"{console_server}/admin#{route}")
        expect(page.get_by_test_id("not-allowed")).to_contain_text("只读")

    # Everyone may change their own password; the other sessions end.
    page.goto(f"{console_server}/admin#/ai/diagnostics")
    page.get_by_role("button", name="修改密码").click()
    dlg = page.get_by_test_id("password-dialog")
    dlg.get_by_label("当前密码").fill("not-the-password")
    dlg.locator("input[name=new_password]").fill("vera-new-password-1")
    dlg.get_by_label("确认新密码").fill("vera-new-password-1")
    dlg.get_by_role("button", name="保存").click()
    dlg.locator(".field-error", has_text="当前密码不正确").wait_for()
    shot(page, "real-05-change-password")
    dlg.get_by_label("当前密码").fill("vera-viewer-password")
    dlg.get_by_role("button", name="保存").click()
    dlg.wait_for(state="detached")
    page.locator(".toast", has_text="密码已修改").wait_for()
    with httpx.Client(base_url=console_server, timeout=10) as c:
        assert c.post("/api/auth/login", json={"username": "vera", "password": "vera-new-password-1"}).status_code == 204
    assert not page.errors, page.errors


def test_an_operator_edits_models_but_manages_no_people(console_server: str, page: Any) -> None:
    _config(console_server, "operator-edits-this")
    _user(console_server, "otto", "operator", "otto-operator-password")
    login(page, console_server, user="otto", password="otto-operator-password")
    row = config_row(page, "operator-edits-this")
    row.wait_for()
    assert page.get_by_test_id("user-role").inner_text() == "操作员"
    assert _nav(page) == ["模型配置", "诊断记录", "调试台", "影子评估", "灰度发布", "话术草稿", "话术词库", "全局意图", "用量与费用"]
    assert page.get_by_role("button", name="+ 新建配置").is_visible()
    assert {b.strip() for b in row.locator("button").all_inner_texts()} >= {"编辑", "设为生效", "测试", "修改历史", "删除"}
    row.get_by_role("button", name="编辑: operator-edits-this").click()
    dlg = page.locator("dialog[open]")
    dlg.get_by_label("max_tokens").fill("256")
    dlg.get_by_role("button", name="保存").click()
    dlg.wait_for(state="detached")
    page.locator(".toast", has_text="operator-edits-this").wait_for()
    expect(row).to_contain_text("otto")  # updated_by names the operator (after the refresh)
    shot(page, "real-06-operator-models")
    page.goto(f"{console_server}/admin#/admin/people")
    page.get_by_test_id("not-allowed").wait_for()
    assert not page.errors, page.errors


def test_an_admin_manages_people_and_reads_the_audit_trail(console_server: str, page: Any) -> None:
    login(page, console_server, route="/admin/people")
    table = page.get_by_test_id("users-table")
    table.wait_for()
    assert _nav(page) == ["模型配置", "诊断记录", "调试台", "影子评估", "灰度发布", "话术草稿", "话术词库", "全局意图", "用量与费用",
                          "人员与角色", "审计日志", "服务密钥"]
    admin_row = table.locator("tr[data-username=admin]")
    assert "由环境变量管理" in admin_row.inner_text()

    page.get_by_role("button", name="+ 新建用户").click()
    dlg = page.get_by_test_id("user-dialog")
    dlg.get_by_label("用户名").fill("Bad Name")
    dlg.get_by_label("角色").select_option("operator")
    dlg.get_by_role("button", name="保存").click()
    dlg.locator("[data-field=username] .field-error").wait_for()
    dlg.get_by_label("用户名").fill("nina")
    generated = dlg.get_by_label("密码").input_value()
    assert len(generated) == 20
    dlg.get_by_role("button", name="保存").click()
    once = page.get_by_test_id("password-once")
    assert once.get_by_test_id("password-once-value").input_value() == generated
    shot(page, "real-07-people-password-once")
    once.get_by_role("button", name="关闭").last.click()
    nina = table.locator("tr[data-username=nina]")
    nina.wait_for()
    assert nina.get_by_test_id("user-role").inner_text() == "操作员"

    nina.get_by_role("button", name="修改角色: nina").click()
    page.get_by_test_id("role-dialog").get_by_label("角色").select_option("viewer")
    page.get_by_test_id("role-dialog").get_by_role("button", name="保存").click()
    expect(nina.get_by_test_id("user-role")).to_have_text("只读")
    nina.get_by_role("button", name="停用: nina").click()
    page.locator("dialog[open]").get_by_role("button", name="停用").click()
    expect(nina).to_contain_text("已停用")
    nina.get_by_role("button", name="重置密码: nina").click()
    page.locator("dialog[open]").get_by_role("button", name="重置密码").click()
    reset = page.get_by_test_id("password-once").get_by_test_id("password-once-value").input_value()
    assert len(reset) == 20 and reset != generated
    page.get_by_test_id("password-once").get_by_role("button", name="关闭").last.click()
    shot(page, "real-07-people")

    # The last admin stays: the server says why.
    with _api(console_server) as c:
        assert c.put("/api/admin/users/admin", json={"role": "viewer"}).status_code == 409

    page.get_by_role("button", name="English").click()
    table.get_by_role("button", name="Change role: nina").wait_for()
    shot(page, "real-07-people-en")
    page.get_by_role("button", name="中文").click()

    page.goto(f"{console_server}/admin#/admin/audit?action=user")
    audit = page.get_by_test_id("audit-table")
    audit.locator("tr.audit-row").first.wait_for()
    actions = audit.locator("tr.audit-row").evaluate_all("rs => rs.map(r => r.dataset.action)")
    assert actions[:4] == ["user.update", "user.update", "user.update", "user.create"], actions
    first = audit.locator("tr.audit-row").first
    assert "admin" in first.inner_text() and "user:nina" in first.inner_text()
    first.locator("button.link-btn").click()
    detail = page.get_by_test_id("audit-detail").first
    detail.wait_for()
    assert '"password": "reset"' in detail.inner_text()
    assert reset not in page.content()  # shown once, then gone
    shot(page, "real-08-audit")
    assert not page.errors, page.errors
