"""The admin API's key rules on PostgreSQL: what a key and a base URL may hold, the stored key
never following base_url to another host, and credentials in stored URLs shown masked."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from callout_server.llm.masking import mask_api_key
from tests.fixtures.database import ADMIN_HEADERS, asyncpg_dsn, llm_config_body
from tests.test_config_credentials import BAD_KEYS, SECRET

URL = "/api/admin/llm-configs"
H = ADMIN_HEADERS
KEY = "sk-proj-Hc4Rt8Yp2Wq6Lm0Nz3Vb7Xk1"
OTHER_KEY = "sk-proj-Df5Gh9Jk3Lz7Xc1Vb5Nm8Qw2"


async def _create(client, **fields: Any) -> dict[str, Any]:
    r = await client.post(URL, json=llm_config_body(**fields), headers=H)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


async def _put(client, cid: int, **fields: Any):
    return await client.put(f"{URL}/{cid}", json=fields, headers=H)


async def _revisions(client, cid: int) -> list[dict[str, Any]]:
    return (await client.get(f"{URL}/{cid}/revisions", headers=H)).json()["items"]  # type: ignore[no-any-return]


def _names_field(r, field: str, code: str = "validation_error") -> None:
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == code and field in error["message"]
    assert [f["field"] for f in error["fields"]] == [field]


# -- item 3: values that would break every call are refused on save ---------------------------


@pytest.mark.parametrize("name", sorted(BAD_KEYS))
async def test_unsendable_key_is_refused_on_create_and_update(app_client, name: str) -> None:
    bad = BAD_KEYS[name]
    r = await app_client.post(URL, json=llm_config_body(api_key=bad), headers=H)
    _names_field(r, "api_key")
    assert SECRET[:10] not in r.text and SECRET[-10:] not in r.text
    assert (await app_client.get(URL, headers=H)).json()["items"] == []

    created = await _create(app_client, api_key=KEY)
    r = await _put(app_client, created["id"], version=1, api_key=bad)
    _names_field(r, "api_key")
    assert SECRET[:10] not in r.text and SECRET[-10:] not in r.text
    after = (await app_client.get(f"{URL}/{created['id']}", headers=H)).json()
    assert after == created  # nothing written: same key, same version
    assert len(await _revisions(app_client, created["id"])) == 1


async def test_surrounding_whitespace_is_trimmed_not_refused(app_client) -> None:
    created = await _create(app_client, api_key=f"  {KEY}\n")
    assert created["api_key_masked"] == mask_api_key(KEY)
    r = await _put(app_client, created["id"], version=1, api_key=KEY)
    assert r.status_code == 200
    assert "api_key" not in (await _revisions(app_client, created["id"]))[0]["fields"]  # same key


@pytest.mark.parametrize("url", ["http://user:hunter2@h.example/v1", "https://tok@h.example/v1",
                                 "http://@h.example/v1"])
async def test_base_url_credentials_are_refused(app_client, url: str) -> None:
    r = await app_client.post(URL, json=llm_config_body(base_url=url), headers=H)
    _names_field(r, "base_url")
    assert "hunter2" not in r.text
    created = await _create(app_client)
    r = await _put(app_client, created["id"], version=1, base_url=url)
    _names_field(r, "base_url")
    assert (await app_client.get(f"{URL}/{created['id']}", headers=H)).json() == created


# -- item 10: the stored key does not follow base_url to another origin ----------------------


@pytest.mark.parametrize("new_url", [
    "http://other.example/v1",          # host
    "http://h.example:8080/v1",         # port
    "https://h.example/v1",             # scheme
    "http://127.0.0.1:8900/v1",
])
async def test_moving_a_keyed_config_to_another_origin_needs_the_key(app_client,
                                                                     new_url: str) -> None:
    created = await _create(app_client, api_key=KEY, base_url="http://h.example/v1")
    cid = created["id"]
    for sent in ({}, {"api_key": None}, {"api_key": created["api_key_masked"]}):
        r = await _put(app_client, cid, version=1, base_url=new_url, **sent)
        _names_field(r, "api_key", code="api_key_required")
    assert (await app_client.get(f"{URL}/{cid}", headers=H)).json() == created
    assert len(await _revisions(app_client, cid)) == 1

    r = await _put(app_client, cid, version=1, base_url=new_url, api_key=OTHER_KEY)
    assert r.status_code == 200, r.text
    assert r.json()["base_url"] == new_url and r.json()["api_key_masked"].endswith(OTHER_KEY[-4:])


async def test_same_origin_moves_and_keyless_configs_need_no_key(app_client) -> None:
    keyed = await _create(app_client, api_key=KEY, base_url="http://h.example/v1")
    for version, url in enumerate(["http://H.EXAMPLE:80/proxy/v1", "http://h.example/v2"], 1):
        r = await _put(app_client, keyed["id"], version=version, base_url=url)
        assert r.status_code == 200, r.text
    keyless = await _create(app_client, base_url="http://h.example/v1")
    r = await _put(app_client, keyless["id"], version=1, base_url="http://elsewhere.example/v1")
    assert r.status_code == 200, r.text


async def test_clearing_or_restating_the_key_allows_the_move(app_client) -> None:
    a = await _create(app_client, api_key=KEY, base_url="http://h.example/v1")
    r = await _put(app_client, a["id"], version=1, base_url="http://b.example/v1", api_key="")
    assert r.status_code == 200 and r.json()["has_api_key"] is False
    b = await _create(app_client, api_key=KEY, base_url="http://h.example/v1")
    r = await _put(app_client, b["id"], version=1, base_url="http://b.example/v1", api_key=KEY)
    assert r.status_code == 200 and r.json()["has_api_key"] is True


async def test_a_listener_never_receives_the_stored_key(app_client, emulator) -> None:
    """The attack the rule closes: point a keyed configuration at a listener, press test."""
    seen: list[bytes] = []

    async def listener(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        body = b'{"error": {"message": "no"}}'
        writer.write(b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(listener, "127.0.0.1", 0)
    evil = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    try:
        created = await _create(app_client, api_key=KEY, base_url=emulator.base_url("vllm"))
        cid = created["id"]
        r = await _put(app_client, cid, version=1, base_url=evil,
                       api_key=created["api_key_masked"])
        assert r.status_code == 422
        await app_client.post(f"{URL}/{cid}/test", headers=H)  # still the emulator
        assert seen == []
        r = await _put(app_client, cid, version=1, base_url=evil, api_key=OTHER_KEY)
        assert r.status_code == 200
        result = (await app_client.post(f"{URL}/{cid}/test", headers=H)).json()
        assert result["ok"] is False and result["diagnostic"]["status"] == 401
    finally:
        server.close()
        await server.wait_closed()
    assert len(seen) == 1
    assert OTHER_KEY.encode() in seen[0] and KEY.encode() not in seen[0]


# -- item 11: credentials already stored are shown masked on every way out --------------------


async def _store_raw_base_url(pg_url: str, cid: int, base_url: str) -> None:
    """What an older version may have saved: written beside the API, on purpose."""
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        await conn.execute("UPDATE callout.ai_llm_configs SET base_url = $1 WHERE id = $2",
                           base_url, cid)
    finally:
        await conn.close()


async def test_stored_url_credentials_are_masked_everywhere(app_client, pg_url) -> None:
    password = "hunter2" + "pw"
    created = await _create(app_client, tier="chat", api_key=KEY, is_active=True,
                            base_url="http://gw.example/v1")
    cid = created["id"]
    await _store_raw_base_url(pg_url, cid, f"http://bob:{password}@gw.example/v1")
    await app_client.services.store.refresh()  # type: ignore[attr-defined]

    got = (await app_client.get(f"{URL}/{cid}", headers=H)).json()
    assert got["base_url"] == "http://****@gw.example/v1"
    listed = (await app_client.get(URL, headers=H)).json()["items"]
    assert listed[0]["base_url"] == "http://****@gw.example/v1"
    active = (await app_client.get("/api/admin/llm-active", headers=H)).json()
    assert active["tiers"]["chat"]["config"]["base_url"] == "http://****@gw.example/v1"

    # A call through such a row is a diagnostic naming the problem, not the credentials.
    tested = (await app_client.post(f"{URL}/{cid}/test", headers=H)).json()
    assert tested["ok"] is False and tested["diagnostic"]["code"] == "connect_error"
    assert "user:password@" in tested["diagnostic"]["detail"]

    # Sending the masked URL back is refused (credentials are not saved again) ...
    r = await _put(app_client, cid, version=1, base_url=got["base_url"])
    _names_field(r, "base_url")
    # ... removing them is a same-origin change: no key needed; history shows old masked.
    r = await _put(app_client, cid, version=1, base_url="http://gw.example/v1")
    assert r.status_code == 200, r.text
    revs = await _revisions(app_client, cid)
    assert revs[0]["changes"]["base_url"] == {"old": "http://****@gw.example/v1",
                                              "new": "http://gw.example/v1"}

    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        rows = await conn.fetch("SELECT changes::text AS c FROM callout.ai_llm_config_revisions")
    finally:
        await conn.close()
    assert all(password not in r["c"] for r in rows)
    for r in (got, listed, active, revs, tested):
        assert password not in str(r)
