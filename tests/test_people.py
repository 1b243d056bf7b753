"""People on PostgreSQL: users and their real role, bad input, sessions that follow the
person, the user's own password, the last enabled admin, the bootstrap admin."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import asyncpg
import httpx
import pytest
import pytest_asyncio

from callout_server.audit.trail import Actor
from callout_server.config.settings import Settings
from callout_server.errors import ApiError
from callout_server.people.schemas import UserUpdate
from callout_server.people.service import PeopleService
from tests.fixtures.app import running_app
from tests.fixtures.database import ADMIN_HEADERS, ADMIN_PASSWORD, asyncpg_dsn, reset_tables
from tests.fixtures.people import People, password_of

USERS = "/api/admin/users"
H = ADMIN_HEADERS


async def _users(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    r = await client.get(USERS, headers=H)
    assert r.status_code == 200, r.text
    return {u["username"]: u for u in r.json()["items"]}


async def test_users_log_in_with_their_real_role(app_client: httpx.AsyncClient,
                                                 people: People) -> None:
    for name, role in (("vera", "viewer"), ("otto", "operator"), ("ada", "admin")):
        created = await people.add(name, role)
        assert created["role"] == role and created["disabled"] is False
        assert created["last_login_at"] is None and created["source"] == "console"
        assert "password" not in str(created) and "hash" not in str(created)
        me = (await (await people.console(name)).get("/api/auth/me")).json()
        assert (me["username"], me["role"], me["via"]) == (name, role, "session")
    listed = await _users(app_client)
    assert set(listed) == {"admin", "vera", "otto", "ada"}
    assert set(listed["vera"]) == {"username", "role", "disabled", "created_at",
                                   "last_login_at", "source"}
    assert listed["vera"]["last_login_at"] is not None
    assert listed["admin"]["role"] == "admin" and listed["admin"]["source"] == "env"
    me = (await app_client.get("/api/auth/me", headers=H)).json()
    assert (me["role"], me["via"]) == ("admin", "token")


@pytest.mark.parametrize(("body", "field"), [
    ({"username": "shorty", "password": "elevenchars", "role": "viewer"}, "password"),
    ({"username": "ab", "password": "long-enough-pass", "role": "viewer"}, "username"),
    ({"username": "Upper", "password": "long-enough-pass", "role": "viewer"}, "username"),
    ({"username": "with space", "password": "long-enough-pass", "role": "viewer"}, "username"),
    ({"username": "x" * 65, "password": "long-enough-pass", "role": "viewer"}, "username"),
    ({"username": "vera", "password": "long-enough-pass", "role": "root"}, "role"),
    ({"username": "vera", "password": "long-enough-pass"}, "role"),
])
async def test_bad_input_is_422_naming_the_field(app_client: httpx.AsyncClient,
                                                 body: dict[str, Any], field: str) -> None:
    r = await app_client.post(USERS, headers=H, json=body)
    assert r.status_code == 422, r.text
    assert [f["field"] for f in r.json()["error"]["fields"]] == [field]
    assert field in r.json()["error"]["message"]
    assert "long-enough-pass" not in r.text and "elevenchars" not in r.text
    assert set(await _users(app_client)) == {"admin"}  # nothing stored


async def test_update_refuses_bad_values_naming_the_field(app_client: httpx.AsyncClient,
                                                          people: People) -> None:
    await people.add("vera", "viewer")
    for body, field in (({"password": "short"}, "password"), ({"role": "boss"}, "role"),
                        ({"disabled": "maybe"}, "disabled")):
        r = await app_client.put(f"{USERS}/vera", headers=H, json=body)
        assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == field


async def test_duplicate_username_is_409(app_client: httpx.AsyncClient, people: People) -> None:
    await people.add("vera", "viewer")
    r = await app_client.post(USERS, headers=H, json={
        "username": "vera", "password": "another-password", "role": "admin"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "user_exists"
    assert (await _users(app_client))["vera"]["role"] == "viewer"


async def test_unknown_user_is_404(app_client: httpx.AsyncClient) -> None:
    for r in (await app_client.put(f"{USERS}/nobody", headers=H, json={"role": "admin"}),
              await app_client.delete(f"{USERS}/nobody", headers=H)):
        assert r.status_code == 404 and r.json()["error"]["code"] == "user_not_found"


@pytest.mark.parametrize("change", ["disable", "demote", "reset_password", "delete"])
async def test_losing_access_ends_the_users_sessions_at_once(
        app_client: httpx.AsyncClient, people: People, change: str) -> None:
    await people.add("otto", "operator")
    first, second = await people.console("otto"), await people.console("otto")
    bystander = await people.as_role("operator", "olga")
    if change == "delete":
        r = await app_client.delete(f"{USERS}/otto", headers=H)
    else:
        body = {"disable": {"disabled": True}, "demote": {"role": "viewer"},
                "reset_password": {"password": "a-brand-new-password"}}[change]
        r = await app_client.put(f"{USERS}/otto", headers=H, json=body)
    assert r.status_code in (200, 204), r.text
    for session in (first, second):
        assert (await session.get("/api/auth/me")).status_code == 401
        assert (await session.get("/api/admin/llm-configs")).status_code == 401
    assert (await bystander.get("/api/auth/me")).status_code == 200


async def test_a_promotion_takes_effect_without_a_new_login(app_client: httpx.AsyncClient,
                                                            people: People) -> None:
    vera = await people.as_role("viewer", "vera")
    assert (await vera.get(USERS)).status_code == 403
    r = await app_client.put(f"{USERS}/vera", headers=H, json={"role": "admin"})
    assert r.status_code == 200 and r.json()["role"] == "admin"
    assert (await vera.get(USERS)).status_code == 200  # same session, new role


async def test_a_disabled_user_cannot_log_in_until_enabled(app_client: httpx.AsyncClient,
                                                           people: People) -> None:
    await people.add("vera", "viewer")
    await app_client.put(f"{USERS}/vera", headers=H, json={"disabled": True})
    assert (await _users(app_client))["vera"]["disabled"] is True
    r = await app_client.post("/api/auth/login", json={"username": "vera",
                                                        "password": password_of("vera")})
    wrong = await app_client.post("/api/auth/login", json={"username": "vera",
                                                            "password": "not-her-password"})
    assert r.status_code == wrong.status_code == 401 and r.json() == wrong.json()
    await app_client.put(f"{USERS}/vera", headers=H, json={"disabled": False})
    await people.console("vera")


async def test_a_reset_password_is_the_one_that_works(app_client: httpx.AsyncClient,
                                                      people: People) -> None:
    await people.add("vera", "viewer")
    await app_client.put(f"{USERS}/vera", headers=H, json={"password": "reset-by-an-admin"})
    old = await app_client.post("/api/auth/login", json={"username": "vera",
                                                          "password": password_of("vera")})
    assert old.status_code == 401
    await people.console("vera", "reset-by-an-admin")


async def test_changing_my_password_ends_my_other_sessions(app_client: httpx.AsyncClient,
                                                           people: People) -> None:
    await people.add("otto", "operator")
    here, elsewhere = await people.console("otto"), await people.console("otto")
    r = await here.post("/api/auth/password", json={"current_password": password_of("otto"),
                                                    "new_password": "my-own-new-password"})
    assert r.status_code == 204, r.text
    assert (await here.get("/api/auth/me")).status_code == 200
    assert (await elsewhere.get("/api/auth/me")).status_code == 401
    await people.console("otto", "my-own-new-password")


async def test_changing_my_password_checks_what_i_send(app_client: httpx.AsyncClient,
                                                       people: People) -> None:
    otto = await people.as_role("operator", "otto")
    cases = [({"current_password": "not-my-password", "new_password": "my-own-new-password"},
              "current_password", "wrong_password"),
             ({"current_password": password_of("otto"), "new_password": "short"},
              "new_password", "validation_error"),
             ({"current_password": password_of("otto"), "new_password": password_of("otto")},
              "new_password", "validation_error")]
    for body, field, code in cases:
        r = await otto.post("/api/auth/password", json=body)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == code
        assert r.json()["error"]["fields"][0]["field"] == field
    no_csrf = await otto.post("/api/auth/password", headers={"X-CSRF-Token": ""}, json=cases[0][0])
    assert no_csrf.status_code == 403 and no_csrf.json()["error"]["code"] == "csrf_failed"
    token = await app_client.post("/api/auth/password", headers=H, json=cases[0][0])
    assert token.status_code == 403 and token.json()["error"]["code"] == "forbidden"
    await people.console("otto")  # the password is still the old one


async def test_the_bootstrap_admin_stays_an_admin(app_client: httpx.AsyncClient,
                                                  pg_url: str, people: People) -> None:
    for method, body in (("PUT", {"role": "viewer"}), ("PUT", {"disabled": True}),
                         ("PUT", {"password": "from-the-console-now"}), ("DELETE", None)):
        r = await app_client.request(method, f"{USERS}/admin", headers=H, json=body)
        assert r.status_code == 409, (body, r.text)
        assert r.json()["error"]["code"] == "managed_by_environment"
    admin = await people.console("admin", ADMIN_PASSWORD)
    r = await admin.post("/api/auth/password", json={"current_password": ADMIN_PASSWORD,
                                                     "new_password": "changed-in-the-console"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "managed_by_environment"
    # Even a hand edit of the table is undone at the next start.
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        await conn.execute("UPDATE callout.users SET role = 'viewer', enabled = false "
                           "WHERE username = 'admin'")
    finally:
        await conn.close()
    auth = app_client.services.auth  # type: ignore[attr-defined]
    await auth.bootstrap()
    assert (await _users(app_client))["admin"] | {"role": "admin", "disabled": False} == \
        (await _users(app_client))["admin"]


# --------------------------------------------------------------------------- last admin

@pytest_asyncio.fixture(loop_scope="session")
async def no_env_admin(pg_url: str, make_settings: Callable[..., Settings]
                       ) -> AsyncIterator[httpx.AsyncClient]:
    """The app with a generated bootstrap admin (`admin`, no CALLOUT_ADMIN_USER/PASSWORD):
    an ordinary admin the last-admin rule applies to."""
    await reset_tables(pg_url)
    async with running_app(make_settings(**{"auth.admin_user": "",
                                             "auth.admin_password": ""})) as client:
        yield client


async def test_the_last_enabled_admin_stays(no_env_admin: httpx.AsyncClient) -> None:
    c = no_env_admin

    async def refused(method: str, user: str, body: dict[str, Any] | None = None) -> None:
        r = await c.request(method, f"{USERS}/{user}", headers=H, json=body)
        assert r.status_code == 409 and r.json()["error"]["code"] == "last_admin", r.text

    assert (await _users(c))["admin"]["source"] == "generated"
    await refused("PUT", "admin", {"role": "operator"})
    await refused("PUT", "admin", {"disabled": True})
    await refused("DELETE", "admin")
    assert (await _users(c))["admin"] | {"role": "admin", "disabled": False} == \
        (await _users(c))["admin"]

    for name in ("ada", "bob"):
        r = await c.post(USERS, headers=H, json={"username": name, "role": "admin",
                                                 "password": password_of(name)})
        assert r.status_code == 201
    assert (await c.put(f"{USERS}/bob", headers=H, json={"disabled": True})).status_code == 200
    assert (await c.delete(f"{USERS}/admin", headers=H)).status_code == 204
    await refused("PUT", "ada", {"role": "viewer"})  # bob is disabled: he does not count
    # Unrelated changes to the last admin are fine.
    r = await c.put(f"{USERS}/ada", headers=H, json={"password": "ada-has-a-new-one"})
    assert r.status_code == 200


async def test_two_admins_demoting_each_other_at_once_leave_one(
        no_env_admin: httpx.AsyncClient) -> None:
    c = no_env_admin
    for name in ("ada", "bob"):
        await c.post(USERS, headers=H, json={"username": name, "role": "admin",
                                             "password": password_of(name)})
    assert (await c.delete(f"{USERS}/admin", headers=H)).status_code == 204
    service: PeopleService = c.services.people  # type: ignore[attr-defined]
    results = await asyncio.gather(
        service.update("ada", UserUpdate(role="viewer"), Actor("bob", "session")),
        service.update("bob", UserUpdate(role="viewer"), Actor("ada", "session")),
        return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], ApiError)
    assert errors[0].code == "last_admin"
    roles = {u["username"]: u["role"] for u in (await _users(c)).values()}
    assert sorted(roles.values()) == ["admin", "viewer"]


async def test_a_renamed_bootstrap_admin_becomes_an_ordinary_user(
        pg_url: str, make_settings: Callable[..., Settings]) -> None:
    await reset_tables(pg_url)
    for admin_user in ("admin", "root"):
        async with running_app(make_settings(**{"auth.admin_user": admin_user})) as c:
            users = await _users(c)
    assert (users["root"]["source"], users["admin"]["source"]) == ("env", "console")


async def test_people_and_the_trail_on_the_embedded_sqlite_file(
        make_settings: Callable[..., Settings], tmp_path: Any) -> None:
    settings = make_settings(**{"database.url": "", "redis.url": "", "auth.secret_key": "",
                                "database.sqlite_path": str(tmp_path / "callout.db")})
    async with running_app(settings) as c:
        helper = People(c)
        try:
            otto = await helper.as_role("operator", "otto")
            assert (await otto.get("/api/admin/llm-configs")).status_code == 200
            assert (await c.put(f"{USERS}/otto", headers=H, json={"role": "viewer"})).status_code == 200
            assert (await otto.get("/api/auth/me")).status_code == 401
            again = await helper.console("otto")
            assert (await again.post("/api/auth/logout")).status_code == 204
            r = await c.get("/api/admin/audit", headers=H, params={"actor": "otto"})
            assert [e["action"] for e in r.json()["items"]] == ["auth.logout", "auth.login",
                                                                "auth.login"]
        finally:
            await helper.aclose()
