"""Hostile input is refused whole, on PostgreSQL and SQLite alike, and nothing is half-written.

Every case here once reached a 500 (several only on PostgreSQL, which refuses NUL bytes and
NaN that SQLite takes) or stored a value that broke later reads.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from tests.fixtures.app import running_app
from tests.fixtures.database import (
    ADMIN_HEADERS,
    EN,
    SERVICE_HEADERS,
    llm_config_body,
    reset_tables,
)

URL = "/api/admin/llm-configs"
BIG_ID = 2**63  # one past BIGINT


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest_asyncio.fixture(params=["postgresql", "sqlite"], loop_scope="session")
async def client(request, pg_url, make_settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app on PostgreSQL, then on the embedded SQLite file: answers must not differ."""
    if request.param == "postgresql":
        await reset_tables(pg_url)
        settings = make_settings()
    else:
        settings = make_settings(**{"database.url": "", "database.sqlite_path":
                                    str(request.getfixturevalue("sqlite_file"))})
    async with running_app(settings, raise_app_exceptions=False) as c:
        yield c


async def _stored(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    r = await client.get(URL, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def _fields(r: httpx.Response) -> list[str]:
    assert r.status_code == 422, r.text
    body = r.json()["error"]
    assert body["code"] == "validation_error"
    return [f["field"] for f in body["fields"]]


# -- JSON-valued fields: depth, size, finiteness --------------------------------------------

@pytest.mark.parametrize(("value", "words"), [
    (nested(33), "deeper than 32"),
    (nested(300), "deeper than 32"),
    ({"k": "x" * (70 * 1024)}, "64 KB"),
    ({"k": float("nan")}, "NaN"),
    ({"k": float("inf")}, "NaN"),
    ({"k": 2**70}, "64 bits"),
    ({"k\u0000": 1}, "NUL"),
    ({"k": ["a\u0000b"]}, "NUL"),
])
async def test_bad_extra_params_refused_before_anything_is_written(client, value, words) -> None:
    body = json.dumps(llm_config_body(extra_params=value), allow_nan=True)
    r = await client.post(URL, content=body, headers={**ADMIN_HEADERS, **EN,
                                                      "Content-Type": "application/json"})
    assert _fields(r) == ["extra_params"]
    assert words in r.json()["error"]["message"]
    assert await _stored(client) == []


async def test_put_with_deep_extra_params_changes_nothing(client) -> None:
    created = (await client.post(URL, json=llm_config_body(), headers=ADMIN_HEADERS)).json()
    r = await client.put(f"{URL}/{created['id']}", headers=ADMIN_HEADERS,
                         json={"version": 1, "extra_params": nested(255)})
    assert _fields(r) == ["extra_params"]
    assert await _stored(client) == [created]
    revisions = await client.get(f"{URL}/{created['id']}/revisions", headers=ADMIN_HEADERS)
    assert revisions.status_code == 200 and len(revisions.json()["items"]) == 1


async def test_a_deep_value_just_inside_the_bound_round_trips(client) -> None:
    r = await client.post(URL, json=llm_config_body(extra_params=nested(32)),
                          headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    assert (await _stored(client))[0]["extra_params"] == nested(32)


# -- text that the database cannot hold ------------------------------------------------------

@pytest.mark.parametrize("field", ["name", "model"])
async def test_nul_in_a_stored_name_is_422(client, field) -> None:
    r = await client.post(URL, json=llm_config_body(**{field: "qwen\u0000x"}),
                          headers=ADMIN_HEADERS)
    assert _fields(r) == [field]
    assert await _stored(client) == []


async def test_nul_in_login_username_is_refused_not_500(client) -> None:
    r = await client.post("/api/auth/login", json={"username": "ad\u0000min",
                                                   "password": "whatever-password"})
    assert r.status_code == 422, r.text
    assert _fields(r) == ["username"]


async def test_nul_in_a_query_value_is_422_naming_it(client) -> None:
    r = await client.get("/api/admin/diagnostics?call_id=x%00y", headers=ADMIN_HEADERS)
    assert _fields(r) == ["call_id"]


# -- numbers beyond the columns --------------------------------------------------------------

@pytest.mark.parametrize("path", [f"{URL}/{BIG_ID}", f"{URL}/{BIG_ID}/revisions",
                                  f"/api/admin/scripts/{BIG_ID}",
                                  f"/api/admin/diagnostics?before_id={BIG_ID}",
                                  f"/api/admin/scripts?before_id={BIG_ID}"])
async def test_ids_beyond_bigint_are_422(client, path) -> None:
    r = await client.get(path, headers=ADMIN_HEADERS)
    assert r.status_code == 422, r.text


async def test_versions_beyond_integer_are_422(client) -> None:
    created = (await client.post(URL, json=llm_config_body(), headers=ADMIN_HEADERS)).json()
    r = await client.put(f"{URL}/{created['id']}", json={"version": 2**31, "name": "x"},
                         headers=ADMIN_HEADERS)
    assert _fields(r) == ["version"]
    r = await client.delete(f"{URL}/{created['id']}?version={2**63}", headers=ADMIN_HEADERS)
    assert _fields(r) == ["version"]
    assert await _stored(client) == [created]


# -- times without a zone --------------------------------------------------------------------

@pytest.mark.parametrize("since", ["2026-11-30T00:00:00", "2026-11-30", "2026-11-30T08:00:00+08:00"])
async def test_diagnostics_since_without_zone_means_utc(client, since) -> None:
    r = await client.get("/api/admin/diagnostics", params={"since": since}, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text


async def test_diagnostics_since_out_of_range_is_422(client) -> None:
    r = await client.get("/api/admin/diagnostics", params={"since": "9999-12-31T23:59:59-23:59"},
                         headers=ADMIN_HEADERS)
    assert _fields(r) == ["since"]


# -- the body: parsed only after credentials, and bounded ------------------------------------

async def test_unauthenticated_body_is_never_read(client) -> None:
    read = []

    async def body() -> AsyncIterator[bytes]:
        read.append(True)
        yield b'{"utterance": "x", "intents": [{"name": "a"}]}'

    r = await client.post("/api/nlu/decide", content=body(),
                          headers={"Content-Type": "application/json"})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "unauthorized"
    assert read == []


async def test_declared_oversized_body_is_413_before_auth(client) -> None:
    r = await client.post(URL, content=b"x" * (1024 * 1024 + 1),
                          headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "payload_too_large"


async def test_nlu_route_has_a_smaller_limit(client) -> None:
    big = {"utterance": "好" * 50_000, "intents": [{"name": "a"}]}  # ~150 KB in UTF-8
    r = await client.post("/api/nlu/decide", json=big, headers=SERVICE_HEADERS)
    assert r.status_code == 413
    assert str(128 * 1024) in r.json()["error"]["message"]


async def test_chunked_body_growing_past_the_limit_is_413(client) -> None:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(40):
            yield b" " * 32 * 1024  # no Content-Length: counted as it arrives

    r = await client.post(URL, content=body(), headers={**ADMIN_HEADERS,
                                                        "Content-Type": "application/json"})
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "payload_too_large"


async def test_invalid_json_names_line_and_column(client) -> None:
    r = await client.post(URL, content=b'{\n  "tier": "nlu",\n  "name": oops\n}',
                          headers={**ADMIN_HEADERS, **EN, "Content-Type": "application/json"})
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["fields"][0]["field"] == "body"
    assert "line 3 column 11" in err["message"]
    zh = await client.post(URL, content=b'{\n  "tier": "nlu",\n  "name": oops\n}',
                           headers={**ADMIN_HEADERS, "Content-Type": "application/json"})
    assert "第 3 行第 11 列" in zh.json()["error"]["message"]  # [server] locale: zh


# -- every error is the envelope -------------------------------------------------------------

async def test_unexpected_error_is_a_500_envelope(client) -> None:
    async def boom() -> None:
        raise RuntimeError("a bug")

    client.app.router.add_api_route("/api/admin/test-boom", boom)
    r = await client.get("/api/admin/test-boom", headers=ADMIN_HEADERS)
    assert r.status_code == 500
    assert r.json()["error"]["code"] == "internal_error"
    assert "a bug" not in r.text


async def test_429_carries_retry_after(client) -> None:
    for _ in range(12):
        r = await client.post("/api/auth/login", json={"username": "admin", "password": "nope"})
        if r.status_code == 429:
            break
    assert r.status_code == 429
    assert int(r.headers["Retry-After"]) >= 1


# -- chat sessions bounded in bytes ----------------------------------------------------------

def _tool(name: str, size: int) -> dict[str, Any]:
    return {"type": "function", "name": name, "description": "d",
            "parameters": {"type": "object", "properties": {"p": {"description": "x" * size}}}}


async def test_chat_tools_are_bounded_in_bytes(client) -> None:
    tools = [_tool(f"t{i}", 20_000) for i in range(4)]  # each fine, together over 64 KB
    r = await client.post("/api/chat/sessions", json={"call_id": "c1", "tools": tools},
                          headers=SERVICE_HEADERS)
    assert _fields(r) == ["tools"]


async def test_chat_sessions_are_bounded_in_bytes_per_worker(client) -> None:
    chat = client.app.state.services.chat
    chat.settings = chat.settings.model_copy(update={"max_sessions_bytes": 50_000})
    body = {"system_prompt": "好" * 10_000}  # 30 KB each
    r = await client.post("/api/chat/sessions", json={"call_id": "a", **body},
                          headers=SERVICE_HEADERS)
    assert r.status_code == 201, r.text
    r = await client.post("/api/chat/sessions", json={"call_id": "b", **body},
                          headers=SERVICE_HEADERS)
    assert r.status_code == 503 and r.json()["error"]["code"] == "too_many_sessions"
    assert "max_sessions_bytes" in r.json()["error"]["message"]
    assert int(r.headers["Retry-After"]) >= 1
    await client.delete("/api/chat/sessions/a", headers=SERVICE_HEADERS)
    r = await client.post("/api/chat/sessions", json={"call_id": "b", **body},
                          headers=SERVICE_HEADERS)
    assert r.status_code == 201, r.text


# -- the same bounds on the service routes ---------------------------------------------------

@pytest.mark.parametrize(("path", "body", "field"), [
    ("/api/nlu/decide", {"utterance": "x", "intents": [{"name": "a"}],
                         "overrides": {"extra_params": nested(40)}}, "overrides.extra_params"),
    ("/api/nlu/decide", {"utterance": "x", "slots": [{"name": "s", "type": "enum",
                                                      "values": ["a\u0000"]}]}, "slots.0.values"),
    ("/api/nlu/decide", {"utterance": "x\u0000", "intents": [{"name": "a"}]}, "utterance"),
    ("/api/nlu/decide", {"utterance": "x\ud800", "intents": [{"name": "a"}]}, "utterance"),
    ("/api/chat/sessions", {"call_id": "c", "tools": [{"type": "function", "name": "f",
                                                       "parameters": {"type": "object",
                                                                      "x": nested(40)}}]},
     "tools.0.parameters"),
    ("/api/scripts/generate", {"brief": "回访客户", "overrides": {"extra_params": {"n": 2**80}}},
     "overrides.extra_params"),
])
async def test_service_routes_bound_json_values(client, path, body, field) -> None:
    # json.dumps escapes a lone surrogate as \\ud800, as a client's JSON encoder would.
    r = await client.post(path, content=json.dumps(body), headers={
        **SERVICE_HEADERS, "Content-Type": "application/json"})
    assert _fields(r) == [field]
