"""Pool fields on model configurations (PostgreSQL): stored, shown, refused with the field
named, fallbacks guarded against deletion, keys kept to the hosts they were given for."""

from __future__ import annotations

from typing import Any

import pytest

from callout_server.config.settings import ConfigFileError, load_settings
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body

URL = "/api/admin/llm-configs"
H = ADMIN_HEADERS
KEY = "gpustack_7f3a9c0d1e2b3a4f5a6b7c8df1a2"
POOL = {"endpoints": [{"base_url": "http://gpu-02.internal/v1", "weight": 1},
                      {"base_url": "http://gpu-03.internal/v1", "weight": 2}],
        "hedge_after_ms": 250, "max_in_flight": 64}


async def _create(client: Any, **fields: Any) -> dict[str, Any]:
    r = await client.post(URL, json=llm_config_body(**fields), headers=H)
    assert r.status_code == 201, r.text
    return dict(r.json())


def _field(r: Any) -> str:
    assert r.status_code == 422, r.text
    body = r.json()["error"]
    return " ".join([body["message"], *(f["field"] for f in body.get("fields", []))])


async def test_pool_fields_round_trip_and_reach_the_snapshot(app_client: Any) -> None:
    fb = await _create(app_client, name="fb")
    created = await _create(app_client, name="pool", fallback_ids=[fb["id"]], is_active=True,
                            **POOL)
    assert created["endpoints"] == [{"base_url": "http://gpu-02.internal/v1", "weight": 1.0},
                                    {"base_url": "http://gpu-03.internal/v1", "weight": 2.0}]
    assert created["fallback_ids"] == [fb["id"]]
    assert (created["hedge_after_ms"], created["max_in_flight"]) == (250, 64)
    got = (await app_client.get(f"{URL}/{created['id']}", headers=H)).json()
    assert got == created
    route = app_client.services.store.current.route_for("nlu")
    assert route.primary.id == created["id"]
    assert [e.base_url for e in route.primary.endpoints] == [
        "http://gpu-02.internal/v1", "http://gpu-03.internal/v1"]
    assert [c.id for c in route.fallbacks] == [fb["id"]]
    r = await app_client.put(f"{URL}/{created['id']}", headers=H, json={
        "version": 1, "endpoints": [], "hedge_after_ms": None})
    assert r.status_code == 200, r.text
    assert r.json()["endpoints"] == [] and r.json()["hedge_after_ms"] is None
    revisions = (await app_client.get(f"{URL}/{created['id']}/revisions", headers=H)).json()
    assert {"endpoints", "hedge_after_ms"} <= set(revisions["items"][0]["fields"])


@pytest.mark.parametrize(("fields", "named"), [
    ({"endpoints": [{"base_url": "http://a/v1"}, {"base_url": "http://a/v1/"}]}, "endpoints"),
    ({"endpoints": [{"base_url": "http://127.0.0.1:8900/v1"}]}, "endpoints.0.base_url"),
    ({"endpoints": [{"base_url": "http://a/v1", "weight": 0}]}, "endpoints.0.weight"),
    ({"endpoints": [{"base_url": "http://a/v1", "weight": -1}]}, "endpoints.0.weight"),
    ({"endpoints": [{"base_url": "http://u:p@a/v1"}]}, "endpoints.0.base_url"),
    ({"endpoints": [{"base_url": "ftp://a/v1"}]}, "endpoints.0.base_url"),
    ({"endpoints": [{"base_url": "http://a/v1", "key": "x"}]}, "endpoints.0.key"),
    ({"fallback_ids": [999999]}, "fallback_ids"),
    ({"fallback_ids": [0]}, "fallback_ids.0"),
    ({"hedge_after_ms": 0}, "hedge_after_ms"),
    ({"hedge_after_ms": 10**9}, "hedge_after_ms"),
    ({"max_in_flight": 0}, "max_in_flight"),
    ({"max_in_flight": "many"}, "max_in_flight"),
])
async def test_bad_pool_values_are_refused_naming_the_field(
        app_client: Any, fields: dict[str, Any], named: str) -> None:
    r = await app_client.post(URL, json=llm_config_body(**fields), headers=H)
    assert named in _field(r)
    assert (await app_client.get(URL, headers=H)).json()["items"] == []  # nothing stored


