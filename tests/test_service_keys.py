"""Service keys: created by admins and shown once, stored as a keyed hash, looked up in
memory, scoped to tiers, changed and revoked on every worker; bad input named.

Against the real app on PostgreSQL, the emulator answering the NLU tier.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from callout_server.service_keys.gate import KeyGuard
from tests.fixtures.database import ADMIN_HEADERS, EN, SERVICE_HEADERS, asyncpg_dsn
from tests.support.keys import KEYS, bearer, create_key
from tests.support.nlu import DECIDE, answer, decide_body, nlu_app


async def _decide(client: httpx.AsyncClient, headers: dict[str, str]) -> httpx.Response:
    return await client.post(DECIDE, headers={**headers, **EN}, json=decide_body())


async def test_a_key_is_shown_once_stored_as_a_keyed_hash_and_works(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        created = await create_key(client, name="campaign A", tiers=["nlu"], campaign="spring-a")
        key = created["key"]
        assert key.startswith("csk_") and created["prefix"] == key[:10]
        assert (created["tiers"], created["campaign"], created["enabled"]) == (
            ["nlu"], "spring-a", True)
        assert created["created_by"] == "admin-token" and created["last_used_at"] is None

        r = await _decide(client, bearer(created))
        assert r.status_code == 200, r.text
        assert (await _decide(client, SERVICE_HEADERS)).status_code == 200  # the env token too

        listed = (await client.get(KEYS, headers=ADMIN_HEADERS)).json()["items"]
        assert [i["prefix"] for i in listed] == [created["prefix"]]
        assert "key" not in listed[0] and key not in str(listed)
        conn = await asyncpg.connect(asyncpg_dsn(pg_url))
        try:
            row = await conn.fetchrow("SELECT digest FROM callout.service_keys")
            dump = str(await conn.fetch("SELECT * FROM callout.service_keys"))
        finally:
            await conn.close()
        assert len(row["digest"]) == 64 and key not in dump and key[10:] not in dump

        # Last used: noted in memory, written in the background.
        await client.services.components[KeyGuard].last_used.flush()
        listed = (await client.get(KEYS, headers=ADMIN_HEADERS)).json()["items"]
        assert listed[0]["last_used_at"] is not None

        # Outside its tiers: 403 naming the tier; a made-up key: 401.
        r = await client.post("/api/chat/turn", headers={**bearer(created), **EN}, json={})
        assert r.status_code == 403 and "chat" in r.json()["error"]["message"], r.text
        r = await _decide(client, {"Authorization": "Bearer csk_" + "x" * 43})
        assert r.status_code == 401
        # Keys are for the dialer's routes only.
        r = await client.get(KEYS, headers=bearer(created))
        assert r.status_code == 403


async def test_change_disable_expire_and_revoke(app_client: httpx.AsyncClient) -> None:
    client = app_client
    created = await create_key(client, tiers=["script"], rpm=10)
    kid, url = created["id"], f"{KEYS}/{created['id']}"
    me = await client.get("/api/auth/me", headers=bearer(created))
    assert me.status_code == 200 and me.json()["role"] == "service"

    r = await client.put(url, headers=ADMIN_HEADERS, json={"rpm": None, "daily_tokens": 1000,
                                                           "version": 1})
    assert r.status_code == 200, r.text
    assert (r.json()["rpm"], r.json()["daily_tokens"], r.json()["version"]) == (None, 1000, 2)
    stale = await client.put(url, headers=ADMIN_HEADERS, json={"enabled": False, "version": 1})
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "version_conflict"
    same = await client.put(url, headers=ADMIN_HEADERS, json={"daily_tokens": 1000})
    assert same.status_code == 200 and same.json()["version"] == 2  # nothing changed

    r = await client.put(url, headers=ADMIN_HEADERS, json={"enabled": False})
    assert r.status_code == 200 and r.json()["enabled"] is False
    r = await client.get("/api/auth/me", headers={**bearer(created), **EN})
    assert r.status_code == 401 and "disabled" in r.json()["error"]["message"]
    await client.put(url, headers=ADMIN_HEADERS, json={"enabled": True})
    assert (await client.get("/api/auth/me", headers=bearer(created))).status_code == 200

    soon = datetime.now(UTC) + timedelta(seconds=1)
    r = await client.put(url, headers=ADMIN_HEADERS, json={"expires_at": soon.isoformat()})
    assert r.status_code == 200, r.text
    deadline = time.monotonic() + 10
    while (await client.get("/api/auth/me", headers=bearer(created))).status_code == 200:
        assert time.monotonic() < deadline, "the key never expired"
        await asyncio.sleep(0.1)
    r = await client.get("/api/auth/me", headers={**bearer(created), **EN})
    assert r.status_code == 401 and "expired" in r.json()["error"]["message"]

    assert (await client.delete(url, headers=ADMIN_HEADERS)).status_code == 204
    assert (await client.get("/api/auth/me", headers=bearer(created))).status_code == 401
    assert (await client.delete(url, headers=ADMIN_HEADERS)).status_code == 404
    assert (await client.get(KEYS, headers=ADMIN_HEADERS)).json()["items"] == []

    trail = (await client.get("/api/admin/audit", headers=ADMIN_HEADERS,
                              params={"action": "service_key"})).json()["items"]
    assert [e["action"] for e in reversed(trail)] == [
        "service_key.create", "service_key.update", "service_key.update", "service_key.update",
        "service_key.update", "service_key.revoke"]
    assert all(e["target"] == f"service_key:{kid}" for e in trail)
    assert created["key"] not in str(trail)


async def test_bad_input_is_a_422_naming_the_field(app_client: httpx.AsyncClient) -> None:
    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    cases = [
        ({"rpm": -1}, "rpm"), ({"max_in_flight": 0}, "max_in_flight"),
        ({"daily_tokens": -5}, "daily_tokens"), ({"tiers": ["nlu", "sms"]}, "tiers"),
        ({"tiers": []}, "tiers"), ({"expires_at": past}, "expires_at"),
        ({"campaign": "no spaces"}, "campaign"), ({"name": " "}, "name"),
        ({"rpm": "many"}, "rpm"), ({"owner": "x"}, "owner"),
    ]
    for fields, name in cases:
        body = {"name": "k", "tiers": ["nlu"], **fields}
        r = await app_client.post(KEYS, headers={**ADMIN_HEADERS, **EN}, json=body)
        assert r.status_code == 422, (fields, r.text)
        named = [f["field"] for f in r.json()["error"]["fields"]]
        assert any(n.split(".")[0] == name for n in named), (fields, named)
    assert (await app_client.get(KEYS, headers=ADMIN_HEADERS)).json()["items"] == []
    r = await app_client.put(f"{KEYS}/1", headers=ADMIN_HEADERS, json={"rpm": 5})
    assert r.status_code == 404
    r = await app_client.post(KEYS, headers=SERVICE_HEADERS, json={"name": "k", "tiers": ["nlu"]})
    assert r.status_code == 403


async def test_a_revocation_reaches_every_worker_within_a_second(start_worker: Any) -> None:
    one = await start_worker("one")
    two = await start_worker("two")
    async with httpx.AsyncClient(timeout=30) as c:
        created = await create_key(c, one.url, tiers=["nlu"])
        me = f"{two.url}/api/auth/me"
        deadline = time.monotonic() + 10
        while (await c.get(me, headers=bearer(created))).status_code != 200:
            assert time.monotonic() < deadline, "the second worker never saw the new key"
            await asyncio.sleep(0.05)
        r = await c.delete(f"{one.url}{KEYS}/{created['id']}", headers=ADMIN_HEADERS)
        assert r.status_code == 204
        revoked = time.monotonic()
        while (await c.get(me, headers=bearer(created))).status_code != 401:
            assert time.monotonic() - revoked < 1.0, "the revocation took over a second"
            await asyncio.sleep(0.02)
