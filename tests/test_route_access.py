"""Every route of the app has one role decision, and every caller gets exactly what it allows.

ROUTES is the one table: (method, path) -> decision. A route the app serves that is not in
it fails `test_every_route_has_its_decision` (add the row: that is the role decision), as does
a route whose dependency says otherwise, and a row for a route that no longer exists.

Decisions (`callout_server.auth.roles`):

    public        no credentials (health, metrics, login/logout, the console's pages, docs)
    signed_in     any valid credential, the service token included (who am I)
    console_user  a person signed in with a session (their own password)
    viewer        reads: viewer, operator, admin, the admin token
    operator      model configurations, activation, test connection, script drafts
    admin         people and the audit trail
    service       the dialer's routes: the service token, the admin token, operators, admins

`test_each_caller_against_each_route` then calls every non-public route as each of five
callers (viewer, operator and admin sessions, the admin and the service token) on
PostgreSQL: a caller the decision refuses gets 403 `forbidden`; one it allows gets past the
role check (whatever the route then says about the empty request: 404, 422, 200...).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, routing

from callout_server.auth.roles import Access
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS
from tests.fixtures.people import People

ROUTES: dict[tuple[str, str], str] = {
    # open
    ("GET", "/healthz"): "public",
    ("GET", "/metrics"): "public",
    ("GET", "/openapi.json"): "public",
    ("GET", "/docs"): "public",
    ("GET", "/docs/oauth2-redirect"): "public",
    ("GET", "/redoc"): "public",
    ("GET", "/"): "public",  # a redirect to the console
    ("GET", "/admin"): "public",
    ("GET", "/admin/"): "public",
    ("GET", "/admin/index.html"): "public",
    ("POST", "/api/auth/login"): "public",
    ("POST", "/api/auth/logout"): "public",
    # who am I, my password
    ("GET", "/api/auth/me"): "signed_in",
    ("POST", "/api/auth/password"): "console_user",
    # model configurations
    ("GET", "/api/admin/llm-configs"): "viewer",
    ("GET", "/api/admin/llm-configs/{config_id}"): "viewer",
    ("GET", "/api/admin/llm-configs/{config_id}/revisions"): "viewer",
    ("GET", "/api/admin/llm-active"): "viewer",
    ("GET", "/api/admin/vendors"): "viewer",
    ("POST", "/api/admin/llm-configs"): "operator",
    ("PUT", "/api/admin/llm-configs/{config_id}"): "operator",
    ("DELETE", "/api/admin/llm-configs/{config_id}"): "operator",
    ("POST", "/api/admin/llm-configs/{config_id}/activate"): "operator",
    ("POST", "/api/admin/llm-configs/{config_id}/deactivate"): "operator",
    ("POST", "/api/admin/llm-configs/{config_id}/test"): "operator",
    ("POST", "/api/admin/llm-configs/test"): "operator",  # the unsaved form
    ("POST", "/api/admin/llm-configs/models"): "operator",
    ("GET", "/api/admin/upstreams"): "viewer",
    ("POST", "/api/admin/upstreams/drain"): "operator",
    ("POST", "/api/admin/upstreams/undrain"): "operator",
    ("GET", "/api/admin/evaluations/nodes"): "viewer",
    ("POST", "/api/admin/evaluations"): "operator",
    ("GET", "/api/admin/evaluations"): "viewer",
    ("GET", "/api/admin/evaluations/{evaluation_id}"): "viewer",
    # they quote customers' words (issue 21 item 13): operators and admins
    ("GET", "/api/admin/evaluations/{evaluation_id}/disagreements"): "operator",
    ("POST", "/api/admin/evaluations/{evaluation_id}/cancel"): "operator",
    ("GET", "/api/admin/nlu/global-intents"): "viewer",
    ("PUT", "/api/admin/nlu/global-intents"): "operator",
    ("POST", "/api/admin/nlu/global-intents/try"): "viewer",
    ("POST", "/api/admin/playground/nlu"): "operator",
    ("POST", "/api/admin/playground/script"): "operator",
    ("POST", "/api/admin/playground/chat/sessions"): "operator",
    ("POST", "/api/admin/canaries"): "operator",
    ("GET", "/api/admin/canaries"): "viewer",
    ("GET", "/api/admin/canaries/{canary_id}"): "viewer",
    ("POST", "/api/admin/canaries/{canary_id}/promote"): "operator",
    ("POST", "/api/admin/canaries/{canary_id}/stop"): "operator",
    # service keys
    ("GET", "/api/admin/service-keys"): "admin",
    ("POST", "/api/admin/service-keys"): "admin",
    ("PUT", "/api/admin/service-keys/{key_id}"): "admin",
    ("DELETE", "/api/admin/service-keys/{key_id}"): "admin",
    # usage and cost
    ("GET", "/api/admin/usage"): "viewer",
    ("GET", "/api/admin/calls/{call_id}"): "viewer",
    # diagnostics
    ("GET", "/api/admin/diagnostics"): "viewer",
    ("GET", "/api/admin/diagnostics/summary"): "viewer",
    ("GET", "/api/admin/diagnostics/export"): "viewer",
    # erasing one call (issue 22)
    ("DELETE", "/api/admin/calls/{call_id}"): "admin",
    # script drafts
    ("GET", "/api/admin/scripts"): "viewer",
    ("GET", "/api/admin/scripts/{draft_id}"): "viewer",
    ("PUT", "/api/admin/scripts/{draft_id}"): "operator",
    ("DELETE", "/api/admin/scripts/{draft_id}"): "operator",
    # speech guard lexicons
    ("GET", "/api/admin/lexicons"): "viewer",
    ("POST", "/api/admin/lexicons/try"): "viewer",
    ("GET", "/api/admin/lexicons/{name}"): "viewer",
    ("PUT", "/api/admin/lexicons/{name}"): "operator",
    ("DELETE", "/api/admin/lexicons/{name}"): "operator",
    # people and the audit trail
    ("GET", "/api/admin/users"): "admin",
    ("POST", "/api/admin/users"): "admin",
    ("PUT", "/api/admin/users/{username}"): "admin",
    ("DELETE", "/api/admin/users/{username}"): "admin",
    ("GET", "/api/admin/audit"): "admin",
    # the dialer's routes
    ("POST", "/api/nlu/decide"): "service",
    ("POST", "/api/nlu/screen"): "service",
    ("POST", "/api/scripts/generate"): "service",
    ("POST", "/api/chat/sessions"): "service",
    ("GET", "/api/chat/sessions/{call_id}"): "service",
    ("DELETE", "/api/chat/sessions/{call_id}"): "service",
    ("POST", "/api/chat/sessions/{call_id}/turns"): "service",
    ("POST", "/api/chat/sessions/{call_id}/cancel"): "service",
    ("POST", "/api/chat/sessions/{call_id}/tool-outputs"): "service",
}

CALLERS = ("viewer", "operator", "admin", "admin_token", "service_token")
# Who each decision lets in: written out, not derived, so the rule itself is under test.
ALLOWED: dict[str, frozenset[str]] = {
    "signed_in": frozenset(CALLERS),
    "console_user": frozenset({"viewer", "operator", "admin"}),
    "viewer": frozenset({"viewer", "operator", "admin", "admin_token"}),
    "operator": frozenset({"operator", "admin", "admin_token"}),
    "admin": frozenset({"admin", "admin_token"}),
    "service": frozenset({"operator", "admin", "admin_token", "service_token"}),
}


def _app_routes(app: FastAPI) -> Iterator[tuple[str, str, Any]]:
    """(method, path, dependant or None) for every route, HEAD left out; mounts skipped."""
    iter_contexts = getattr(routing, "iter_route_contexts", None)  # FastAPI >= 0.16x
    routes = iter_contexts(app.routes) if iter_contexts else app.routes
    for route in routes:
        methods = getattr(route, "methods", None)
        if not methods:
            continue  # a Mount (the console's static files)
        for method in sorted(methods - {"HEAD"}):
            yield method, route.path, getattr(route, "dependant", None)


def _decisions(dependant: Any) -> set[str]:
    found: set[str] = set()
    if dependant is None:
        return found
    access = getattr(dependant.call, "access", None)
    if isinstance(access, Access):
        found.add(access.name)
    for sub in dependant.dependencies:
        found |= _decisions(sub)
    return found


def test_every_route_has_its_decision(app_without_lifespan: FastAPI) -> None:
    served: dict[tuple[str, str], str] = {}
    problems: list[str] = []
    for method, path, dependant in _app_routes(app_without_lifespan):
        decisions = _decisions(dependant)
        if len(decisions) > 1:
            problems.append(f"{method} {path}: several role decisions {sorted(decisions)}")
        served[(method, path)] = decisions.pop() if len(decisions) == 1 else "public"
    for key, decision in sorted(served.items()):
        if key not in ROUTES:
            problems.append(f"{key[0]} {key[1]}: no row in ROUTES (its dependency says "
                            f"{decision!r}); add the route's role decision to the table")
        elif ROUTES[key] != decision:
            problems.append(f"{key[0]} {key[1]}: the table says {ROUTES[key]!r}, "
                            f"the route's dependency says {decision!r}")
    problems += [f"{m} {p}: in ROUTES but not served" for m, p in ROUTES if (m, p) not in served]
    assert not problems, "\n".join(problems)


@pytest.fixture
def app_without_lifespan(make_settings: Any) -> FastAPI:
    from callout_server.app import create_app

    return create_app(make_settings())


def _fill(path: str) -> str:
    # Ids that exist nowhere: an allowed caller gets 404 (or 422), never a change.
    return re.sub(r"\{(\w+)\}", lambda m: "999999" if m.group(1).endswith("_id")
                  and m.group(1) != "call_id" else "no-such-thing", path)


async def test_each_caller_against_each_route(app_client: httpx.AsyncClient,
                                              people: People) -> None:
    callers: dict[str, tuple[httpx.AsyncClient, dict[str, str]]] = {
        "viewer": (await people.as_role("viewer"), {}),
        "operator": (await people.as_role("operator"), {}),
        "admin": (await people.as_role("admin", "second-admin"), {}),
        "admin_token": (app_client, ADMIN_HEADERS),
        "service_token": (app_client, SERVICE_HEADERS),
    }
    wrong: list[str] = []
    for (method, path), decision in sorted(ROUTES.items()):
        if decision == "public":
            continue
        for name, (client, headers) in callers.items():
            r = await client.request(method, _fill(path), headers=headers)
            refused = r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
            if name in ALLOWED[decision]:
                if r.status_code in (401, 403):
                    wrong.append(f"{name} refused on {method} {path} ({decision}): "
                                 f"{r.status_code} {r.text[:120]}")
            elif not refused:
                wrong.append(f"{name} not refused on {method} {path} ({decision}): "
                             f"{r.status_code} {r.text[:120]}")
    assert not wrong, "\n".join(wrong)


async def test_anonymous_callers_get_401_on_every_guarded_route(
        app_client: httpx.AsyncClient) -> None:
    for (method, path), decision in sorted(ROUTES.items()):
        if decision == "public":
            continue
        r = await app_client.request(method, _fill(path))
        assert r.status_code == 401, (method, path, r.status_code)
