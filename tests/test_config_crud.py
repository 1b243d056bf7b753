"""Create / read / update / activate / delete, optimistic locking, revisions, fallback."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, asyncpg_dsn, llm_config_body

URL = "/api/admin/llm-configs"
H = ADMIN_HEADERS
KEY = "gpustack_7f3a9c0d1e2b3a4f5a6b7c8df1a2"


async def _create(client, **fields):
    r = await client.post(URL, json=llm_config_body(**fields), headers=H)
    assert r.status_code == 201, r.text
    return r.json()


async def _generation(client) -> int:
    return (await client.get("/healthz")).json()["config_generation"]


async def test_create_get_list_shape(app_client) -> None:
    created = await _create(app_client, name="qwen-nlu", api_key=KEY, vendor="gpustack")
    assert created["api_key_masked"] == "gpustack_7f3a****f1a2"
    assert created["has_api_key"] is True
    assert "api_key" not in created
    assert created["version"] == 1 and created["is_active"] is False
    assert created["updated_by"]  # the principal that made the change
    assert created["updated_at"].endswith("Z") or created["updated_at"].endswith("+00:00")
    expected = {"id", "tier", "name", "base_url", "api_key_masked", "has_api_key", "model",
                "api_style", "timeout_s", "max_tokens", "temperature", "enable_thinking",
                "reasoning_effort", "extra_params", "vendor", "is_active", "version",
                "updated_at", "updated_by",
                "endpoints", "fallback_ids", "hedge_after_ms", "max_in_flight",  # pools
                "price",  # usage and cost (docs/usage.md)
                "send_priority"}
    assert set(created) == expected
    assert (created["endpoints"], created["fallback_ids"]) == ([], [])
    got = (await app_client.get(f"{URL}/{created['id']}", headers=H)).json()
    assert got == created
    items = (await app_client.get(URL, headers=H)).json()["items"]
    assert items == [created]


async def test_not_found_and_auth(app_client) -> None:
    assert (await app_client.get(f"{URL}/999", headers=H)).status_code == 404
    assert (await app_client.get(f"{URL}/999", headers=H)).json()["error"]["code"] == "not_found"
    assert (await app_client.get(URL)).status_code == 401
    assert (await app_client.get(URL, headers=SERVICE_HEADERS)).status_code == 403
    assert (await app_client.get("/api/admin/llm-active", headers=SERVICE_HEADERS)).status_code == 403


async def test_duplicate_name_in_tier_is_409(app_client) -> None:
    await _create(app_client, name="same")
    r = await app_client.post(URL, json=llm_config_body(name="same"), headers=H)
    assert r.status_code == 409 and r.json()["error"]["code"] == "name_conflict"
    await _create(app_client, name="same", tier="chat")  # another tier: fine


async def test_update_bumps_version_and_generation(app_client) -> None:
    created = await _create(app_client)
    gen = await _generation(app_client)
    r = await app_client.put(f"{URL}/{created['id']}",
                             json={"version": 1, "max_tokens": 500, "temperature": None},
                             headers=H)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["version"] == 2 and body["max_tokens"] == 500 and body["temperature"] is None
    assert body["model"] == created["model"]  # left out: kept
    assert await _generation(app_client) == gen + 1


async def test_stale_version_is_409_and_changes_nothing(app_client) -> None:
    created = await _create(app_client, api_key=KEY)
    cid = created["id"]
    ok = await app_client.put(f"{URL}/{cid}", json={"version": 1, "model": "m2"}, headers=H)
    assert ok.status_code == 200
    before = (await app_client.get(f"{URL}/{cid}", headers=H)).json()
    gen = await _generation(app_client)
    revs = (await app_client.get(f"{URL}/{cid}/revisions", headers=H)).json()["items"]
    stale = await app_client.put(f"{URL}/{cid}", json={"version": 1, "model": "m3",
                                                       "api_key": ""}, headers=H)
    assert stale.status_code == 409
    err = stale.json()["error"]
    assert err["code"] == "version_conflict" and err["current_version"] == 2
    assert (await app_client.get(f"{URL}/{cid}", headers=H)).json() == before
    assert await _generation(app_client) == gen
    assert (await app_client.get(f"{URL}/{cid}/revisions", headers=H)).json()["items"] == revs
    # delete with a stale version: same rule
    assert (await app_client.delete(f"{URL}/{cid}?version=1", headers=H)).status_code == 409


async def test_concurrent_updates_one_wins(app_client) -> None:
    created = await _create(app_client)
    puts = [app_client.put(f"{URL}/{created['id']}", json={"version": 1, "max_tokens": n},
                           headers=H) for n in (101, 102, 103, 104)]
    codes = sorted(r.status_code for r in await asyncio.gather(*puts))
    assert codes == [200, 409, 409, 409]


async def test_api_key_put_rules(app_client) -> None:
    created = await _create(app_client, api_key=KEY)
    cid, masked = created["id"], created["api_key_masked"]

    async def put(version: int, **fields):
        r = await app_client.put(f"{URL}/{cid}", json={"version": version, **fields}, headers=H)
        assert r.status_code == 200, r.text
        return r.json()

    assert (await put(1))["api_key_masked"] == masked                      # omitted
    assert (await put(2, api_key=None))["api_key_masked"] == masked        # null
    assert (await put(3, api_key=masked))["api_key_masked"] == masked      # masked echo
    assert app_client.services.store.current.generation > 0
    replaced = await put(4, api_key="sk-NEWKEY0123456789abcd")
    assert replaced["api_key_masked"] == "sk-NEWK****abcd"
    cleared = await put(5, api_key="")
    assert cleared["has_api_key"] is False and cleared["api_key_masked"] == ""
    revs = (await app_client.get(f"{URL}/{cid}/revisions", headers=H)).json()["items"]
    key_changes = [r["changes"]["api_key"] for r in reversed(revs) if "api_key" in r["changes"]]
    assert key_changes == [{"change": "set"}, {"change": "replaced"}, {"change": "cleared"}]


async def test_activation_is_atomic_and_exclusive(app_client, pg_url) -> None:
    a = await _create(app_client, name="a", is_active=True)
    b = await _create(app_client, name="b")
    c = await _create(app_client, name="c", tier="chat", is_active=True)
    r = await app_client.post(f"{URL}/{b['id']}/activate", headers=H)
    assert r.status_code == 200 and r.json()["is_active"] is True
    states = {i["name"]: i["is_active"] for i in
              (await app_client.get(URL, headers=H)).json()["items"]}
    assert states == {"a": False, "b": True, "c": True}
    # Activating again is a no-op: no new generation.
    gen = await _generation(app_client)
    assert (await app_client.post(f"{URL}/{b['id']}/activate", headers=H)).status_code == 200
    assert await _generation(app_client) == gen
    # Many concurrent activations in one tier: always exactly one active at the end.
    ids = [a["id"], b["id"]] + [(await _create(app_client, name=f"n{i}"))["id"] for i in range(4)]
    results = await asyncio.gather(*[app_client.post(f"{URL}/{i}/activate", headers=H)
                                     for i in ids * 2])
    assert {r.status_code for r in results} == {200}
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        active = await conn.fetchval(
            "SELECT count(*) FROM callout.ai_llm_configs WHERE tier='nlu' AND is_active")
        assert active == 1
        # The database itself refuses a second active row in a tier.
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute("UPDATE callout.ai_llm_configs SET is_active = true "
                               "WHERE tier = 'nlu'")
    finally:
        await conn.close()
    del c


async def test_put_is_active_deactivates_previous(app_client) -> None:
    a = await _create(app_client, name="a", is_active=True)
    b = await _create(app_client, name="b")
    r = await app_client.put(f"{URL}/{b['id']}", json={"version": 1, "is_active": True}, headers=H)
    assert r.status_code == 200
    a_now = (await app_client.get(f"{URL}/{a['id']}", headers=H)).json()
    assert a_now["is_active"] is False and a_now["version"] == a["version"] + 1
    a_revs = (await app_client.get(f"{URL}/{a['id']}/revisions", headers=H)).json()["items"]
    assert a_revs[0]["action"] == "deactivate"


async def test_revisions_record_who_what_without_key(app_client) -> None:
    created = await _create(app_client, api_key=KEY, name="rev")
    cid = created["id"]
    await app_client.put(f"{URL}/{cid}", json={"version": 1, "model": "m2", "api_key": KEY + "x"},
                         headers=H)
    await app_client.post(f"{URL}/{cid}/activate", headers=H)
    items = (await app_client.get(f"{URL}/{cid}/revisions", headers=H)).json()["items"]
    assert [i["action"] for i in items] == ["activate", "update", "create"]
    update = items[1]
    assert update["actor"] and update["at"] and update["config_version"] == 2
    assert update["fields"] == ["api_key", "model"]
    assert update["changes"]["model"] == {"old": "qwen3.5-2b", "new": "m2"}
    assert update["changes"]["api_key"] == {"change": "replaced"}
    assert KEY not in str(items) and KEY[10:20] not in str(items)
    # deleted config: the history stays readable
    assert (await app_client.delete(f"{URL}/{cid}", headers=H)).status_code == 204
    assert (await app_client.get(f"{URL}/{cid}", headers=H)).status_code == 404
    after = (await app_client.get(f"{URL}/{cid}/revisions", headers=H)).json()["items"]
    assert after[0]["action"] == "delete"
    assert (await app_client.get(f"{URL}/424242/revisions", headers=H)).status_code == 404


async def test_file_fallback_and_active_view(app_client) -> None:
    r = (await app_client.get("/api/admin/llm-active", headers=H)).json()
    assert set(r["tiers"]) == {"nlu", "chat", "script"}
    assert all(t["source"] == "file" for t in r["tiers"].values())
    settings = app_client.services.settings
    assert r["tiers"]["script"]["config"]["model"] == settings.llm.script.model
    assert r["tiers"]["nlu"]["config"]["id"] is None

    created = await _create(app_client, name="db-nlu", api_key=KEY, is_active=True)
    r = (await app_client.get("/api/admin/llm-active", headers=H)).json()
    assert r["generation"] == await _generation(app_client)
    nlu = r["tiers"]["nlu"]
    assert nlu["source"] == "db" and nlu["config"]["id"] == created["id"]
    assert nlu["config"]["api_key_masked"] == "gpustack_7f3a****f1a2"
    assert r["tiers"]["chat"]["source"] == "file"
    # The serving snapshot holds the decrypted key, in memory only.
    assert app_client.services.store.current.config_for("nlu").api_key == KEY

    assert (await app_client.delete(f"{URL}/{created['id']}", headers=H)).status_code == 204
    r = (await app_client.get("/api/admin/llm-active", headers=H)).json()
    assert r["tiers"]["nlu"]["source"] == "file"


async def test_deactivate_sends_the_tier_back_to_config_toml(app_client) -> None:
    created = await _create(app_client, name="db-nlu", api_key=KEY, is_active=True)
    before = await _generation(app_client)
    r = await app_client.post(f"{URL}/{created['id']}/deactivate", headers=H)
    assert r.status_code == 200, r.text
    assert r.json()["is_active"] is False and r.json()["version"] == created["version"] + 1
    assert await _generation(app_client) == before + 1  # published like any change
    active = (await app_client.get("/api/admin/llm-active", headers=H)).json()
    assert active["tiers"]["nlu"]["source"] == "file"
    assert app_client.services.store.current.config_for("nlu").id is None
    revs = (await app_client.get(f"{URL}/{created['id']}/revisions", headers=H)).json()["items"]
    assert revs[0]["action"] == "deactivate" and revs[0]["actor"]
    assert revs[0]["changes"] == {"is_active": {"old": True, "new": False}}
    trail = (await app_client.get("/api/admin/audit", headers=H,
                                  params={"action": "config.deactivate"})).json()["items"]
    assert [(e["target"], e["detail"]["changes"]) for e in trail] == [
        (f"config:{created['id']}", {"is_active": {"old": True, "new": False}})]
    # Already inactive: nothing changes, nothing is published.
    again = await app_client.post(f"{URL}/{created['id']}/deactivate", headers=H)
    assert again.status_code == 200 and again.json()["version"] == r.json()["version"]
    assert await _generation(app_client) == before + 1
    assert (await app_client.post(f"{URL}/999999/deactivate", headers=H)).status_code == 404
    assert (await app_client.post(f"{URL}/{created['id']}/deactivate",
                                  headers=SERVICE_HEADERS)).status_code == 403
