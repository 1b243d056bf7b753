"""Messages from the server follow the caller's language, over HTTP, on PostgreSQL.

`Accept-Language` (zh / en, with q-values) picks the language of every message: error
bodies, validation messages (pydantic's and our validators'), edge refusals, diagnostics in
answers and in the call log. Without the header the server speaks `[server] locale`.
Diagnostics are stored as code + numbers, so one stored record reads both ways.
"""

from __future__ import annotations

import json
import re
from typing import Any

import asyncpg
import httpx

from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.records import CallRecord
from callout_server.calllog.repository import record_dict
from callout_server.i18n import using
from callout_server.llm import Diagnostic
from tests.fixtures.app import running_app
from tests.fixtures.calllog import stored
from tests.fixtures.database import (
    ADMIN_HEADERS,
    EN,
    SERVICE_HEADERS,
    ZH,
    asyncpg_dsn,
    llm_config_body,
    reset_tables,
)
from tests.support.chat import collect, make_service, new_session, read_sse, the_end, turn
from tests.support.nlu import decide, nlu_app
from tests.support.scripts import end_of, script_app

URL = "/api/admin/llm-configs"
HAN = re.compile("[\u4e00-\u9fff]")
FULL_WIDTH = re.compile("[\u3000-\u303f\uff00-\uffef]")


def all_text(body: Any) -> str:
    """Every string in a JSON body, joined."""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        return " ".join(all_text(v) for v in body.values())
    if isinstance(body, list):
        return " ".join(all_text(v) for v in body)
    return ""


def english_only(body: Any) -> None:
    text = all_text(body)
    assert not HAN.search(text) and not FULL_WIDTH.search(text), text


async def test_validation_messages_in_both_languages_name_the_field(app_client) -> None:
    bad = llm_config_body(base_url="ftp://gw.example/v1", max_tokens="many", timeout_s=9999)
    del bad["model"]
    zh = await app_client.post(URL, json=bad, headers={**ADMIN_HEADERS, **ZH})
    en = await app_client.post(URL, json=bad, headers={**ADMIN_HEADERS, **EN})
    assert zh.status_code == en.status_code == 422
    fields_zh = {f["field"]: f for f in zh.json()["error"]["fields"]}
    fields_en = {f["field"]: f for f in en.json()["error"]["fields"]}
    assert set(fields_zh) == set(fields_en) == {"base_url", "max_tokens", "timeout_s", "model"}
    # our validator: a code, worded from the catalogue
    assert fields_zh["base_url"]["code"] == fields_en["base_url"]["code"] == "url_scheme_host"
    assert fields_zh["base_url"]["message"] == "必须是带主机名的 http:// 或 https:// 地址"
    assert fields_en["base_url"]["message"] == "must be an http:// or https:// URL with a host"
    # pydantic's own errors: worded from their type and numbers
    assert fields_zh["max_tokens"]["message"] == "应为整数，无法解析字符串"
    assert fields_en["max_tokens"]["message"].startswith("Input should be a valid integer")
    assert fields_zh["timeout_s"]["message"] == "应小于或等于 600.0"
    assert fields_zh["model"]["message"] == "必填" and fields_en["model"]["message"] == "Field required"
    assert zh.json()["error"]["message"].startswith("请求无效：")
    assert "base_url：必须是带主机名" in zh.json()["error"]["message"]
    assert en.json()["error"]["message"].startswith("invalid request: ")
    assert "Value error" not in en.text
    english_only(en.json())
    assert not re.search(r"[A-Za-z]{3,} [a-z]{3,} [a-z]{3,}", all_text(zh.json())), zh.text


