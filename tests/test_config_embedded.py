"""The embedded default: no database URL, no Redis, no secret key -> SQLite, in-process bus."""

from __future__ import annotations

import os
import shutil
import stat

import httpx

from tests.fixtures.app import ServerProcess, running_app
from tests.fixtures.database import ADMIN_HEADERS, CONFIG_TOML, core, llm_config_body


async def test_sqlite_mode_migrates_and_serves(make_settings, tmp_path) -> None:
    db_path = tmp_path / "data" / "callout.db"
    settings = make_settings(**{"database.url": "", "database.sqlite_path": str(db_path),
                                "redis.url": "", "auth.secret_key": ""})
    assert settings.database.is_sqlite
    async with running_app(settings) as client:
        app = client.app  # type: ignore[attr-defined]
        assert core((await client.get("/healthz")).json()) == {
            "status": "ok", "db": "ok", "redis": "disabled", "config_generation": 0}
        r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS,
                              json=llm_config_body(api_key="sk-embeddedkey123456",
                                                   is_active=True))
        assert r.status_code == 201, r.text
        cid = r.json()["id"]
        put = await client.put(f"/api/admin/llm-configs/{cid}", headers=ADMIN_HEADERS,
                               json={"version": 1, "max_tokens": 64})
        assert put.status_code == 200
        stale = await client.put(f"/api/admin/llm-configs/{cid}", headers=ADMIN_HEADERS,
                                 json={"version": 1, "max_tokens": 65})
        assert stale.status_code == 409
        active = (await client.get("/api/admin/llm-active", headers=ADMIN_HEADERS)).json()
        assert active["generation"] == 2
        assert active["tiers"]["nlu"]["config"]["max_tokens"] == 64
        assert app.state.services.store.current.config_for("nlu").api_key == "sk-embeddedkey123456"
    assert db_path.exists()
    key_file = db_path.parent / "callout.secret.key"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600


async def test_serve_with_nothing_set(tmp_path) -> None:
    """`callout-server serve` in an empty directory (plus config.toml) starts and serves."""
    shutil.copy(CONFIG_TOML, tmp_path / "config.toml")
    server = ServerProcess({}, tmp_path / "serve.log", "serve", cwd=tmp_path)
    try:
        await server.wait_ready()
        async with httpx.AsyncClient(timeout=5) as client:
            r = await client.get(f"{server.url}/healthz")
        assert core(r.json()) == {"status": "ok", "db": "ok", "redis": "disabled",
                            "config_generation": 0}
        assert (tmp_path / "callout.db").exists()
    finally:
        server.stop()
