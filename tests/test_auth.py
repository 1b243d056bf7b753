"""Authentication and authorisation: pure cores first, then the app on real PostgreSQL.

The HTTP tests mount a tiny probe router (`/probe/admin`, `/probe/service`) guarded by the
real `require_admin` / `require_service`, so scope rules are tested independently of
whichever admin or dialer routes exist.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Annotated, Any

import asyncpg
import httpx
import pytest
import pytest_asyncio
from argon2 import PasswordHasher
from fastapi import APIRouter, Depends
from pydantic import ValidationError
from sqlalchemy import event

from callout_server.auth import passwords
from callout_server.auth.deps import Principal, require_admin, require_service
from callout_server.auth.passwords import hash_password, verify_password
from callout_server.auth.service import AuthService
from callout_server.auth.settings import AuthSettings
from callout_server.auth.throttle import FREE_ATTEMPTS, LoginThrottle
from callout_server.auth.tokens import TokenTable, display_prefix, generate_token, hash_token
from callout_server.config.settings import Settings
from tests.fixtures.app import running_app
from tests.fixtures.database import (
    ADMIN_HEADERS,
    ADMIN_PASSWORD,
    ADMIN_TOKEN,
    SERVICE_HEADERS,
    SERVICE_TOKEN,
    asyncpg_dsn,
    reset_tables,
)

# --------------------------------------------------------------------------- pure cores


@pytest.fixture(autouse=True)
def _production_hashing() -> Iterator[None]:
    """These tests hold RFC 9106's cost (the suite's workers run at the "test" profile, and
    the hasher is one per process)."""
    passwords.use("rfc9106")
    yield
    passwords.use("rfc9106")


def test_the_default_cost_is_rfc_9106_and_test_is_only_chosen() -> None:
    assert AuthSettings().password_hashing == "rfc9106"
    assert hash_password("pw").startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    cheap_hash = PasswordHasher.from_parameters(passwords.PROFILES["test"]).hash("pw")
    # A hash made at the test cost still verifies, and is brought up to the real cost.
    check = verify_password(cheap_hash, "pw")
    assert check.ok and check.new_hash and check.new_hash.startswith("$argon2id$v=19$m=65536,")
    passwords.use("test")
    assert hash_password("pw").startswith("$argon2id$v=19$m=8,t=1,p=1$")
    with pytest.raises(ValidationError, match="password_hashing"):
        AuthSettings(password_hashing="md5")


def test_password_roundtrip_and_mismatch() -> None:
    stored = hash_password("correct horse")
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    assert verify_password(stored, "correct horse").ok
    assert not verify_password(stored, "wrong").ok
    assert not verify_password("not-a-hash", "x").ok


def test_unknown_user_still_pays_a_full_verification(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real, dummy = passwords._hasher, passwords._dummy_hash()

    class Spy:
        def verify(self, h: str, pw: str) -> bool:
            calls.append(h)
            return real.verify(h, pw)

    monkeypatch.setattr(passwords, "_hasher", Spy())
    assert not verify_password(None, "guess").ok
    assert calls == [dummy]  # a real argon2 verification ran


def test_outdated_parameters_are_rehashed_on_success() -> None:
    weak = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash("pw")
    result = verify_password(weak, "pw")
    assert result.ok and result.new_hash and result.new_hash != weak
    assert verify_password(result.new_hash, "pw") == passwords.Verification(ok=True)


def test_token_table_lookup() -> None:
    admin, service = generate_token("admin"), generate_token("service")
    assert admin.startswith("cadm_") and service.startswith("csvc_") and len(admin) > 40
    table = TokenTable([("admin-token", "admin", hash_token(admin)),
                        ("service-token", "service", hash_token(service))])
    assert table.lookup(admin).scope == "admin"  # type: ignore[union-attr]
    assert table.lookup(service).name == "service-token"  # type: ignore[union-attr]
    assert table.lookup(admin + "x") is None
    assert table.lookup("") is None
    assert display_prefix(admin) == admin[:9] and display_prefix("plain-secret") == "plai"


def test_login_throttle_backs_off_and_resets() -> None:
    now = [0.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    key = throttle.key("Admin ", "10.0.0.1")
    assert key == throttle.key("admin", "10.0.0.1")
    for _ in range(FREE_ATTEMPTS - 1):
        throttle.failure(key)
    assert throttle.retry_after(key) == 0
    throttle.failure(key)
    assert throttle.retry_after(key) == 1.0
    throttle.failure(key)
    assert throttle.retry_after(key) == 2.0
    assert throttle.retry_after(throttle.key("admin", "10.0.0.2")) == 0  # other client
    now[0] += 2.0
    assert throttle.retry_after(key) == 0
    throttle.success(key)
    throttle.failure(key)
    assert throttle.retry_after(key) == 0


# --------------------------------------------------------------------------- the app

probe = APIRouter()


@probe.get("/probe/admin")
@probe.post("/probe/admin")
async def _probe_admin(p: Annotated[Principal, Depends(require_admin)]) -> dict[str, str]:
    return {"name": p.name, "role": p.role, "via": p.via}


@probe.get("/probe/service")
@probe.post("/probe/service")
async def _probe_service(p: Annotated[Principal, Depends(require_service)]) -> dict[str, str]:
    return {"name": p.name, "role": p.role, "via": p.via}


@asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """One worker's app with its lifespan, plus the probe routes."""
    async with running_app(settings, routers=[probe]) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="session")