async def test_nested_model_validators_speak_both_languages(app_client) -> None:
    body = {"utterance": "好", "intents": [{"name": "a"}, {"name": "a"}], "deadline_ms": 10}
    zh = await app_client.post("/api/nlu/decide", json=body, headers={**SERVICE_HEADERS, **ZH})
    en = await app_client.post("/api/nlu/decide", json=body, headers={**SERVICE_HEADERS, **EN})
    assert zh.status_code == en.status_code == 422
    zh_messages = {f["message"] for f in zh.json()["error"]["fields"]}
    en_messages = {f["message"] for f in en.json()["error"]["fields"]}
    assert "应大于或等于 50" in zh_messages
    assert "Input should be greater than or equal to 50" in en_messages
    english_only(en.json())


async def test_errors_default_to_server_locale_and_follow_q_values(
        app_client, make_settings, pg_url) -> None:
    path = f"{URL}/424242"
    default = await app_client.get(path, headers=ADMIN_HEADERS)
    assert default.status_code == 404
    assert default.json()["error"] == {"code": "not_found", "message": "模型配置 424242 不存在",
                                       "config_id": 424242}
    en = await app_client.get(path, headers={**ADMIN_HEADERS, **EN})
    assert en.json()["error"]["message"] == "model configuration 424242 not found"
    weighted = await app_client.get(path, headers={
        **ADMIN_HEADERS, "Accept-Language": "en;q=0.3, zh-CN;q=0.9"})
    assert weighted.json()["error"]["message"] == "模型配置 424242 不存在"
    unknown = await app_client.get(path, headers={**ADMIN_HEADERS, "Accept-Language": "fr, de"})
    assert unknown.json()["error"]["message"] == "模型配置 424242 不存在"
    # A cache in front must not hand one language's answer to a caller of the other.
    ok = await app_client.get(URL, headers=ADMIN_HEADERS)
    for r in (default, en, unknown, ok):
        assert "accept-language" in r.headers.get("vary", "").lower()

    # A server whose [server] locale is en answers API clients that send nothing in English.
    await reset_tables(pg_url)
    async with running_app(make_settings(**{"server.locale": "en"})) as client:
        r = await client.get(path, headers=ADMIN_HEADERS)
        assert r.json()["error"]["message"] == "model configuration 424242 not found"
        r = await client.get(path, headers={**ADMIN_HEADERS, **ZH})
        assert r.json()["error"]["message"] == "模型配置 424242 不存在"


