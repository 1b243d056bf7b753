"""The database fixtures themselves: fresh migrated database, app lifespan, settings."""

from __future__ import annotations

import asyncpg

from callout_server.db.migrate import current_heads
from tests.fixtures.database import asyncpg_dsn


async def test_pg_url_is_migrated_to_head(pg_url: str) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        version = await conn.fetchval("SELECT version_num FROM callout.alembic_version")
        generation = await conn.fetchval("SELECT generation FROM callout.config_state")
    finally:
        await conn.close()
    assert (version,) == current_heads(pg_url)
    assert generation is not None


def test_make_settings_applies_test_environment(make_settings, pg_url, redis_prefix) -> None:
    s = make_settings(**{"redis.poll_interval_s": 0.25}, server__locale="en")
    assert s.database.url == pg_url
    assert s.redis.channel_prefix == redis_prefix
    assert s.redis.poll_interval_s == 0.25
    assert s.server.locale == "en"
    assert s.auth.admin_token.get_secret_value() == "test-admin-token"


async def test_app_client_serves_healthz(app_client) -> None:
    r = await app_client.get("/healthz")
    assert r.status_code == 200
    assert app_client.services is not None
