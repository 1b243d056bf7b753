"""Lexicons of the speech guard as live state: CRUD, roles, optimistic locking, the audit
trail, the "try a sentence" endpoint, bad input named by field, and a write on one worker
reaching another. On PostgreSQL, the real app."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from callout_server.lexicons.book import LEXICONS
from tests.fixtures.database import ADMIN_HEADERS, EN
from tests.fixtures.people import People

URL = "/api/admin/lexicons"
FINANCE = {"terms": ["保本", "稳赚", "零风险"], "allow": ["确保本月", "担保本金"],
           "action": "replace", "replacement": "具体收益以合同为准。"}


async def _put(client: httpx.AsyncClient, name: str, body: dict[str, Any],
               status: int = 201) -> dict[str, Any]:
    r = await client.put(f"{URL}/{name}", headers=ADMIN_HEADERS, json=body)
    assert r.status_code == status, r.text
    return dict(r.json())


async def test_create_read_update_delete_with_versions(app_client: httpx.AsyncClient) -> None:
    created = await _put(app_client, "finance", FINANCE)
    assert (created["version"], created["action"], created["updated_by"]) == (
        1, "replace", "admin-token")
    assert created["terms"] == ["保本", "稳赚", "零风险"]
    # The worker that wrote it checks with it at once (its snapshot swapped on commit).
    book = app_client.services.store.current.section(LEXICONS)  # type: ignore[attr-defined]
    assert "finance" in book and book.get("finance").lexicon.check("穩 賺不赔") is not None

    listed = (await app_client.get(URL, headers=ADMIN_HEADERS)).json()["items"]
    assert [x["name"] for x in listed] == ["finance"]
    one = (await app_client.get(f"{URL}/finance", headers=ADMIN_HEADERS)).json()
    assert one == created

    changed = await _put(app_client, "finance", {**FINANCE, "terms": ["保本", "保本 ", "稳赚"],
                                                 "version": 1}, status=200)
    assert changed["version"] == 2 and changed["terms"] == ["保本", "稳赚"]  # stripped, once
    stale = await app_client.put(f"{URL}/finance", headers={**ADMIN_HEADERS, **EN},
                                 json={**FINANCE, "version": 1})
    assert stale.status_code == 409, stale.text
    err = stale.json()["error"]
    assert err["code"] == "version_conflict" and err["current_version"] == 2
    assert "finance" in err["message"]
    assert (await app_client.get(f"{URL}/finance", headers=ADMIN_HEADERS)).json()["terms"] == [
        "保本", "稳赚"]  # nothing written
    # Without a version the write is unconditional (an import script's overwrite).
    assert (await _put(app_client, "finance", FINANCE, status=200))["version"] == 3

    r = await app_client.delete(f"{URL}/finance", headers=ADMIN_HEADERS, params={"version": 2})
    assert r.status_code == 409 and r.json()["error"]["code"] == "version_conflict"
    r = await app_client.delete(f"{URL}/finance", headers=ADMIN_HEADERS, params={"version": 3})
    assert r.status_code == 204
    assert (await app_client.get(f"{URL}/finance", headers=ADMIN_HEADERS)).status_code == 404
    assert (await app_client.delete(f"{URL}/finance", headers=ADMIN_HEADERS)).status_code == 404
    book = app_client.services.store.current.section(LEXICONS)  # type: ignore[attr-defined]
    assert "finance" not in book

    trail = (await app_client.get("/api/admin/audit", headers=ADMIN_HEADERS,
                                  params={"action": "lexicon"})).json()["items"]
    assert [e["action"] for e in reversed(trail)] == [
        "lexicon.create", "lexicon.update", "lexicon.update", "lexicon.delete"]
    update = trail[2]
    assert update["target"] == "lexicon:finance"
    assert update["detail"]["terms_removed"] == ["零风险"]
    assert (update["detail"]["terms"], update["detail"]["version"]) == (2, 2)
    assert trail[0]["detail"]["name"] == "finance" and trail[0]["detail"]["version"] == 3


async def test_bad_input_is_a_422_naming_the_field(app_client: httpx.AsyncClient) -> None:
    cases = [
        ({**FINANCE, "terms": ["保本", ""]}, "terms"),
        ({**FINANCE, "terms": ["保本", "，。 "]}, "terms"),  # folds to nothing: never a match
        ({**FINANCE, "terms": []}, "terms"),
        ({**FINANCE, "allow": [" "]}, "allow"),
        ({**FINANCE, "action": "shout"}, "action"),
        ({"terms": ["保本"], "action": "replace"}, "replacement"),
        ({"terms": ["保本"], "action": "replace", "replacement": "  "}, "replacement"),
        ({"terms": ["保本"], "action": "drop", "replacement": "x"}, "replacement"),
        ({**FINANCE, "terms": ["保" * 65]}, "terms"),
        ({**FINANCE, "version": 0}, "version"),
        ({**FINANCE, "colour": "red"}, "colour"),
    ]
    for body, field in cases:
        r = await app_client.put(f"{URL}/finance", headers={**ADMIN_HEADERS, **EN}, json=body)
        assert r.status_code == 422, (body, r.text)
        fields = [f["field"] for f in r.json()["error"]["fields"]]
        assert any(f == field or f.startswith(f"{field}.") or f.startswith(f"{field}[")
                   for f in fields), (body, fields)
    r = await app_client.put(f"{URL}/has space", headers=ADMIN_HEADERS, json=FINANCE)
    assert r.status_code == 422
    assert (await app_client.get(URL, headers=ADMIN_HEADERS)).json()["items"] == []


async def test_viewers_read_and_try_operators_write(app_client: httpx.AsyncClient,
                                                    people: People) -> None:
    await _put(app_client, "finance", FINANCE)
    viewer = await people.as_role("viewer")
    assert (await viewer.get(URL)).status_code == 200
    r = await viewer.put(f"{URL}/finance", json=FINANCE)
    assert r.status_code == 403
    operator = await people.as_role("operator")
    r = await operator.put(f"{URL}/platform", json={"terms": ["加微信"], "action": "drop"})
    assert r.status_code == 201 and r.json()["updated_by"] == "operator-user"

    r = await viewer.post(f"{URL}/try", json={"text": "这款产品穩 賺不赔，确保本月到账。"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert (out["action"], out["lexicon"], out["spoken"]) == (
        "replace", "finance", "具体收益以合同为准。")
    assert out["hits"] == [{"lexicon": "finance", "action": "replace", "term": "稳赚",
                            "text": "穩 賺", "start": 4, "end": 7}]
    r = await viewer.post(f"{URL}/try", json={"text": "确保本月到账", "lexicons": ["finance"]})
    assert r.json() == {"action": None, "lexicon": None, "spoken": "确保本月到账", "hits": []}
    r = await viewer.post(f"{URL}/try", json={"text": "加 微信聊", "lexicons": ["platform"]})
    assert (r.json()["action"], r.json()["spoken"]) == ("drop", None)
    r = await viewer.post(f"{URL}/try", json={"text": "您的手机号是13800138000。",
                                              "mask_pii": True})
    assert r.json()["action"] == "mask_pii" and r.json()["spoken"] == "您的手机号是尾号8000。"
    r = await viewer.post(f"{URL}/try", json={"text": "x", "lexicons": ["nope"]})
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "lexicons"


async def test_a_lexicon_reaches_every_worker(start_worker: Any) -> None:
    """Saved on one worker, checked by the other within a second (through the bus)."""
    one = await start_worker("one")
    two = await start_worker("two")
    async with httpx.AsyncClient(headers=ADMIN_HEADERS, timeout=30) as c:
        async def action_on_two(text: str) -> str | None:
            r = await c.post(f"{two.url}{URL}/try", json={"text": text})
            return r.json().get("action") if r.status_code == 200 else None

        r = await c.put(f"{one.url}{URL}/finance", json=FINANCE)
        assert r.status_code == 201, r.text
        saved = time.monotonic()
        while await action_on_two("稳赚不赔") != "replace":
            assert time.monotonic() - saved < 5, "the second worker never compiled the lexicon"
            await asyncio.sleep(0.05)
        assert time.monotonic() - saved < 1.5
        r = await c.put(f"{one.url}{URL}/finance",
                        json={"terms": ["零风险"], "action": "end_turn", "version": 1})
        assert r.status_code == 200, r.text
        while await action_on_two("零风险") != "end_turn":
            assert time.monotonic() - saved < 10, "the change never reached the second worker"
            await asyncio.sleep(0.05)
        assert await action_on_two("稳赚不赔") is None


async def test_every_normalisation_through_the_live_lexicon(app_client: httpx.AsyncClient) -> None:
    await _put(app_client, "finance", {**FINANCE, "terms": [*FINANCE["terms"], "guaranteed return"]})
    hit = {
        "这款产品保本": "保本",            # as listed
        "这款产品稳 赚": "稳 赚",          # a space inside the term
        "这款产品保-本": "保-本",          # a mark inside the term
        "零風險的理財": "零風險",          # traditional characters
        "ＧＵＡＲＡＮＴＥＥＤ　ＲＥＴＵＲＮ！": "ＧＵＡＲＡＮＴＥＥＤ　ＲＥＴＵＲＮ",  # full width, case
        "a Guaranteed  Return, sir": "Guaranteed  Return",
        "保本保息，确保本月到账": "保本",   # the first 保本 overlaps nothing allowed
    }
    clean = ["确保本月到账", "担保本金的事", "保，本", "unguaranteed returns", "稳定赚钱"]
    for text, said in hit.items():
        r = await app_client.post(f"{URL}/try", headers=ADMIN_HEADERS, json={"text": text})
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["action"] == "replace" and out["hits"][0]["text"] == said, (text, out)
        assert text[out["hits"][0]["start"]:out["hits"][0]["end"]] == said
    for text in clean:
        r = await app_client.post(f"{URL}/try", headers=ADMIN_HEADERS, json={"text": text})
        assert r.json()["action"] is None and r.json()["spoken"] == text, (text, r.json())


async def test_a_lexicon_deleted_under_a_live_call_still_guards_it(
        app_client: httpx.AsyncClient) -> None:
    """A session that named a lexicon used to lose it with the delete: its next turn spoke
    the banned term. The worker keeps the deleted lexicon's last version for the sessions
    that name it; a new session naming it is refused, as for any unknown name."""
    await _put(app_client, "banned", {"terms": ["结尾"], "action": "replace",
                                      "replacement": "【已屏蔽】"})
    r = await app_client.post("/api/chat/sessions", headers=ADMIN_HEADERS, json={
        "call_id": "lx-1", "guard": {"lexicons": ["banned"]}})
    assert r.status_code == 201, r.text
    r = await app_client.delete(f"{URL}/banned", headers=ADMIN_HEADERS)
    assert r.status_code == 204, r.text
    book = app_client.services.store.current.section(LEXICONS)  # type: ignore[attr-defined]
    assert "banned" not in book and book.missing(["banned"]) == ["banned"]
    (kept,) = book.resolve(["banned"])  # what the live session's guard checks with
    assert kept.lexicon.check("开场白中间结尾") is not None and kept.replacement == "【已屏蔽】"
    r = await app_client.post("/api/chat/sessions", headers=ADMIN_HEADERS, json={
        "call_id": "lx-2", "guard": {"lexicons": ["banned"]}})
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "guard.lexicons"
    # Created again: the new version is the one checked, by old sessions and new.
    await _put(app_client, "banned", {"terms": ["别的"], "action": "drop"})
    book = app_client.services.store.current.section(LEXICONS)  # type: ignore[attr-defined]
    (again,) = book.resolve(["banned"])
    assert again.action == "drop" and again.lexicon.check("开场白中间结尾") is None
