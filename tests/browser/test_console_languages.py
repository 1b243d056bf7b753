"""One language at a time: the console in Chromium, switched between Chinese and English,
against the real server (PostgreSQL + the vendor emulator).

On every main page (models with a test-connection result, diagnostics with a record open,
the playground after an NLU decision and a chat turn) no text of the other language may
remain: in English no Chinese character at all (the toggle, which names 中文, and model
output aside); in Chinese none of the English dictionary's phrases and none of the server's
English wording of the same records. The server's messages follow the toggle because every
request carries `Accept-Language`.

An admin's People and Audit pages and the change-password dialog are held to more: in
Chinese no English word at all outside names (usernames, identifiers such as `user:nina` or
`max_tokens`, acronyms), so role names, action names, reasons and states are all translated.

Screenshots of the tour in both languages: test-artifacts/screenshots/tour-{zh,en}-*.png.
"""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import config_row, login, shot
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body
from tests.support.console_text import dictionaries

HAN = re.compile("[\u4e00-\u9fff]")
FIELD = re.compile(r"\{\w+\}")

# Every piece of text the page shows or announces, except the language toggle (it names the
# other language on purpose), raw JSON blocks and what the model said (data, not interface).
COLLECT = """() => {
  const skip = (el) => el.closest("#lang-toggle, noscript, pre.code-block, .sentence, .delta, .script-output");
  const out = [document.title];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (el && !skip(el) && walker.currentNode.textContent.trim()) out.push(walker.currentNode.textContent.trim());
  }
  for (const el of document.body.querySelectorAll("[aria-label], [placeholder], [title]")) {
    if (skip(el)) continue;
    for (const a of ["aria-label", "placeholder", "title"]) if (el.getAttribute(a)) out.push(el.getAttribute(a));
  }
  return out;
}"""


def english_probes() -> list[str]:
    """Phrases only the English dictionary has: several words, or a capitalised word."""
    dicts = dictionaries()
    zh_text = " ".join(dicts["zh"].values())
    probes = set()
    for key, en in dicts["en"].items():
        if key == "lang_other" or en == dicts["zh"][key]:
            continue
        for piece in FIELD.split(en):
            piece = piece.strip(" .:;,()·—")
            words = re.findall(r"[A-Za-z]+", piece)
            if (len(words) >= 2 and len(piece) >= 6) or (
                    len(words) == 1 and piece[:1].isupper() and len(piece) >= 4):
                if piece not in zh_text:
                    probes.add(piece)
    return sorted(probes)


PROBES = english_probes()


def texts(page: Any) -> list[str]:
    return list(page.evaluate(COLLECT))


def assert_english_only(page: Any, where: str) -> None:
    chinese = [t for t in texts(page) if HAN.search(t)]
    assert chinese == [], f"{where}: Chinese left in the English console: {chinese[:10]}"


def assert_chinese_only(page: Any, where: str, server_english: list[str]) -> None:
    shown = "\n".join(texts(page))
    left = [p for p in PROBES + server_english if p and p in shown]
    assert left == [], f"{where}: English left in the Chinese console: {left[:10]}"


def setup_data(base: str, emulator: Any) -> dict[str, Any]:
    """An NLU configuration whose reasoning eats the budget (a truncation record), a chat one."""
    nlu_model = emulator.unique_model("qwen3-8b")
    emulator.script_sync(nlu_model, {"reasoning_tokens": 4000, "content": '{"intent": "agree"}'})
    chat_model = emulator.unique_model("qwen3.5-2b")
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30) as admin:
        for tier, model, extra in (("nlu", nlu_model, {"max_tokens": 32, "enable_thinking": True}),
                                   ("chat", chat_model, {"max_tokens": 300})):
            r = admin.post("/api/admin/llm-configs", json=llm_config_body(
                tier=tier, model=model, name=f"lang-{tier}", base_url=emulator.base_url("vllm"),
                is_active=True, **extra))
            assert r.status_code == 201, r.text
        r = httpx.post(f"{base}/api/nlu/decide", headers=SERVICE_HEADERS, timeout=30, json={
            "call_id": "lang-1", "node_id": "confirm_time", "utterance": "好的",
            "intents": [{"name": "agree"}, {"name": "refuse"}], "fallback_intent": "refuse"})
        assert r.json()["diagnostic"]["code"] == "truncated_by_reasoning", r.text
        for _ in range(100):  # the call log is written in the background
            found = admin.get("/api/admin/diagnostics", params={"model": nlu_model},
                              headers={"Accept-Language": "en"}).json()["items"]
            if found:
                break
            time.sleep(0.1)
        english = [x for item in found for x in (item["message"], item["advice"]) if x]
    return {"nlu_model": nlu_model, "server_english": english}