async def client(pg_url: str, make_settings: Callable[..., Settings]
                 ) -> AsyncIterator[httpx.AsyncClient]:
    await reset_tables(pg_url)
    async with running(make_settings()) as c:
        yield c


async def login(client: httpx.AsyncClient, user: str = "admin",
                password: str = ADMIN_PASSWORD) -> httpx.Response:
    return await client.post("/api/auth/login", json={"username": user, "password": password})


async def csrf(client: httpx.AsyncClient) -> str:
    me = await client.get("/api/auth/me")
    assert me.status_code == 200, me.text
    return me.json()["csrf_token"]  # type: ignore[no-any-return]


def cookie_value(client: httpx.AsyncClient) -> str:
    return client.cookies["callout_session"]


def as_cookie(session_id: str) -> dict[str, str]:
    """Present a given cookie value explicitly (a replayed or stolen cookie)."""
    return {"Cookie": f"callout_session={session_id}"}


async def test_login_sets_a_hardened_session_cookie(client: httpx.AsyncClient) -> None:
    r = await login(client)
    assert r.status_code == 204
    set_cookie = r.headers["set-cookie"]
    attrs = {a.strip().split("=")[0].lower() for a in set_cookie.split(";")}
    assert set_cookie.startswith("callout_session=")
    assert {"httponly", "samesite", "path", "max-age"} <= attrs
    assert "samesite=strict" in set_cookie.lower() and "path=/" in set_cookie.lower()
    ttl = client.services.settings.auth.session_ttl_s  # type: ignore[attr-defined]
    assert f"max-age={ttl}" in set_cookie.lower()
    assert "secure" not in attrs  # cookie_secure defaults to off (plain-HTTP development)


async def test_secure_cookie_when_configured(pg_url: str,
                                             make_settings: Callable[..., Settings]) -> None:
    await reset_tables(pg_url)
    async with running(make_settings(**{"auth.cookie_secure": True})) as c:
        r = await login(c)
        assert r.status_code == 204
        assert "secure" in {a.strip().lower() for a in r.headers["set-cookie"].split(";")}


async def test_wrong_user_and_wrong_password_look_the_same(client: httpx.AsyncClient) -> None:
    bad_user = await login(client, user="nobody")
    bad_password = await login(client, password="nope")
    assert bad_user.status_code == bad_password.status_code == 401
    assert bad_user.json() == bad_password.json()
    assert bad_user.json()["error"]["code"] == "invalid_credentials"
    assert "set-cookie" not in bad_user.headers


async def test_me_for_session_and_token(client: httpx.AsyncClient) -> None:
    anon = await client.get("/api/auth/me")
    assert anon.status_code == 401 and anon.headers["www-authenticate"] == "Bearer"
    token = await client.get("/api/auth/me", headers=ADMIN_HEADERS)
    assert token.json()["username"] == "admin-token" and token.json()["role"] == "admin"
    assert token.json()["csrf_token"] is None
    await login(client)
    me = (await client.get("/api/auth/me")).json()
    assert me["username"] == "admin" and me["role"] == "admin" and me["via"] == "session"
    assert len(me["csrf_token"]) >= 32


async def test_logout_invalidates_the_session(client: httpx.AsyncClient) -> None:
    await login(client)
    stolen = cookie_value(client)
    r = await client.post("/api/auth/logout")
    assert r.status_code == 204 and "max-age=0" in r.headers["set-cookie"].lower()
    # Even a copy of the old cookie value no longer works: the server-side row is gone.
    replay = await client.get("/api/auth/me", headers=as_cookie(stolen))
    assert replay.status_code == 401
    assert (await client.post("/api/auth/logout")).status_code == 204  # idempotent


async def test_session_expires(client: httpx.AsyncClient) -> None:
    await login(client)
    assert (await client.get("/probe/admin")).status_code == 200
    auth: AuthService = client.services.auth  # type: ignore[attr-defined]
    real_clock = auth.clock
    auth.clock = lambda: real_clock() + auth.session_ttl + timedelta(seconds=1)
    try:
        r = await client.get("/probe/admin")
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
    finally:
        auth.clock = real_clock