async def test_credentials_are_never_echoed(app_client: Any) -> None:
    r = await app_client.post(URL, headers=H, json=llm_config_body(
        endpoints=[{"base_url": "http://user:hunter2secret@a/v1"}]))
    assert r.status_code == 422 and "hunter2secret" not in r.text


async def test_fallbacks_same_tier_not_self_not_twice(app_client: Any) -> None:
    chat = await _create(app_client, tier="chat", name="c")
    nlu = await _create(app_client, name="n")
    r = await app_client.post(URL, json=llm_config_body(fallback_ids=[chat["id"]]), headers=H)
    assert "fallback_ids" in _field(r) and "chat" in r.json()["error"]["message"]
    r = await app_client.post(URL, json=llm_config_body(fallback_ids=[nlu["id"], nlu["id"]]),
                              headers=H)
    assert "fallback_ids" in _field(r)
    r = await app_client.put(f"{URL}/{nlu['id']}", headers=H,
                             json={"version": 1, "fallback_ids": [nlu["id"]]})
    assert "fallback_ids" in _field(r)
    assert r.json()["error"]["fields"][0]["code"] == "fallback_self"


async def test_a_fallback_in_use_cannot_be_deleted_or_moved(app_client: Any) -> None:
    fb = await _create(app_client, name="fb")
    user = await _create(app_client, name="user", fallback_ids=[fb["id"]])
    r = await app_client.delete(f"{URL}/{fb['id']}", headers=H)
    assert r.status_code == 409 and r.json()["error"]["code"] == "in_use"
    assert str(user["id"]) in r.json()["error"]["message"]
    r = await app_client.put(f"{URL}/{fb['id']}", headers=H, json={"version": 1, "tier": "chat"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "in_use"
    r = await app_client.put(f"{URL}/{user['id']}", headers=H,
                             json={"version": 1, "fallback_ids": []})
    assert r.status_code == 200
    assert (await app_client.delete(f"{URL}/{fb['id']}", headers=H)).status_code == 204


async def test_the_stored_key_does_not_follow_a_new_endpoint_host(app_client: Any) -> None:
    cfg = await _create(app_client, name="k", api_key=KEY)
    same_host = [{"base_url": "http://127.0.0.1:8900/r/b/v1"}]
    r = await app_client.put(f"{URL}/{cfg['id']}", headers=H,
                             json={"version": 1, "endpoints": same_host})
    assert r.status_code == 200, r.text
    elsewhere = [*same_host, {"base_url": "http://listener.example/v1"}]
    r = await app_client.put(f"{URL}/{cfg['id']}", headers=H,
                             json={"version": 2, "endpoints": elsewhere})
    assert r.status_code == 422 and r.json()["error"]["code"] == "api_key_required"
    r = await app_client.put(f"{URL}/{cfg['id']}", headers=H,
                             json={"version": 2, "endpoints": elsewhere, "api_key": KEY})
    assert r.status_code == 200 and KEY not in r.text


def test_config_toml_takes_pools_but_not_fallbacks(tmp_path: Any) -> None:
    base = ('[llm.{t}]\nbase_url = "http://127.0.0.1:8900/v1"\nmodel = "m"\n')
    toml = "".join(base.format(t=t) for t in ("chat", "script"))
    pool = (base.format(t="nlu") + 'hedge_after_ms = 150\nmax_in_flight = 8\n'
            'endpoints = [{ base_url = "http://127.0.0.1:8901/v1", weight = 2 }]\n')
    (tmp_path / "ok.toml").write_text(toml + pool)
    cfg = load_settings(tmp_path / "ok.toml", env={}).file_llm_configs["nlu"]
    assert cfg.endpoints[0].base_url == "http://127.0.0.1:8901/v1" and cfg.endpoints[0].weight == 2
    assert (cfg.hedge_after_ms, cfg.max_in_flight) == (150, 8)
    (tmp_path / "bad.toml").write_text(toml + base.format(t="nlu") + "fallback_ids = [3]\n")
    with pytest.raises(ConfigFileError, match="fallback_ids"):
        load_settings(tmp_path / "bad.toml", env={})
    (tmp_path / "dup.toml").write_text(
        toml + base.format(t="nlu") + 'endpoints = [{ base_url = "http://127.0.0.1:8900/v1" }]\n')
    with pytest.raises(ConfigFileError, match="endpoint"):
        load_settings(tmp_path / "dup.toml", env={})