def visit_models(page: Any, base: str, lang: str) -> None:
    page.goto(f"{base}/admin#/ai/models")
    row = config_row(page, "lang-nlu")
    row.wait_for()
    test_name = {"zh": "测试连接: lang-nlu", "en": "Test connection: lang-nlu"}[lang]
    row.get_by_role("button", name=test_name).click()
    page.get_by_test_id("test-result").get_by_test_id("test-status").wait_for(timeout=30_000)


def visit_diagnostics(page: Any, base: str, model: str) -> None:
    page.goto(f"{base}/admin#/ai/diagnostics?model={model}")
    trunc = page.locator("tr.row-truncated[data-code=truncated_by_reasoning]").first
    trunc.wait_for(timeout=15_000)
    page.get_by_test_id("diag-summary").locator("article").first.wait_for()
    trunc.locator("button.link-btn").click()
    page.get_by_test_id("diag-detail").get_by_test_id("diag-advice").wait_for()


def visit_playground(page: Any, base: str, lang: str) -> None:
    page.goto(f"{base}/admin#/ai/playground")
    page.get_by_role("button", name={"zh": "识别", "en": "Decide"}[lang]).click()
    page.get_by_test_id("nlu-result").locator(".diag-box").wait_for(timeout=30_000)


def chat_turn(page: Any, lang: str) -> None:
    names = {"zh": ("流式对话", "开始会话", "你的消息", "你好", "发送"),
             "en": ("Streamed chat", "Start session", "Your message", "Hello", "Send")}[lang]
    page.get_by_role("tab", name=names[0]).click()
    page.get_by_role("button", name=names[1]).click()
    page.get_by_test_id("chat-session").filter(has_text="playground-").wait_for()
    page.get_by_label(names[2]).fill(names[3])
    page.get_by_role("button", name=names[4]).click()
    end = page.locator("[data-testid=turn-end][data-reason=completed]").last
    end.wait_for(timeout=30_000)


def test_the_real_server_answers_in_the_language_asked(console_server: str) -> None:
    """(First in the module: the server starts before the browser does.)"""
    for lang, expected in (("en", "authentication required"), ("zh-CN,zh;q=0.9", "需要认证"),
                           ("fr;q=0.9, en;q=0.5", "authentication required")):
        r = httpx.get(f"{console_server}/api/admin/llm-configs", headers={"Accept-Language": lang})
        assert r.status_code == 401 and r.json()["error"]["message"].startswith(expected)