@pytest.mark.parametrize("path", ["/probe/admin", "/probe/service"])
async def test_session_writes_need_the_csrf_token(client: httpx.AsyncClient, path: str) -> None:
    await login(client)
    token = await csrf(client)
    assert (await client.get(path)).status_code == 200  # reads need no token
    missing = await client.post(path)
    assert missing.status_code == 403 and missing.json()["error"]["code"] == "csrf_failed"
    wrong = await client.post(path, headers={"X-CSRF-Token": token[:-1] + "x"})
    assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "csrf_failed"
    ok = await client.post(path, headers={"X-CSRF-Token": token})
    assert ok.status_code == 200 and ok.json() == {"name": "admin", "role": "admin",
                                                    "via": "session"}


async def test_bearer_writes_need_no_csrf_token(client: httpx.AsyncClient) -> None:
    assert (await client.post("/probe/admin", headers=ADMIN_HEADERS)).status_code == 200
    assert (await client.post("/probe/service", headers=SERVICE_HEADERS)).status_code == 200


async def test_scopes(client: httpx.AsyncClient) -> None:
    forbidden = await client.get("/probe/admin", headers=SERVICE_HEADERS)
    assert forbidden.status_code == 403 and forbidden.json()["error"]["code"] == "forbidden"
    admin_on_service = await client.get("/probe/service", headers=ADMIN_HEADERS)
    assert admin_on_service.json() == {"name": "admin-token", "role": "admin", "via": "token"}
    service = await client.get("/probe/service", headers=SERVICE_HEADERS)
    assert service.json() == {"name": "service-token", "role": "service", "via": "token"}
    for path in ("/probe/admin", "/probe/service", "/api/admin/llm-configs"):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"},
                        {"Authorization": "Bearer "}):
            r = await client.get(path, headers=headers)
            if r.status_code == 404 and path.startswith("/api/admin/"):
                break  # the admin routes have not landed in this tree yet
            assert r.status_code == 401, (path, headers, r.text)
            assert r.json()["error"]["code"] == "unauthorized"
            assert r.headers["www-authenticate"] == "Bearer"


