"""The Lexicons page in Chromium against the real server: an operator creates a lexicon,
imports a term list, tries a sentence, exports the terms, meets a version conflict and
deletes; a viewer reads and tries but edits nothing; both languages, nothing of the other
left on the page. Screenshots: test-artifacts/screenshots/lexicons-*.png."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import login, shot
from tests.browser.test_console_languages import assert_chinese_only, assert_english_only
from tests.fixtures.database import ADMIN_HEADERS

ROUTE = "/ai/lexicons"


def _api(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=30)


def test_the_server_serves_lexicons(console_server: str) -> None:
    # First, without a browser: the server starts before Chromium's event loop does.
    with _api(console_server) as c:
        r = c.put("/api/admin/lexicons/platform", json={"terms": ["加微信"], "action": "drop"})
        assert r.status_code in (200, 201), r.text
        r = c.post("/api/admin/users", json={"username": "lexi", "role": "viewer",
                                             "password": "lexi-viewer-password"})
        assert r.status_code in (201, 409), r.text


def test_an_operator_creates_imports_tries_exports_and_deletes(
        page: Any, console_server: str, tmp_path: Path) -> None:
    login(page, console_server, route=ROUTE)
    page.get_by_test_id("lexicons-table").locator("tr[data-lexicon=platform]").wait_for()
    page.get_by_test_id("lexicon-new").click()
    form = page.get_by_test_id("lexicon-form")
    form.get_by_label("名称").fill("finance")
    form.get_by_label("替换句").fill("具体收益以合同为准。")
    terms = tmp_path / "terms.csv"
    terms.write_text("保本,promise\n稳赚,promise\n零风险\n", encoding="utf-8")
    page.get_by_test_id("lexicon-import-file").set_input_files(str(terms))
    expect(form.get_by_label("禁用词")).to_have_value("保本\n稳赚\n零风险")
    form.get_by_label("允许的近似说法").fill("确保本月")
    form.get_by_role("button", name="保存").click()
    expect(page.get_by_test_id("lexicon-heading")).to_have_text("finance")
    expect(page.get_by_test_id("lexicon-terms")).to_have_text("保本\n稳赚\n零风险")
    row = page.get_by_test_id("lexicons-table").locator("tr[data-lexicon=finance]")
    expect(row).to_contain_text("替换")

    page.get_by_label("句子").fill("这款产品穩 賺不赔")
    page.get_by_test_id("lexicon-try").click()
    expect(page.get_by_test_id("lexicon-try-spoken")).to_have_text("具体收益以合同为准。")
    expect(page.get_by_test_id("lexicon-try-hits")).to_contain_text("穩 賺")
    page.get_by_label("句子").fill("款项确保本月到账，电话13800138000")
    page.get_by_test_id("lexicon-try-mask").check()
    page.get_by_test_id("lexicon-try").click()
    expect(page.get_by_test_id("lexicon-try-spoken")).to_have_text("款项确保本月到账，电话尾号8000")
    assert_chinese_only(page, "lexicons", [])
    shot(page, "lexicons-zh", full_page=True)

    with page.expect_download() as info:
        page.get_by_test_id("lexicon-export").click()
    download = info.value
    assert download.suggested_filename == "finance.txt"
    assert Path(download.path()).read_text(encoding="utf-8") == "保本\n稳赚\n零风险\n"

    # Someone else saves first: the form says so and reloads on request.
    page.get_by_test_id("lexicon-edit").click()
    with _api(console_server) as c:
        r = c.put("/api/admin/lexicons/finance", json={"terms": ["保本"], "action": "drop",
                                                       "version": 1})
        assert r.status_code == 200, r.text
    page.get_by_test_id("lexicon-form").get_by_role("button", name="保存").click()
    conflict = page.get_by_test_id("lexicon-conflict")
    conflict.wait_for()
    conflict.get_by_role("button").click()
    expect(page.get_by_test_id("lexicon-form").get_by_label("禁用词")).to_have_value("保本")

    # In English, nothing Chinese but the lexicon's own data.
    page.get_by_role("button", name="English").click()
    page.get_by_role("heading", name="Lexicons", exact=True).wait_for()
    page.goto(f"{console_server}/admin#{ROUTE}?name=finance")
    expect(page.get_by_test_id("lexicon-heading")).to_have_text("finance")
    page.get_by_role("textbox", name="Sentence", exact=True).fill("加 微信聊")
    page.get_by_test_id("lexicon-try").click()
    expect(page.get_by_test_id("lexicon-try-spoken")).to_have_text("(nothing)")
    assert_english_only(page, "lexicons")
    shot(page, "lexicons-en", full_page=True)

    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("dialog")
    if confirm.count():
        confirm.get_by_role("button", name="Delete").click()
    page.get_by_test_id("lexicons-table").locator("tr[data-lexicon=finance]").wait_for(state="detached")
    page.get_by_role("button", name="中文").click()
    # The trail says what changed, in Chinese: the action's name, counts, terms added.
    page.goto(f"{console_server}/admin#/admin/audit")
    main = page.locator("#main")
    expect(main).to_contain_text("新建词库")
    expect(main).to_contain_text("删除词库")
    expect(main).to_contain_text("新增的词")
    assert not page.errors, page.errors


def test_a_viewer_reads_and_tries_but_edits_nothing(page: Any, console_server: str) -> None:
    login(page, console_server, user="lexi", password="lexi-viewer-password", route=ROUTE)
    page.get_by_test_id("lexicons-table").locator("tr[data-lexicon=platform] a").click()
    expect(page.get_by_test_id("lexicon-heading")).to_have_text("platform")
    assert page.get_by_test_id("lexicon-new").count() == 0
    assert page.get_by_test_id("lexicon-edit").count() == 0
    page.get_by_label("句子").fill("加微信聊")
    page.get_by_test_id("lexicon-try").click()
    expect(page.get_by_test_id("lexicon-try-spoken")).to_have_text("（不说）")
    shot(page, "lexicons-viewer-zh")
    assert not page.errors, page.errors