def test_switching_language_leaves_no_text_of_the_other(page: Any, console_server: str,
                                                         emulator: Any) -> None:
    data = setup_data(console_server, emulator)
    base = console_server

    # -- Chinese (the default) -------------------------------------------------------------
    page.goto(f"{base}/admin")
    page.wait_for_url("**#/login**")
    assert_chinese_only(page, "login", [])
    shot(page, "tour-zh-01-login")
    login(page, base)
    visit_models(page, base, "zh")
    assert_chinese_only(page, "models", data["server_english"])
    shot(page, "tour-zh-02-models-test-connection", full_page=True)
    visit_diagnostics(page, base, data["nlu_model"])
    assert_chinese_only(page, "diagnostics", data["server_english"])
    shot(page, "tour-zh-03-diagnostics", full_page=True)
    visit_playground(page, base, "zh")
    assert "思考耗尽预算" in page.get_by_test_id("nlu-result").inner_text()
    assert_chinese_only(page, "playground", data["server_english"])
    shot(page, "tour-zh-04-playground-nlu")
    chat_turn(page, "zh")
    expect(page.get_by_test_id("turn-end").last).to_have_text("结束：已完成")
    assert_chinese_only(page, "playground chat", data["server_english"])
    shot(page, "tour-zh-04-playground-chat")

    # -- English ---------------------------------------------------------------------------
    page.get_by_role("button", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    visit_models(page, base, "en")
    assert_english_only(page, "models")
    shot(page, "tour-en-02-models-test-connection", full_page=True)
    visit_diagnostics(page, base, data["nlu_model"])
    detail = page.get_by_test_id("diag-detail").inner_text()
    assert "Raise max_tokens or turn thinking off" in detail  # the server's words, in English
    assert_english_only(page, "diagnostics")
    shot(page, "tour-en-03-diagnostics", full_page=True)
    visit_playground(page, base, "en")
    assert "Reasoning used the budget" in page.get_by_test_id("nlu-result").inner_text()
    assert_english_only(page, "playground")
    shot(page, "tour-en-04-playground-nlu")
    chat_turn(page, "en")
    expect(page.get_by_test_id("turn-end").last).to_have_text("Ended: completed")
    assert_english_only(page, "playground chat")
    shot(page, "tour-en-04-playground-chat")
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url("**#/login")
    assert_english_only(page, "login")
    shot(page, "tour-en-01-login")

    # -- and back: nothing English stays behind --------------------------------------------
    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    login(page, base, route="/ai/diagnostics")
    visit_diagnostics(page, base, data["nlu_model"])
    assert_chinese_only(page, "diagnostics again", data["server_english"])
    assert not page.errors, page.errors


# -- people and the audit trail --------------------------------------------------------------

# Words a Chinese page may show that are names, not English: acronyms and the console's names.
NAME_WORDS = {"API", "Key", "JSON", "NLU", "HTTP", "URL", "ID", "AI", "token", "Token", "ms"}
PEOPLE = {"vera": "viewer", "otto": "operator", "nina": "operator"}


def english_words(texts_: list[str], names: set[str]) -> list[str]:
    """English words in `texts_`: not identifiers (with _ . : / - @ or digits), not names."""
    words = [w for text in texts_ for w in re.findall(r"[A-Za-z][A-Za-z0-9_.:/@\-]*", text)]
    return [w for w in words if not re.search(r"[_.:/@\-0-9]", w)
            and w not in NAME_WORDS | names and not (w.isupper() and len(w) <= 5)]


def assert_no_english(page: Any, where: str) -> None:
    names = {"admin", *PEOPLE}
    found = english_words(texts(page), names)
    assert found == [], f"{where}: English words in the Chinese console: {found[:10]}"


def people_and_events(base: str) -> None:
    """Users of each role, a demotion, a disabled user, a reset password, failed logins."""
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30) as admin:
        for name, role in PEOPLE.items():
            r = admin.post("/api/admin/users", json={"username": name, "role": role,
                                                     "password": f"{name}-long-password"})
            assert r.status_code in (201, 409), r.text
        assert admin.put("/api/admin/users/nina", json={"role": "viewer"}).status_code == 200
        assert admin.put("/api/admin/users/otto", json={"disabled": True}).status_code == 200
        assert admin.put("/api/admin/users/vera", json={"password": "vera-reset-password"}).status_code == 200
    for username, password in (("nobody", "whatever-it-was"), ("vera", "not-her-password"),
                               ("otto", "otto-long-password"), ("vera", "vera-reset-password")):
        httpx.post(f"{base}/api/auth/login", json={"username": username, "password": password},
                   timeout=30)


def visit_people(page: Any, base: str) -> None:
    page.goto(f"{base}/admin#/admin/people")
    page.get_by_test_id("users-table").locator("tr[data-username=nina]").wait_for()


def visit_audit(page: Any, base: str) -> None:
    page.goto(f"{base}/admin#/admin/audit")
    rows = page.get_by_test_id("audit-table").locator("tr.audit-row")
    rows.first.wait_for()
    page.locator("tr.audit-row[data-action='user.update'] button.link-btn").first.click()
    page.locator("[data-testid=audit-detail]:visible").first.wait_for()


def password_dialog(page: Any, lang: str) -> str:
    """The change-password dialog with a server refusal in it; returns the dialog's text."""
    labels = {"zh": ("修改密码", "当前密码", "确认新密码", "保存"),
              "en": ("Change password", "Current password", "Confirm new password", "Save")}[lang]
    page.get_by_role("button", name=labels[0]).click()
    dlg = page.get_by_test_id("password-dialog")
    dlg.get_by_label(labels[1]).fill("admin-pass-123")
    dlg.locator("input[name=new_password]").fill(" " * 12)  # long enough here, blank to the server
    dlg.get_by_label(labels[2]).fill(" " * 12)
    dlg.get_by_role("button", name=labels[3]).click()
    dlg.locator("[data-field=new_password] .field-error").wait_for()
    return str(dlg.inner_text())