async def test_a_bad_bearer_token_does_not_fall_back_to_the_session(
        client: httpx.AsyncClient) -> None:
    await login(client)
    r = await client.get("/probe/admin", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401


async def test_bearer_checks_do_not_touch_the_database(client: httpx.AsyncClient) -> None:
    engine = client.services.db.engine.sync_engine  # type: ignore[attr-defined]
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        for _ in range(20):
            assert (await client.post("/probe/service", headers=SERVICE_HEADERS)).status_code == 200
            assert (await client.get("/probe/service", headers=ADMIN_HEADERS)).status_code == 200
            assert (await client.get("/probe/admin", headers=SERVICE_HEADERS)).status_code == 403
            assert (await client.get("/probe/service",
                                     headers={"Authorization": "Bearer nope"})).status_code == 401
        assert statements == []
        # The counter does see queries: a console session costs one lookup.
        await login(client)
        statements.clear()
        assert (await client.get("/probe/admin")).status_code == 200
        assert len(statements) == 1
    finally:
        event.remove(engine, "before_cursor_execute", count)


async def test_repeated_failures_are_throttled(client: httpx.AsyncClient) -> None:
    for _ in range(FREE_ATTEMPTS):
        assert (await login(client, password="guess")).status_code == 401
    r = await login(client)  # even the right password waits now
    assert r.status_code == 429 and r.json()["error"]["code"] == "too_many_attempts"
    assert r.json()["error"]["retry_after_s"] >= 1
    assert (await login(client, user="someone-else")).status_code == 401  # other key


# --------------------------------------------------------------------------- bootstrap

NO_CREDENTIALS = {"auth.admin_token": "", "auth.service_token": "",
                  "auth.admin_user": "", "auth.admin_password": ""}


def _generated(stdout: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        for label in ("console login", "admin token", "service token"):
            if line.strip().startswith(label):
                found[label] = line.strip()[len(label):].strip()
    return found


async def _all_rows(pg_url: str) -> str:
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        rows = []
        for table in ("users", "api_tokens", "user_sessions", "audit_events"):
            rows += [tuple(r) for r in await conn.fetch(f"SELECT * FROM callout.{table}")]
        return repr(rows)
    finally:
        await conn.close()


async def test_unset_credentials_are_generated_and_printed_once(
        pg_url: str, make_settings: Callable[..., Settings],
        capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    await reset_tables(pg_url)
    caplog.set_level(logging.DEBUG)
    settings = make_settings(**NO_CREDENTIALS)
    async with running(settings) as c:
        creds = _generated(capsys.readouterr().out)
        assert set(creds) == {"console login", "admin token", "service token"}
        user, password = creds["console login"].split(" / ")
        assert user == "admin"
        assert (await login(c, user, password)).status_code == 204
        admin = {"Authorization": f"Bearer {creds['admin token']}"}
        service = {"Authorization": f"Bearer {creds['service token']}"}
        assert (await c.get("/probe/admin", headers=admin)).status_code == 200
        assert (await c.get("/probe/admin", headers=service)).status_code == 403
        assert (await c.get("/probe/service", headers=service)).status_code == 200
        assert (await c.get("/probe/admin", headers=ADMIN_HEADERS)).status_code == 401

    stored = await _all_rows(pg_url)
    assert "$argon2id$" in stored
    for secret in (password, creds["admin token"], creds["service token"]):
        assert secret not in stored
        assert secret not in caplog.text

    async with running(settings) as c:  # second start: nothing new, nothing printed
        assert _generated(capsys.readouterr().out) == {}
        assert (await login(c, user, password)).status_code == 204
        assert (await c.get("/probe/admin", headers=admin)).status_code == 200


async def test_concurrent_first_starts_print_once(
        pg_url: str, make_settings: Callable[..., Settings]) -> None:
    await reset_tables(pg_url)
    async with running(make_settings()) as c:  # any app: we only borrow its database
        await reset_tables(pg_url)
        settings = make_settings(**NO_CREDENTIALS).auth
        outs = [io.StringIO() for _ in range(4)]
        workers = [AuthService(settings, c.services.db, out=o)  # type: ignore[attr-defined]
                   for o in outs]
        await asyncio.gather(*(w.bootstrap() for w in workers))
        printed = [o.getvalue() for o in outs if o.getvalue()]
        assert len(printed) == 1
        token = _generated(printed[0])["admin token"]
        assert all(w.tokens.lookup(token) is not None for w in workers)


async def test_env_credentials_win_and_a_password_change_takes_effect(
        pg_url: str, make_settings: Callable[..., Settings],
        capsys: pytest.CaptureFixture[str]) -> None:
    await reset_tables(pg_url)
    async with running(make_settings(**NO_CREDENTIALS)) as c:  # first start: generated
        generated = _generated(capsys.readouterr().out)

    async with running(make_settings()) as c:  # the environment now sets everything
        assert _generated(capsys.readouterr().out) == {}
        assert (await login(c)).status_code == 204
        old_session = cookie_value(c)
        assert (await c.get("/probe/admin", headers=ADMIN_HEADERS)).status_code == 200
        assert (await c.get("/probe/service", headers=SERVICE_HEADERS)).status_code == 200
        stale = {"Authorization": f"Bearer {generated['admin token']}"}
        assert (await c.get("/probe/admin", headers=stale)).status_code == 401

    async with running(make_settings(**{"auth.admin_password": "a-new-password-456"})) as c:
        assert (await login(c)).status_code == 401
        assert (await login(c, password="a-new-password-456")).status_code == 204
        # The password change signed the user out everywhere.
        r = await c.get("/api/auth/me", headers=as_cookie(old_session))
        assert r.status_code == 401

    stored = await _all_rows(pg_url)
    for secret in (ADMIN_TOKEN, SERVICE_TOKEN, ADMIN_PASSWORD, "a-new-password-456"):
        assert secret not in stored


async def test_env_user_retires_the_generated_login(
        pg_url: str, make_settings: Callable[..., Settings],
        capsys: pytest.CaptureFixture[str]) -> None:
    await reset_tables(pg_url)
    async with running(make_settings(**NO_CREDENTIALS)):
        user, password = _generated(capsys.readouterr().out)["console login"].split(" / ")
    async with running(make_settings(**{"auth.admin_user": "ops"})) as c:
        assert (await login(c, user, password)).status_code == 401
        assert (await login(c, "ops", ADMIN_PASSWORD)).status_code == 204


async def test_database_outage_spares_bearer_traffic(client: httpx.AsyncClient) -> None:
    from callout_server.db.engine import Database

    await login(client)
    auth: AuthService = client.services.auth  # type: ignore[attr-defined]
    real_db, dead = auth._db, Database("postgresql+asyncpg://postgres@127.0.0.1:1/none")
    auth._db = dead  # the database goes away
    try:
        r = await client.get("/probe/admin")  # a session needs the database: clear 503
        assert r.status_code == 503 and r.json()["error"]["code"] == "database_unavailable"
        assert (await client.post("/probe/service", headers=SERVICE_HEADERS)).status_code == 200
        assert (await client.get("/probe/admin", headers=ADMIN_HEADERS)).status_code == 200
    finally:
        auth._db = real_db
        await dead.dispose()
