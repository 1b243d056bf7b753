"""Script drafts through the admin routes (keyset paging, optimistic locking), request
validation, auth scopes, and what the generation prompt asks of the model."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from callout_server.tiers.script.prompt import SYSTEM, build_messages
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS
from tests.fixtures.emulator import EmulatorHandle
from tests.support.scripts import BRIEF, SCRIPT, MakeSettings, generate, get_draft, script_app

URL = "/api/admin/scripts"


async def _make_drafts(c: httpx.AsyncClient, n: int) -> list[int]:
    ids = []
    for i in range(n):
        r = await generate(c, title=f"草稿{i}")
        assert r.status_code == 200, r.text
        ids.append(r.json()["draft_id"])
    return ids


async def test_list_is_newest_first_with_keyset_paging(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        ids = await _make_drafts(c, 5)
        seen: list[int] = []
        before: int | None = None
        pages = 0
        while True:
            params: dict[str, Any] = {"limit": 2}
            if before is not None:
                params["before_id"] = before
            r = await c.get(URL, headers=ADMIN_HEADERS, params=params)
            assert r.status_code == 200, r.text
            page = r.json()
            seen += [d["id"] for d in page["items"]]
            pages += 1
            before = page["next_before_id"]
            if before is None:
                break
            assert before == page["items"][-1]["id"]
        assert seen == sorted(ids, reverse=True) and pages == 3
        first = (await c.get(URL, headers=ADMIN_HEADERS)).json()["items"][0]
        assert first["title"] == "草稿4" and first["script"] == SCRIPT
        r = await c.get(URL, headers=ADMIN_HEADERS, params={"limit": 0})
        assert r.status_code == 422 and "limit" in r.json()["error"]["message"]


async def test_edit_with_version_and_stale_version_is_409(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        (draft_id,) = await _make_drafts(c, 1)
        before = await get_draft(c, draft_id)

        r = await c.put(f"{URL}/{draft_id}", headers=ADMIN_HEADERS,
                        json={"version": 1, "title": "改过的标题", "script": "您好，改过的话术。"})
        assert r.status_code == 200, r.text
        edited = r.json()
        assert edited["version"] == 2 and edited["title"] == "改过的标题"
        assert edited["script"] == "您好，改过的话术。" and edited["brief"] == BRIEF
        assert edited["updated_at"] >= before["updated_at"]
        assert edited["created_at"] == before["created_at"]
        # Who saved it: the admin principal now, the service that generated it before.
        assert (before["updated_by"], edited["updated_by"]) == ("service-token", "admin-token")

        # Someone still holding version 1 saves: refused, and nothing changes.
        r = await c.put(f"{URL}/{draft_id}", headers=ADMIN_HEADERS,
                        json={"version": 1, "script": "过期的修改"})
        assert r.status_code == 409, r.text
        err = r.json()["error"]
        assert err["code"] == "version_conflict" and err["current_version"] == 2
        assert await get_draft(c, draft_id) == edited

        r = await c.put(f"{URL}/{draft_id}", headers=ADMIN_HEADERS,
                        json={"version": 2, "brief": "新的需求描述"})
        assert r.status_code == 200 and r.json()["version"] == 3
        assert r.json()["script"] == "您好，改过的话术。"  # fields not sent are kept


async def test_delete_and_404s(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        (draft_id,) = await _make_drafts(c, 1)
        r = await c.delete(f"{URL}/{draft_id}", headers=ADMIN_HEADERS)
        assert r.status_code == 204 and r.content == b""
        for method, kw in [("GET", {}), ("DELETE", {}),
                           ("PUT", {"json": {"version": 1, "title": "x"}})]:
            r = await c.request(method, f"{URL}/{draft_id}", headers=ADMIN_HEADERS, **kw)
            assert r.status_code == 404, (method, r.text)
            assert r.json()["error"]["code"] == "not_found"
        assert (await c.get(URL, headers=ADMIN_HEADERS)).json() == {
            "items": [], "next_before_id": None}


@pytest.mark.parametrize(("body", "field"), [
    ({"brief": ""}, "brief"),
    ({"brief": "   \n  "}, "brief"),  # whitespace is not a brief
    ({"overrides": {"model": "other"}}, "overrides.model"),
    ({"overrides": {"max_tokens": 0}}, "overrides.max_tokens"),
    ({"overrides": {"extra_params": {"stream": False}}}, "overrides.extra_params"),
    ({"unknown": 1}, "unknown"),
    ({"title": "长" * 201}, "title"),
])
async def test_generate_validation_is_422_naming_the_field(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
    body: dict[str, Any], field: str,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await c.post("/api/scripts/generate", headers=SERVICE_HEADERS,
                         json={"brief": BRIEF, "stream": False, **body})
        assert r.status_code == 422, r.text
        err = r.json()["error"]
        assert err["code"] == "validation_error"
        assert field in err["message"] and field in [f["field"] for f in err["fields"]]
    assert await emulator.requests(model) == []  # nothing reached the model


@pytest.mark.parametrize(("body", "field"), [
    ({"title": "x"}, "version"),
    ({"version": 0, "title": "x"}, "version"),
    ({"version": 1, "script": ""}, "script"),
    ({"version": 1, "title": "  "}, "title"),
    ({"version": 1, "status": "complete"}, "status"),  # not writable
])
async def test_edit_validation_is_422_naming_the_field(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
    body: dict[str, Any], field: str,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        (draft_id,) = await _make_drafts(c, 1)
        r = await c.put(f"{URL}/{draft_id}", headers=ADMIN_HEADERS, json=body)
        assert r.status_code == 422, r.text
        assert field in r.json()["error"]["message"]
        assert (await get_draft(c, draft_id))["version"] == 1


async def test_auth_scopes(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await c.post("/api/scripts/generate", json={"brief": BRIEF})
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        r = await c.post("/api/scripts/generate", json={"brief": BRIEF},
                         headers={"Authorization": "Bearer wrong"})
        assert r.status_code == 401
        for method, path in [("GET", URL), ("GET", f"{URL}/1"), ("PUT", f"{URL}/1"),
                             ("DELETE", f"{URL}/1")]:
            kw: dict[str, Any] = {"json": {"version": 1}} if method == "PUT" else {}
            r = await c.request(method, path, **kw)
            assert r.status_code == 401, (method, path)
            r = await c.request(method, path, headers=SERVICE_HEADERS, **kw)
            assert r.status_code == 403, (method, path, r.text)
    assert await emulator.requests(model) == []


async def test_prompt_asks_for_a_script_fit_for_a_phone_call(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        assert (await generate(c)).status_code == 200
    (sent,) = await emulator.requests(model)
    system, user = sent["body"]["messages"]
    assert system == {"role": "system", "content": SYSTEM}
    assert user["role"] == "user" and BRIEF in user["content"]
    required = {
        "short spoken sentences": ["口语化", "简短"],
        "opening: who is calling and why": ["开场白", "我是谁", "为什么来电"],
        "branches": ["同意", "拒绝", "忙", "打错人", "提出问题", "转人工"],
        "compliance: identity and opt-out": ["表明身份", "不再来电"],
        "slots to collect": ["槽位", "需收集"],
    }
    for why, words in required.items():
        for word in words:
            assert word in SYSTEM, (why, word)


async def test_brief_and_title_are_stored_stripped(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await generate(c, brief=f"  {BRIEF}\n", title="   ")
        draft = await get_draft(c, r.json()["draft_id"])
        assert draft["brief"] == BRIEF and draft["title"] == BRIEF[:60]  # blank title: default
    (sent,) = await emulator.requests(model)
    assert sent["body"]["messages"][1]["content"] == f"需求：{BRIEF}"


def test_build_messages_puts_the_brief_after_the_system_prompt() -> None:
    assert build_messages(BRIEF) == [{"role": "system", "content": SYSTEM},
                                     {"role": "user", "content": f"需求：{BRIEF}"}]


async def test_a_nul_in_the_model_answer_is_stored_visibly_not_lost(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    """PostgreSQL refuses NUL in text: the draft keeps the script with U+FFFD in its place."""
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": "开场白\u0000结束语"})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await generate(c)
        assert r.status_code == 200, r.text
        assert r.json()["draft_id"] is not None and r.json().get("draft_error") is None
        draft = await get_draft(c, r.json()["draft_id"])
        assert draft["script"] == "开场白\ufffd结束语"