def test_people_and_audit_pages_speak_one_language(page: Any, console_server: str) -> None:
    base = console_server
    people_and_events(base)
    login(page, base, route="/admin/people")

    # -- Chinese -----------------------------------------------------------------------------
    visit_people(page, base)
    table = page.get_by_test_id("users-table")
    expect(table.locator("tr[data-username=nina]").get_by_test_id("user-role")).to_have_text("只读")
    expect(table.locator("tr[data-username=otto]")).to_contain_text("已停用")
    assert_chinese_only(page, "people", [])
    assert_no_english(page, "people")
    table.get_by_role("button", name="修改角色: nina").click()
    dialog = page.get_by_test_id("role-dialog")
    assert dialog.locator("option").all_inner_texts() == ["只读", "操作员", "管理员"]
    assert_no_english(page, "role dialog")
    dialog.get_by_role("button", name="取消").click()
    text = password_dialog(page, "zh")
    assert "不能只有空格" in text  # the server's words, in Chinese
    assert_no_english(page, "password dialog")
    shot(page, "tour-zh-05-change-password")
    page.keyboard.press("Escape")

    visit_audit(page, base)
    audit = page.get_by_test_id("audit-table")
    expect(audit.locator("tr.audit-row[data-action='user.update']").first.get_by_test_id(
        "audit-action")).to_have_text("修改用户")
    expect(audit.locator("tr.audit-row[data-action='auth.login_failed']").first).to_contain_text("登录失败")
    expect(audit).to_contain_text("（未知用户）")
    expect(audit).to_contain_text("原因：密码错误")
    expect(audit).to_contain_text("角色：操作员 → 只读")
    assert_chinese_only(page, "audit", [])
    assert_no_english(page, "audit")
    shot(page, "tour-zh-06-audit", full_page=True)
    since = page.get_by_label("起始时间")  # one fixed format, not the browser's mm/dd/yyyy
    assert since.get_attribute("type") == "text" and since.get_attribute("placeholder") == "YYYY-MM-DD HH:mm"
    since.fill("12/01/2026")
    page.get_by_role("button", name="查询").click()
    expect(page.locator("[data-field=since] .field-error")).to_contain_text("例如 2026-12-01 09:30")
    since.fill("")

    # -- English -----------------------------------------------------------------------------
    page.get_by_role("button", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    visit_people(page, base)
    expect(table.locator("tr[data-username=nina]").get_by_test_id("user-role")).to_have_text("viewer")
    assert_english_only(page, "people")
    table.get_by_role("button", name="Change role: nina").click()
    assert page.get_by_test_id("role-dialog").locator("option").all_inner_texts() == [
        "viewer", "operator", "admin"]
    assert_english_only(page, "role dialog")
    page.get_by_test_id("role-dialog").get_by_role("button", name="Cancel").click()
    text = password_dialog(page, "en")
    assert "must not be only spaces" in text
    assert_english_only(page, "password dialog")
    page.keyboard.press("Escape")

    visit_audit(page, base)
    expect(audit.locator("tr.audit-row[data-action='user.update']").first.get_by_test_id(
        "audit-action")).to_have_text("User changed")
    expect(audit).to_contain_text("(unknown user)")
    expect(audit).to_contain_text("Reason: wrong password")
    expect(audit).to_contain_text("Role: operator → viewer")
    assert_english_only(page, "audit")
    shot(page, "tour-en-06-audit", full_page=True)
    page.get_by_role("button", name="中文").click()
    assert not page.errors, page.errors


def test_every_message_renders_its_values_even_zero(page: Any, console_server: str) -> None:
    """t(key, {field: 0}) for every message in both languages: 0 is a value, never the raw
    {placeholder} (`输出 {completion} / 上限 300` was on screen for a 0)."""
    keys = {lang: [[k, sorted(set(re.findall(r"\{(\w+)\}", v)))] for k, v in d.items()]
            for lang, d in dictionaries().items()}
    page.goto(f"{console_server}/admin")
    bad = page.evaluate("""async (keys) => {
      const m = await import("/admin/static/js/i18n.js");
      const bad = [];
      for (const lang of ["zh", "en"]) {
        m.setLang(lang);
        for (const [key, fields] of keys[lang]) {
          const out = m.t(key, Object.fromEntries(fields.map((f) => [f, 0])));
          if (/\\{\\w+\\}/.test(out) || (fields.length && !out.includes("0"))) bad.push(`${lang} ${key}: ${out}`);
        }
      }
      m.setLang("zh");
      return bad;
    }""", keys)
    assert bad == []
    assert sum(len(f) > 0 for _, f in keys["zh"]) > 50  # the test reaches the messages with values
