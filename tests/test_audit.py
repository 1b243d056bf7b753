"""The audit trail on PostgreSQL: who changed what, when and from where; written in the
same transaction as the change; no secret in it; filtered keyset pages; retention."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from callout_server.audit.log import AuditLog
from callout_server.audit.settings import AuditSettings
from callout_server.audit.trail import Actor, record, scrub
from callout_server.config import changes as config_changes
from callout_server.config.service import ConfigService
from callout_server.db.base import utcnow
from tests.fixtures.database import (
    ADMIN_HEADERS,
    ADMIN_PASSWORD,
    ADMIN_TOKEN,
    SERVICE_TOKEN,
    asyncpg_dsn,
    llm_config_body,
)
from tests.fixtures.people import People, password_of

AUDIT = "/api/admin/audit"
CONFIGS = "/api/admin/llm-configs"
H = ADMIN_HEADERS
KEY = "sk-audit-0123456789abcdef"
NEW_KEY = "sk-audit-fedcba9876543210"


async def _events(client: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    r = await client.get(AUDIT, headers=H, params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


async def _raw_events(pg_url: str) -> str:
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        return repr([tuple(r) for r in await conn.fetch("SELECT * FROM callout.audit_events")])
    finally:
        await conn.close()


# --------------------------------------------------------------------------- pure core

def test_scrub_keeps_markers_and_drops_secrets() -> None:
    detail = {"api_key": "replaced", "password": "hunter2-hunter2", "csrf_token": "abc",
              "max_tokens": {"old": 100, "new": 300}, "new_password": {"old": "a", "new": "b"},
              "session_id": "s", "note": "x" * 500, "nested": {"Authorization": "Bearer t"}}
    out = scrub(detail)
    assert out["api_key"] == "replaced" and out["max_tokens"] == {"old": 100, "new": 300}
    assert out["password"] == out["csrf_token"] == out["session_id"] == "[redacted]"
    assert out["new_password"] == "changed" and out["nested"] == {"Authorization": "[redacted]"}
    assert len(out["note"]) == 200
    assert "hunter2" not in json.dumps(out)


# --------------------------------------------------------------------------- what is recorded

async def test_configuration_changes_name_who_when_and_what(app_client: httpx.AsyncClient,
                                                           people: People) -> None:
    olga = await people.as_role("operator", "olga")
    r = await olga.post(CONFIGS, json=llm_config_body(name="nlu-a", api_key=KEY))
    assert r.status_code == 201, r.text
    cfg = r.json()
    r = await olga.put(f"{CONFIGS}/{cfg['id']}", json={**llm_config_body(
        name="nlu-a", model="qwen3-8b", max_tokens=512, api_key=NEW_KEY), "version": 1})
    assert r.status_code == 200, r.text
    assert (await olga.post(f"{CONFIGS}/{cfg['id']}/activate")).status_code == 200
    other = (await app_client.post(CONFIGS, headers=H, json=llm_config_body(
        name="nlu-b", is_active=True))).json()
    assert (await app_client.delete(f"{CONFIGS}/{cfg['id']}", headers=H)).status_code == 204

    events = await _events(app_client, action="config")
    assert [e["action"] for e in events] == ["config.delete", "config.create", "config.activate",
                                            "config.update", "config.create"]
    delete, create_b, activate, update, create_a = events
    assert all(e["target"] == f"config:{cfg['id']}" for e in (delete, activate, update, create_a))
    assert (update["actor"], update["via"], update["ip"]) == ("olga", "session", "127.0.0.1")
    assert (delete["actor"], delete["via"]) == ("admin-token", "token")
    assert update["detail"]["changes"]["model"] == {"old": "qwen3.5-2b", "new": "qwen3-8b"}
    assert update["detail"]["changes"]["max_tokens"] == {"old": 300, "new": 512}
    assert update["detail"]["changes"]["api_key"] == "replaced"
    assert create_a["detail"]["changes"]["api_key"] == "set"
    assert update["detail"] | {"tier": "nlu", "name": "nlu-a"} == update["detail"]
    assert create_b["detail"]["deactivated"] == [f"config:{cfg['id']}"]
    assert create_b["target"] == f"config:{other['id']}"
    assert events[0]["id"] > events[-1]["id"]  # newest first
    # The revisions name the user too.
    revisions = (await olga.get(f"{CONFIGS}/{other['id']}/revisions")).json()["items"]
    assert revisions[0]["actor"] == "admin-token"


async def test_configuration_revisions_name_the_user(app_client: httpx.AsyncClient,
                                                     people: People) -> None:
    olga = await people.as_role("operator", "olga")
    cfg = (await app_client.post(CONFIGS, headers=H, json=llm_config_body())).json()
    r = await olga.put(f"{CONFIGS}/{cfg['id']}", json={**llm_config_body(name=cfg["name"],
                                                                         max_tokens=256),
                                                       "version": 1})
    assert r.json()["updated_by"] == "olga"
    revisions = (await olga.get(f"{CONFIGS}/{cfg['id']}/revisions")).json()["items"]
    assert [(x["action"], x["actor"]) for x in revisions] == [("update", "olga"),
                                                              ("create", "admin-token")]


async def test_logins_failed_logins_and_logouts(app_client: httpx.AsyncClient,
                                                people: People) -> None:
    await people.add("vera", "viewer")
    vera = await people.console("vera")
    await app_client.post("/api/auth/login", json={"username": "vera", "password": "wrong-one!"})
    await app_client.post("/api/auth/login", json={"username": "my-password-typed-here",
                                                    "password": "x"})
    assert (await vera.post("/api/auth/logout")).status_code == 204
    events = await _events(app_client, action="auth")
    assert [(e["action"], e["actor"], e["detail"].get("reason")) for e in events] == [
        ("auth.logout", "vera", None),
        ("auth.login_failed", "(unknown)", "unknown_user"),
        ("auth.login_failed", "vera", "wrong_password"),
        ("auth.login", "vera", None),
    ]
    assert all(e["via"] == "session" and e["ip"] == "127.0.0.1" for e in events)
    assert "my-password-typed-here" not in json.dumps(events)


async def test_people_changes_are_recorded(app_client: httpx.AsyncClient, people: People) -> None:
    ada = await people.as_role("admin", "ada")
    await ada.post("/api/admin/users", json={"username": "vera", "password": password_of("vera"),
                                             "role": "viewer"})
    await people.console("vera")
    await ada.put("/api/admin/users/vera", json={"role": "operator", "disabled": True,
                                                 "password": "reset-by-ada-now"})
    await ada.delete("/api/admin/users/vera")
    events = await _events(app_client, action="user", actor="ada")
    assert [e["action"] for e in events] == ["user.delete", "user.update", "user.create"]
    assert {e["target"] for e in events} == {"user:vera"}
    assert events[1]["detail"] == {"role": {"old": "viewer", "new": "operator"},
                                   "disabled": {"old": False, "new": True},
                                   "password": "reset", "sessions_ended": 1}
    assert events[2]["detail"] == {"role": "viewer"}


async def test_script_draft_changes_are_recorded(app_client: httpx.AsyncClient,
                                                 people: People) -> None:
    olga = await people.as_role("operator", "olga")
    drafts = app_client.services.drafts  # type: ignore[attr-defined]
    draft_id = await drafts.create(Actor("service-token", "token", "10.0.0.9"), title="回访",
                                   brief="回访客户", script="您好", status="complete")
    r = await olga.put(f"/api/admin/scripts/{draft_id}", json={"script": "您好！", "version": 1})
    assert r.status_code == 200, r.text
    stale = await olga.put(f"/api/admin/scripts/{draft_id}", json={"script": "x", "version": 1})
    assert stale.status_code == 409
    assert (await olga.delete(f"/api/admin/scripts/{draft_id}")).status_code == 204
    events = await _events(app_client, target=f"draft:{draft_id}")
    assert [(e["action"], e["actor"], e["via"]) for e in events] == [
        ("draft.delete", "olga", "session"), ("draft.update", "olga", "session"),
        ("draft.create", "service-token", "token")]
    assert events[1]["detail"] == {"fields": ["script"], "version": 2}
    assert events[2]["ip"] == "10.0.0.9"


async def test_no_password_key_token_or_cookie_is_ever_recorded(
        app_client: httpx.AsyncClient, people: People, pg_url: str) -> None:
    olga = await people.as_role("operator", "olga")
    r = await olga.post(CONFIGS, json=llm_config_body(api_key=KEY))
    assert r.status_code == 201, r.text
    cfg = r.json()
    r = await olga.put(f"{CONFIGS}/{cfg['id']}", json={**llm_config_body(
        name=cfg["name"], api_key=NEW_KEY, extra_params={"secret_header": "abc-secret"}),
        "version": 1})
    assert r.status_code == 200, r.text
    await olga.post("/api/auth/password", json={"current_password": password_of("olga"),
                                                "new_password": "olga-changed-password"})
    await app_client.put("/api/admin/users/olga", headers=H,
                         json={"password": "reset-password-by-admin"})
    await app_client.post("/api/auth/login", json={"username": "admin", "password": "bad-guess"})
    raw = await _raw_events(pg_url)
    assert "auth.password_change" in raw and "config.update" in raw
    cookie = olga.cookies.get("callout_session") or "no-cookie"
    for secret in (KEY, NEW_KEY, "abc-secret", password_of("olga"),
                   "olga-changed-password", "reset-password-by-admin", "bad-guess",
                   ADMIN_PASSWORD, ADMIN_TOKEN, SERVICE_TOKEN, cookie,
                   olga.headers["X-CSRF-Token"]):
        assert secret not in raw, secret


# --------------------------------------------------------------------------- atomic

async def _count(pg_url: str, action: str) -> int:
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        return int(await conn.fetchval(
            "SELECT count(*) FROM callout.audit_events WHERE action = $1", action))
    finally:
        await conn.close()


async def test_a_refused_change_writes_no_audit_event(app_client: httpx.AsyncClient,
                                                      people: People, pg_url: str) -> None:
    cfg = (await app_client.post(CONFIGS, headers=H, json=llm_config_body())).json()
    stale = await app_client.put(f"{CONFIGS}/{cfg['id']}", headers=H,
                                 json={**llm_config_body(name=cfg["name"]), "version": 7})
    assert stale.status_code == 409
    taken = await app_client.post(CONFIGS, headers=H, json=llm_config_body(name=cfg["name"]))
    assert taken.status_code == 409
    last = await app_client.put("/api/admin/users/nobody", headers=H, json={"role": "admin"})
    assert last.status_code == 404
    assert await _count(pg_url, "config.update") == 0
    assert await _count(pg_url, "config.create") == 1
    assert await _count(pg_url, "user.update") == 0


async def test_a_change_that_fails_after_its_event_leaves_neither(
        app_client: httpx.AsyncClient, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = (await app_client.post(CONFIGS, headers=H, json=llm_config_body())).json()

    def broken_view(self: ConfigService, row: Any) -> Any:
        raise RuntimeError("fails after the audit event was added, before the commit")

    monkeypatch.setattr(ConfigService, "view", broken_view)
    with pytest.raises(RuntimeError):
        await app_client.put(f"{CONFIGS}/{cfg['id']}", headers=H,
                             json={**llm_config_body(name=cfg["name"], model="other"),
                                   "version": 1})
    monkeypatch.undo()
    now = (await app_client.get(f"{CONFIGS}/{cfg['id']}", headers=H)).json()
    assert (now["version"], now["model"]) == (1, cfg["model"])
    assert await _count(pg_url, "config.update") == 0


async def test_an_event_that_cannot_be_written_fails_the_change(
        app_client: httpx.AsyncClient, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = (await app_client.post(CONFIGS, headers=H, json=llm_config_body())).json()

    def refused_record(session: Any, actor: Actor, action: str, **kw: Any) -> None:
        # The database refuses the event row (its CHECK on `via`) when the unit commits.
        record(session, Actor(actor.name, "carrier-pigeon", actor.ip), action, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(config_changes, "record", refused_record)
    r = await app_client.put(f"{CONFIGS}/{cfg['id']}", headers=H,
                             json={**llm_config_body(name=cfg["name"], model="other"),
                                   "version": 1})
    assert r.status_code >= 400
    monkeypatch.undo()
    now = (await app_client.get(f"{CONFIGS}/{cfg['id']}", headers=H)).json()
    assert (now["version"], now["model"]) == (1, cfg["model"])
    assert await _count(pg_url, "config.update") == 0


# --------------------------------------------------------------------------- reading

async def test_filters_and_keyset_pages(app_client: httpx.AsyncClient, people: People) -> None:
    olga = await people.as_role("operator", "olga")
    for i in range(5):
        await olga.post(CONFIGS, json=llm_config_body(name=f"c{i}"))
    seen: list[int] = []
    before = None
    while True:
        params: dict[str, Any] = {"limit": 2, "actor": "olga", "action": "config.create"}
        if before:
            params["before_id"] = before
        page = (await app_client.get(AUDIT, headers=H, params=params)).json()
        seen += [e["id"] for e in page["items"]]
        before = page["next_before_id"]
        if before is None:
            break
    assert len(seen) == 5 and seen == sorted(seen, reverse=True)
    assert await _events(app_client, actor="nobody") == []
    assert {e["action"] for e in await _events(app_client, actor="olga")} == {
        "auth.login", "config.create"}
    future = (utcnow() + timedelta(hours=1)).isoformat()
    assert await _events(app_client, since=future) == []
    assert len(await _events(app_client, until=future, action="config")) == 5
    for bad in ({"limit": 0}, {"limit": 501}, {"since": "yesterday"}, {"before_id": 0}):
        r = await app_client.get(AUDIT, headers=H, params=bad)
        assert r.status_code == 422 and next(iter(bad)) in r.json()["error"]["message"]


async def test_only_admins_read_the_trail(app_client: httpx.AsyncClient, people: People) -> None:
    operator = await people.as_role("operator", "olga")
    r = await operator.get(AUDIT)
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"


# --------------------------------------------------------------------------- retention

async def _insert_event(pg_url: str, days_ago: int, action: str) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        await conn.execute(
            "INSERT INTO callout.audit_events (at, actor, via, action, detail) "
            "VALUES (now() - make_interval(days => $1), 'x', 'token', $2, '{}')",
            days_ago, action)
    finally:
        await conn.close()


async def test_events_past_retention_are_purged(app_client: httpx.AsyncClient,
                                                pg_url: str) -> None:
    await _insert_event(pg_url, 400, "test.old")
    await _insert_event(pg_url, 20, "test.recent")
    trail = AuditLog(app_client.services.db, AuditSettings(retention_days=30))  # type: ignore[attr-defined]
    assert await trail.purge_expired() == 1
    assert await _count(pg_url, "test.old") == 0 and await _count(pg_url, "test.recent") == 1
    assert await trail.purge_expired() == 0


async def test_the_purge_runs_in_the_background(app_client: httpx.AsyncClient,
                                                pg_url: str) -> None:
    await _insert_event(pg_url, 40, "test.old")
    trail = AuditLog(app_client.services.db,  # type: ignore[attr-defined]
                     AuditSettings(retention_days=30, purge_interval_s=0.05))
    await trail.start()
    try:
        async with asyncio.timeout(20):
            while True:  # until the background purge has removed the old event
                if not await _count(pg_url, "test.old"):
                    break
                await asyncio.sleep(0.05)
    finally:
        await trail.stop()


def test_retention_is_configurable(make_settings: Any) -> None:
    assert make_settings().audit.retention_days == 365
    assert make_settings(**{"audit.retention_days": 30}).audit.retention_days == 30
    from callout_server.config.settings import ConfigFileError, load_settings
    from tests.fixtures.database import CONFIG_TOML

    env = {"CALLOUT_AUDIT_RETENTION_DAYS": "90"}
    assert load_settings(CONFIG_TOML, env=env).audit.retention_days == 90
    with pytest.raises(ConfigFileError, match="retention_days"):
        make_settings(**{"audit.retention_days": 0})


# --------------------------------------------------------------------------- the address

async def _login_ip(url: str, forwarded_for: str) -> str | None:
    async with httpx.AsyncClient(base_url=url, timeout=10) as c:
        r = await c.post("/api/auth/login", headers={"X-Forwarded-For": forwarded_for},
                         json={"username": "admin", "password": ADMIN_PASSWORD})
        assert r.status_code == 204, r.text
        events = (await c.get(AUDIT, headers=H, params={"action": "auth.login"})).json()["items"]
    return events[0]["ip"]  # type: ignore[no-any-return]


@pytest.mark.timeout(120)
async def test_the_address_is_the_forwarded_one_only_behind_a_named_proxy(start_worker) -> None:
    direct = await start_worker("direct")
    assert await _login_ip(direct.url, "10.1.2.3") == "127.0.0.1"
    proxied = await start_worker("proxied", CALLOUT_FORWARDED_ALLOW_IPS="127.0.0.1")
    assert await _login_ip(proxied.url, "10.1.2.3") == "10.1.2.3"