async def test_edge_refusals_and_framework_errors_in_both_languages(app_client) -> None:
    for headers, expected in ((EN, "authentication required"), (ZH, "需要认证")):
        r = await app_client.get(URL, headers=headers)
        assert r.status_code == 401 and r.json()["error"]["message"].startswith(expected)
    r = await app_client.get(URL, headers={"Authorization": "Basic x", **EN})
    assert r.json()["error"]["message"] == "expected 'Authorization: Bearer <token>'"
    r = await app_client.get(f"{URL}?name=a%00b", headers={**ADMIN_HEADERS, **ZH})
    assert r.status_code == 422
    assert r.json()["error"]["fields"] == [
        {"field": "name", "code": "nul_character", "message": "不能包含 NUL 字符"}]
    big = b"{" + b" " * (2 * 1024 * 1024) + b"}"
    for headers, expected in ((EN, "request body larger than"), (ZH, "请求体超过")):
        r = await app_client.post(URL, content=big, headers={**ADMIN_HEADERS, **headers,
                                                             "Content-Type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["message"].startswith(expected)
    for headers, expected in ((EN, "not found"), (ZH, "没有这个资源")):
        r = await app_client.get("/api/admin/no-such-route", headers={**ADMIN_HEADERS, **headers})
        assert r.status_code == 404 and r.json()["error"]["message"] == expected
    r = await app_client.post(URL, content=b'{"tier": ', headers={
        **ADMIN_HEADERS, **ZH, "Content-Type": "application/json"})
    assert r.json()["error"]["fields"][0]["message"].startswith("JSON 无效：第 1 行第 10 列")


# -- diagnostics: stored as code + numbers, worded per reader --------------------------------

async def _stored_rows(pg_url: str, *ids: int) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        return list(await conn.fetch(
            "SELECT id, code, message, advice, reason, reason_args::text AS args, detail "
            "FROM callout.llm_call_logs WHERE id = ANY($1::bigint[]) ORDER BY id", list(ids)))
    finally:
        await conn.close()


async def _records(client: httpx.AsyncClient, headers: dict[str, str]) -> dict[int, dict[str, Any]]:
    r = await client.get("/api/admin/diagnostics", headers={**ADMIN_HEADERS, **headers})
    assert r.status_code == 200, r.text
    return {item["id"]: item for item in r.json()["items"]}


async def test_one_stored_diagnostic_reads_in_both_languages(app_client, pg_url) -> None:
    recorder = app_client.services.recorder
    stalled = Diagnostic.make("timeout", "zh", reason="stalled_keepalive", max_tokens=300,
                              args={"seconds": 2.5, "comments": 4})
    truncated = Diagnostic.make("truncated", "zh", finish_reason="length", max_tokens=16,
                                completion_tokens=16)
    vendor = Diagnostic.make("upstream_error", "zh", status=401, detail="Incorrect API key")
    ids = [recorder.record(CallRecord.from_diagnostic("chat", d, call_id=f"c{i}"))
           for i, d in enumerate((stalled, truncated, vendor))]
    await recorder.flush()

    rows = await _stored_rows(pg_url, *ids)
    assert [(r["code"], r["message"], r["advice"]) for r in rows] == [
        ("timeout", None, None), ("truncated", None, None), ("upstream_error", None, None)]
    assert (rows[0]["reason"], json.loads(rows[0]["args"])) == (
        "stalled_keepalive", {"seconds": 2.5, "comments": 4})
    assert rows[2]["detail"] == "Incorrect API key"

    en, zh = await _records(app_client, EN), await _records(app_client, ZH)
    assert en[ids[0]]["message"] == ("The model request timed out: stream stalled: no data "
                                     "for 2.5s (4 keep-alive comments only)")
    assert zh[ids[0]]["message"] == "模型请求超时：流停滞：2.5 秒没有数据，只收到 4 条保活注释"
    assert en[ids[1]]["message"] == "The output hit the max_tokens limit (16) and is incomplete"
    assert (en[ids[1]]["advice"], zh[ids[1]]["advice"]) == ("Raise max_tokens", "调大 max_tokens")
    assert zh[ids[2]]["message"] == "推理服务返回错误 (HTTP 401)：Incorrect API key"
    english_only([en[i] for i in ids])
    for i in ids:
        assert not FULL_WIDTH.search(en[i]["message"] + en[i]["advice"])
        assert HAN.search(zh[i]["message"]) and HAN.search(zh[i]["advice"])
    # No header: [server] locale (zh).
    assert (await _records(app_client, {}))[ids[0]]["message"] == zh[ids[0]]["message"]


async def test_records_written_before_keep_working(app_client, pg_url) -> None:
    """A row from before 0005 holds finished Chinese text and no reason: a Chinese reader
    gets it as stored, an English one gets it worded from its code and numbers."""
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        await conn.execute(
            "INSERT INTO callout.llm_call_logs (id, at, tier, code, message, advice, "
            "finish_reason, max_tokens, reasoning_tokens) VALUES (990001, now(), 'nlu', "
            "'truncated_by_reasoning', $1, '调大 max_tokens 或关闭思考模式', 'length', 300, 300)",
            "模型输出触顶 max_tokens 限制 (300) 导致截断，未生成有效 JSON 内容。模型思考链消耗了过多 token")
        await conn.execute(
            "INSERT INTO callout.llm_call_logs (id, at, tier, code, message, advice) "
            "VALUES (990002, now(), 'nlu', 'timeout', '模型请求超时 (no complete response "
            "within 30s)', '检查推理服务负载，或调大超时时间')")
    finally:
        await conn.close()
    zh, en = await _records(app_client, ZH), await _records(app_client, EN)
    assert zh[990001]["message"].endswith("未生成有效 JSON 内容。模型思考链消耗了过多 token")
    assert en[990001]["message"].startswith("The output hit the max_tokens limit (300) before")
    assert en[990001]["advice"] == "Raise max_tokens or turn thinking off"
    assert en[990002]["message"] == "The model request timed out"  # the detail was in Chinese text
    english_only([en[990001], en[990002]])


async def test_answers_and_error_bodies_carry_diagnostics_in_the_callers_language(
        make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen3-8b")  # thinking spends the whole budget
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        headers = {**SERVICE_HEADERS, **EN}
        r = await client.post("/api/nlu/decide", headers=headers, json={
            "utterance": "Tomorrow after three works", "intents": [{"name": "agree"}],
            "fallback_intent": "agree", "overrides": {"enable_thinking": True}})
        d = r.json()["diagnostic"]
        assert d["code"] == "truncated_by_reasoning" and d["advice"] == "Raise max_tokens or turn thinking off"
        english_only(r.json())
        r, _ = await decide(client, overrides={"enable_thinking": True})  # no fallback: a 502
        assert r.status_code == 502
        assert r.json()["error"]["message"].startswith("模型输出触顶 max_tokens 限制")
        assert r.json()["error"]["diagnostic"]["advice"] == "调大 max_tokens 或关闭思考模式"
        # Test connection against a closed port, read in English.
        created = await client.post(URL, headers=ADMIN_HEADERS, json=llm_config_body(
            base_url="http://127.0.0.1:9/v1"))
        tested = await client.post(f"{URL}/{created.json()['id']}/test",
                                   headers={**ADMIN_HEADERS, **EN})
        assert tested.json()["diagnostic"]["code"] == "connect_error"
        assert tested.json()["diagnostic"]["message"].startswith(
            "Could not connect to the inference server")
        english_only(tested.json()["diagnostic"] | {"detail": ""})  # the library's own words aside


async def test_both_write_paths_keep_the_reason_and_its_numbers(calllog_db) -> None:
    """PostgreSQL (COPY) and the embedded SQLite (INSERT) store the same code + numbers,
    including a vendor's odd text made storable."""
    recorder = DiagnosticsRecorder(calllog_db)
    await recorder.start()
    try:
        d = Diagnostic.make("upstream_error", status=200, reason="malformed_chunk",
                            detail="bad\x00byte", args={"index": 3, "chars": 12, "event": "x\ud800"})
        recorder.record(CallRecord.from_diagnostic("script", d))
        await recorder.flush()
    finally:
        await recorder.stop()
    [row] = await stored(calllog_db)
    assert row.reason == "malformed_chunk" and row.detail == "bad\ufffdbyte"
    assert row.reason_args == {"index": 3, "chars": 12, "event": "x\ufffd"}
    en, zh = record_dict(row, "en"), record_dict(row, "zh")
    assert en["message"] == ("The inference server answered an error (HTTP 200): malformed "
                             "stream chunk #3 (12 chars, event 'x\ufffd') (bad\ufffdbyte)")
    assert zh["message"].startswith("推理服务返回错误 (HTTP 200)：第 3 个流数据块格式错误")


async def test_stream_end_events_speak_the_callers_language(
        make_settings, pg_url, emulator) -> None:
    """A chat turn's `end` error and a streamed script's `end` are worded for the caller."""
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "好。", "ttft_ms": 5000}, times=2)
    h = await make_service(emulator, model, ttft_timeout_s=0.3, read_timeout_s=0.3)
    try:
        new_session(h)
        with using("en"):  # what the edge does for a request with Accept-Language: en
            run = turn(h, "t1", "hello")
        end = the_end(await collect(run))
        assert end["error"] == {"code": "timeout", "message": (
            "The model request timed out: no token within 0.3s (time to first token)")}
        end = the_end(await collect(turn(h, "t2", "喂")))  # no language asked: the service's
        assert end["error"]["message"] == "模型请求超时：0.3 秒内没有收到第一个 token"
    finally:
        await h.close()

    script_model = emulator.unique_model("deepseek-chat")
    await emulator.script(script_model, {"content": "开场白", "finish_reason": "length"})
    async with script_app(make_settings, pg_url, emulator, script_model) as c:
        async with c.stream("POST", "/api/scripts/generate", json={"brief": "回访", "stream": True},
                            headers={**SERVICE_HEADERS, **EN}) as r:
            events = [ev async for ev in read_sse(r)]
        end = end_of(events)
        assert end["error"]["message"] == "The output hit the max_tokens limit (3000) and is incomplete"
        assert end["diagnostic"]["advice"] == "Raise max_tokens"


# -- people and roles: refusals, rules and bad input in the caller's language ----------------

USERS = "/api/admin/users"
ENGLISH_PROSE = re.compile(r"[A-Za-z]{2,}[ ,;]+[A-Za-z]{2,}")


def messages(body: dict[str, Any]) -> str:
    """The error's words (not its codes or field names)."""
    error = body["error"]
    return " ".join([error["message"], *(f["message"] for f in error.get("fields", []))])


def chinese_only(body: dict[str, Any]) -> None:
    words = messages(body)
    assert HAN.search(words) and not ENGLISH_PROSE.search(words), words


async def both(client: httpx.AsyncClient, method: str, path: str, **kw: Any
               ) -> tuple[httpx.Response, httpx.Response]:
    headers = kw.pop("headers", {})
    zh = await client.request(method, path, headers={**headers, **ZH}, **kw)
    en = await client.request(method, path, headers={**headers, **EN}, **kw)
    assert zh.status_code == en.status_code, (zh.text, en.text)
    assert zh.json()["error"]["code"] == en.json()["error"]["code"]
    chinese_only(zh.json())
    english_only(en.json())
    return zh, en


async def test_role_refusals_read_in_both_languages(app_client, people) -> None:
    vera = await people.as_role("viewer", "vera")
    zh, en = await both(vera, "GET", USERS)
    assert zh.status_code == 403 and zh.json()["error"]["code"] == "forbidden"
    assert zh.json()["error"]["message"] == "此操作需要管理员角色，你的角色是只读"
    assert en.json()["error"]["message"] == "this route needs the admin role; your role is viewer"

    otto = await people.as_role("operator", "otto")
    zh, en = await both(otto, "GET", "/api/admin/audit")
    assert zh.json()["error"]["message"] == "此操作需要管理员角色，你的角色是操作员"
    assert en.json()["error"]["message"].endswith("your role is operator")

    zh, en = await both(app_client, "GET", URL, headers=SERVICE_HEADERS)
    assert zh.status_code == 403
    assert zh.json()["error"]["message"] == "服务 token 不能调用此接口，它需要只读角色"
    assert en.json()["error"]["message"] == (
        "this route is not open to the service token; it needs the viewer role")

    zh, en = await both(app_client, "POST", "/api/auth/password", headers=ADMIN_HEADERS, json={
        "current_password": "x", "new_password": "long-enough-password"})
    assert zh.status_code == 403
    assert en.json()["error"]["message"] == "only a console user signed in with a session can do this"


async def test_the_last_admin_rule_reads_in_both_languages(make_settings, pg_url) -> None:
    await reset_tables(pg_url)  # a generated admin: an ordinary one the rule applies to
    async with running_app(make_settings(**{"auth.admin_user": "",
                                             "auth.admin_password": ""})) as client:
        for method, body, zh_says, en_says in (
                ("PUT", {"role": "viewer"}, "不能降级", "cannot be demoted"),
                ("PUT", {"disabled": True}, "不能停用", "cannot be disabled"),
                ("DELETE", None, "不能删除", "cannot be deleted")):
            zh, en = await both(client, method, f"{USERS}/admin", headers=ADMIN_HEADERS, json=body)
            assert zh.status_code == 409 and zh.json()["error"]["code"] == "last_admin"
            assert zh.json()["error"]["message"] == (
                f"「admin」是最后一个启用的管理员，{zh_says}；请先让另一个人成为管理员")
            assert en.json()["error"]["message"] == (
                f"'admin' is the last enabled admin and {en_says}; make someone else an admin first")


async def test_people_conflicts_read_in_both_languages(app_client, people) -> None:
    await people.add("vera", "viewer")
    zh, en = await both(app_client, "POST", USERS, headers=ADMIN_HEADERS, json={
        "username": "vera", "password": "another-long-password", "role": "admin"})
    assert zh.status_code == 409 and zh.json()["error"]["field"] == "username"
    assert zh.json()["error"]["message"] == "已有名为「vera」的用户"
    assert en.json()["error"]["message"] == "a user named 'vera' already exists"
    zh, en = await both(app_client, "DELETE", f"{USERS}/nobody", headers=ADMIN_HEADERS)
    assert zh.status_code == 404 and zh.json()["error"]["code"] == "user_not_found"
    assert (zh.json()["error"]["message"], en.json()["error"]["message"]) == (
        "没有名为「nobody」的用户", "no user named 'nobody'")
    # The environment's admin is the environment's to change.
    zh, en = await both(app_client, "PUT", f"{USERS}/admin", headers=ADMIN_HEADERS,
                        json={"role": "viewer"})
    assert zh.status_code == 409 and zh.json()["error"]["code"] == "managed_by_environment"
    assert en.json()["error"]["message"].startswith("the role and state of 'admin' are set by")
    assert zh.json()["error"]["message"].startswith("「admin」的角色和状态由 CALLOUT_ADMIN_USER")


async def test_bad_people_input_names_the_field_in_both_languages(app_client, people) -> None:
    zh, en = await both(app_client, "POST", USERS, headers=ADMIN_HEADERS, json={
        "username": "Bad Name", "password": "short", "role": "root"})
    assert zh.status_code == 422
    by_field_zh = {f["field"]: f for f in zh.json()["error"]["fields"]}
    by_field_en = {f["field"]: f for f in en.json()["error"]["fields"]}
    assert set(by_field_zh) == set(by_field_en) == {"username", "password", "role"}
    assert by_field_zh["password"]["code"] == by_field_en["password"]["code"] == "weak_password"
    assert by_field_zh["password"]["message"] == "密码太弱：至少 12 个字符"
    assert by_field_en["password"]["message"] == "too weak: at least 12 characters"
    assert by_field_zh["username"]["code"] == "username_invalid"
    assert by_field_zh["username"]["message"].startswith("应为 3 到 64 个字符")
    assert by_field_en["username"]["message"].startswith("3 to 64 characters")
    assert by_field_zh["role"]["message"] == "应为以下之一：'viewer'、'operator'、'admin'"
    assert "password：密码太弱" in zh.json()["error"]["message"]
    assert "password: too weak" in en.json()["error"]["message"]
    assert "short" not in zh.text + en.text  # the password is not echoed

    # The same rule on the user's own new password, and the trail's query.
    otto = await people.as_role("operator", "otto")
    zh, en = await both(otto, "POST", "/api/auth/password", json={
        "current_password": "otto-secret-pass", "new_password": " " * 12})
    assert zh.status_code == 422
    assert [(f["field"], f["code"]) for f in zh.json()["error"]["fields"]] == [
        ("new_password", "password_blank")]
    assert en.json()["error"]["fields"][0]["message"] == "must not be only spaces"
    zh, en = await both(app_client, "GET", "/api/admin/audit?limit=0&since=yesterday",
                        headers=ADMIN_HEADERS)
    assert zh.status_code == 422
    assert {f["field"] for f in zh.json()["error"]["fields"]} == {"limit", "since"}
    assert "应大于或等于 1" in messages(zh.json())
