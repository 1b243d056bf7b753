"""The NLU route's lean path (api/lean.py) answers exactly what FastAPI's handler answers.

Four checks: the OpenAPI document is the one a plain `APIRoute` gives; every request of a
corpus (valid, each kind of 422, wrong content types, a chunked body over the limit, no
credentials, an upstream failure) gets the same status, headers and body through the lean path
as through FastAPI's own handler; and the one-pass JSON decoder never accepts a body that
FastAPI's decoding (stdlib `json`, then validation from Python objects) refuses or reads
differently, on a corpus of JSON oddities and on generated bodies; and a request the
dispatcher sends straight to its route (`LeanDispatch`) is answered as the router's is.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from callout_server.api.lean import LeanDispatch, LeanJsonRoute
from callout_server.app import create_app
from callout_server.tiers.nlu.schemas import DecideRequest
from tests.fixtures.app import running_app
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, reset_tables
from tests.fixtures.upstream import json_reply
from tests.support.nlu import DECIDE, answer, decide_body


def _plain(route: LeanJsonRoute) -> APIRoute:
    """The same route as a plain APIRoute (what the router built before the lean path)."""
    return APIRoute(
        route.path, route.endpoint, methods=route.methods, response_model=route.response_model,
        status_code=route.status_code, tags=route.tags, dependencies=route.dependencies,
        summary=route.summary, description=route.description,
        response_description=route.response_description, responses=route.responses,
        deprecated=route.deprecated, operation_id=route.operation_id,
        include_in_schema=route.include_in_schema, name=route.name)


def test_openapi_document_is_the_plain_routes(make_settings) -> None:
    lean = create_app(make_settings())
    plain = create_app(make_settings())
    swapped = 0
    for included in plain.router.routes:
        original = getattr(included, "original_router", None)
        if original is None or not any(isinstance(r, LeanJsonRoute) for r in original.routes):
            continue
        copy = APIRouter()
        for route in original.routes:
            if isinstance(route, LeanJsonRoute):
                route = _plain(route)
                swapped += 1
            copy.routes.append(route)
        included.original_router = copy
    assert swapped == 2  # POST /api/nlu/decide and /api/nlu/screen
    doc = lean.openapi()
    assert "/api/nlu/decide" in doc["paths"]
    assert json.dumps(doc, sort_keys=True) == json.dumps(plain.openapi(), sort_keys=True)


# -- the same answer both ways ------------------------------------------------------------------

COMPLETION = {"id": "c", "object": "chat.completion", "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": answer("agree", 0.9, time="明天")}}],
              "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


@pytest.fixture
async def app(make_settings, pg_url, upstream) -> AsyncIterator[FastAPI]:
    await reset_tables(pg_url)
    upstream.reply = json_reply(COMPLETION)
    async with running_app(make_settings(**{"llm.nlu.base_url": upstream.base_url,
                                            "redis.poll_interval_s": 3600})) as client:
        yield client.app  # type: ignore[attr-defined]


def _full_handler_only(app: FastAPI) -> None:
    """Any dependency override sends every request to FastAPI's handler (api/lean.py)."""
    async def unused() -> None:
        return None
    app.dependency_overrides[unused] = unused


J = {"content-type": "application/json"}
CASES: list[tuple[str, dict[str, str], Any]] = [
    ("valid", {**SERVICE_HEADERS, **J}, json.dumps(decide_body())),
    ("valid, English", {**SERVICE_HEADERS, **J, "accept-language": "en"}, json.dumps(decide_body())),
    ("valid, charset", {**SERVICE_HEADERS, "content-type": "application/json; charset=utf-8"},
     json.dumps(decide_body())),
    ("valid, +json", {**SERVICE_HEADERS, "content-type": "application/vnd.x+json"},
     json.dumps(decide_body())),
    ("string number", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(deadline_ms="1500"))),
    ("missing utterance", {**SERVICE_HEADERS, **J},
     json.dumps({k: v for k, v in decide_body().items() if k != "utterance"})),
    ("blank utterance", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(utterance="  "))),
    ("wrong types, English", {**SERVICE_HEADERS, **J, "accept-language": "en"},
     json.dumps(decide_body(utterance=5, intents="x", deadline_ms=True))),
    ("unknown field", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(surprise=1))),
    ("NUL", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(utterance="a\x00b"))),
    ("lone surrogate", {**SERVICE_HEADERS, **J}, '{"utterance": "\\ud800", "intents": [{"name": "a"}]}'),
    ("NaN", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(overrides={"extra_params": {"x": float("nan")}}))),
    ("big int", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(overrides={"extra_params": {"x": 2**70}}))),
    ("protected key", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(overrides={"extra_params": {"model": "x"}}))),
    ("duplicate intents", {**SERVICE_HEADERS, **J},
     json.dumps(decide_body(intents=[{"name": "a"}, {"name": "a"}]))),
    ("fallback not offered", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(fallback_intent="zz"))),
    ("deadline too short", {**SERVICE_HEADERS, **J}, json.dumps(decide_body(deadline_ms=10))),
    ("enum without values", {**SERVICE_HEADERS, **J},
     json.dumps(decide_body(slots=[{"name": "p", "type": "enum"}]))),
    ("not JSON", {**SERVICE_HEADERS, **J}, '{"utterance": "x",\n  "intents": [}'),
    ("trailing garbage", {**SERVICE_HEADERS, **J}, json.dumps(decide_body()) + " x"),
    ("an array", {**SERVICE_HEADERS, **J}, "[1, 2]"),
    ("empty body", {**SERVICE_HEADERS, **J}, ""),
    ("not UTF-8", {**SERVICE_HEADERS, **J}, b'{"utterance": "\xff", "intents": [{"name": "a"}]}'),
    ("UTF-16", {**SERVICE_HEADERS, **J}, json.dumps(decide_body()).encode("utf-16")),
    ("text/plain", {**SERVICE_HEADERS, "content-type": "text/plain"}, json.dumps(decide_body())),
    ("no content type", SERVICE_HEADERS, json.dumps(decide_body())),
    ("no credentials", J, json.dumps(decide_body())),
    ("bad token", {**J, "authorization": "Bearer nope"}, json.dumps(decide_body())),
]


def _routes(app: FastAPI) -> list[Any]:
    """The routes of the routers the app includes."""
    return [r for included in app.router.routes
            for r in getattr(getattr(included, "original_router", None), "routes", [])]


async def _send(app: FastAPI, headers: dict[str, str], body: Any, *, path: str = DECIDE,
                method: str = "POST", root_path: str = "") -> tuple[int, list[Any], Any]:
    # Unhandled errors answered as a client sees them (the app's 500), not raised here.
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False, root_path=root_path)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        r = await client.request(method, path, headers=headers, content=body)
    kept = sorted((k, v) for k, v in r.headers.items() if k != "content-length")
    try:
        got = r.json()
    except ValueError:
        return r.status_code, kept, r.content
    if r.status_code == 200:
        got["latency_ms"] = 0  # the one value that may differ between two calls
    return r.status_code, kept, got


async def test_every_case_answers_as_fastapi_does(app) -> None:
    [route] = [r for r in _routes(app) if isinstance(r, LeanJsonRoute) and r.path == DECIDE]
    served = route.served_lean  # the router is the module's: other tests' decisions count too
    lean = [await _send(app, headers, body) for _, headers, body in CASES]
    assert route.served_lean - served == 3  # the valid ones sent as exactly application/json
    _full_handler_only(app)
    served = route.served_lean
    full = [await _send(app, headers, body) for _, headers, body in CASES]
    assert route.served_lean == served  # the app's overrides seen, also when dispatched
    for (name, *_), a, b in zip(CASES, lean, full, strict=True):
        assert a == b, name
    statuses = {name: a[0] for (name, *_), a in zip(CASES, lean, strict=True)}
    assert statuses["valid"] == statuses["string number"] == statuses["valid, +json"] == 200
    assert statuses["no credentials"] == 401 and statuses["not UTF-8"] in (400, 422)
    assert all(statuses[n] == 422 for n in ("missing utterance", "blank utterance", "NaN",
                                            "not JSON"))
    # Not sent as JSON: said so (415), not "body should be a JSON object".
    assert statuses["text/plain"] == statuses["no content type"] == 415


async def test_a_chunked_body_over_the_limit_is_413_both_ways(app) -> None:
    limit = app.state.services.settings.server.body_limit(DECIDE)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(limit // 1024 + 2):
            yield b" " * 1024

    lean = await _send(app, {**SERVICE_HEADERS, **J}, chunks())
    _full_handler_only(app)
    full = await _send(app, {**SERVICE_HEADERS, **J}, chunks())
    assert lean == full and lean[0] == 413


async def test_an_upstream_failure_is_the_same_502(app, upstream) -> None:
    upstream.reply = json_reply({"error": {"message": "overloaded"}}, 503)
    body = json.dumps(decide_body())
    lean = await _send(app, {**SERVICE_HEADERS, **J}, body)
    _full_handler_only(app)
    full = await _send(app, {**SERVICE_HEADERS, **J}, body)
    assert lean[0] == full[0] == 502

    def shape(answer: tuple[int, list[Any], Any]) -> Any:
        error = dict(answer[2]["error"])
        error.pop("diagnostic", None)  # carries the call's own record id and timing
        return answer[0], answer[1], error

    assert shape(lean) == shape(full)


# -- the dispatcher ------------------------------------------------------------------------------

SCREEN = "/api/nlu/screen"
# Beside CASES: what the router answers itself, a lean route's other path, a refusal raised by
# a dependency (the admin token, refused here by the route's access check: see the test).
ROUTED: list[tuple[str, str, str, dict[str, str], Any]] = [
    ("GET", DECIDE, "405", SERVICE_HEADERS, None),
    ("PUT", DECIDE, "405 with a body", {**SERVICE_HEADERS, **J}, json.dumps(decide_body())),
    ("POST", DECIDE + "/", "trailing slash", {**SERVICE_HEADERS, **J}, json.dumps(decide_body())),
    ("POST", "/api/nlu/decid", "no such path", {**SERVICE_HEADERS, **J}, "{}"),
    ("POST", SCREEN, "screen", {**SERVICE_HEADERS, **J}, json.dumps({"utterance": "喂，你好"})),
    ("POST", DECIDE, "refused by a dependency", {**ADMIN_HEADERS, **J}, json.dumps(decide_body())),
]


async def _corpus(app: FastAPI) -> list[tuple[int, list[Any], Any]]:
    return ([await _send(app, headers, body) for _, headers, body in CASES]
            + [await _send(app, headers, body, path=path, method=method)
               for method, path, _, headers, body in ROUTED])


def _dispatch(app: FastAPI) -> LeanDispatch:
    dispatch = app.state.lean_dispatch
    assert isinstance(dispatch, LeanDispatch) and app.router.middleware_stack is dispatch
    return dispatch


async def test_dispatched_requests_are_answered_as_routed_ones(app, monkeypatch) -> None:
    from callout_server.auth.roles import SERVICE, Access

    # The route's own dependency refuses the admin token (an HTTP error raised inside the
    # route, rendered by the app's handlers), as it refuses a viewer.
    monkeypatch.setattr(Access, "allows", lambda self, role, via: role == SERVICE)
    dispatch = _dispatch(app)
    await _corpus(app)  # the router finds each route once
    before = dispatch.dispatched
    straight = await _corpus(app)
    # Every POST to /decide and /screen the edge let in went straight to its route (CASES but
    # the two without valid credentials, screen, the refused one); the 405s, the trailing slash
    # and the unknown path went through the router.
    assert dispatch.dispatched - before == (len(CASES) - 2) + 2
    app.router.middleware_stack = dispatch.app  # the router alone
    try:
        routed = await _corpus(app)
    finally:
        app.router.middleware_stack = dispatch
    names = [name for name, *_ in CASES] + [name for _, _, name, *_ in ROUTED]
    for name, a, b in zip(names, straight, routed, strict=True):
        assert a == b, name
    statuses = dict(zip(names, (a[0] for a in straight), strict=True))
    assert statuses["405"] == statuses["405 with a body"] == 405
    assert statuses["refused by a dependency"] == 403 and statuses["screen"] == 200
    assert statuses["no such path"] == 404


async def test_an_unexpected_failure_is_the_same_500_dispatched(app, monkeypatch) -> None:
    from callout_server.tiers.nlu.service import NluService

    async def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("a bug in the service")

    body = json.dumps(decide_body())
    await _send(app, {**SERVICE_HEADERS, **J}, body)  # learnt
    monkeypatch.setattr(NluService, "decide", broken)
    dispatch = _dispatch(app)
    before = dispatch.dispatched
    straight = await _send(app, {**SERVICE_HEADERS, **J}, body)
    assert dispatch.dispatched == before + 1
    app.router.middleware_stack = dispatch.app
    try:
        routed = await _send(app, {**SERVICE_HEADERS, **J}, body)
    finally:
        app.router.middleware_stack = dispatch
    assert straight == routed and straight[0] == 500
    assert "a bug in the service" not in json.dumps(straight[2])


async def test_a_root_path_is_left_to_the_router(app) -> None:
    dispatch = _dispatch(app)
    body = json.dumps(decide_body())
    await _send(app, {**SERVICE_HEADERS, **J}, body)
    before = dispatch.dispatched
    status, _, answer = await _send(app, {**SERVICE_HEADERS, **J}, body, path="/x" + DECIDE,
                                    root_path="/x")
    assert status == 200 and answer["intent"] == "agree"
    assert dispatch.dispatched == before


# -- the decoder ----------------------------------------------------------------------------------

def _fastapi_reads(raw: bytes | str) -> DecideRequest | None:
    """What FastAPI's handler makes of a JSON body: stdlib json, then validation from Python."""
    try:
        return DecideRequest.model_validate(json.loads(raw))
    except (ValueError, ValidationError, RecursionError, TypeError):
        return None


def _lean_reads(raw: bytes | str) -> DecideRequest | None:
    try:
        return DecideRequest.model_validate_json(raw)
    except ValidationError:
        return None


def _same_reading(raw: bytes | str) -> None:
    lean = _lean_reads(raw)
    if lean is None:
        return  # handed to FastAPI's handler: its own answer
    full = _fastapi_reads(raw)
    assert full is not None, raw
    assert lean.model_dump() == full.model_dump(), raw


ODD = [
    '{"utterance": "x", "intents": [{"name": "a"}], "utterance": "y"}',  # duplicate key
    '{"utterance": "x\\u0000", "intents": [{"name": "a"}]}',
    '{"utterance": "\\ud83d\\ude00", "intents": [{"name": "a"}]}',  # a surrogate pair
    '{"utterance": "\\udc00\\ud800", "intents": [{"name": "a"}]}',
    '{"utterance": "a\nb", "intents": [{"name": "a"}]}',  # a raw control character
    '{"utterance": "a\tb", "intents": [{"name": "a"}]}',
    '{"utterance": "x", "intents": [{"name": "a"}], "deadline_ms": 1e3}',
    '{"utterance": "x", "intents": [{"name": "a"}], "deadline_ms": 1000.0}',
    '{"utterance": "x", "intents": [{"name": "a"}], "deadline_ms": 01000}',
    '{"utterance": "x", "intents": [{"name": "a"}], "deadline_ms": +1000}',
    '{"utterance": "x", "intents": [{"name": "a"}], "deadline_ms": true}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"temperature": 1e400}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"temperature": Infinity}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"extra_params": {"n": NaN}}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"extra_params": {"n": -0.0}}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"extra_params": {"n": 18446744073709551615}}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"extra_params": {"n": 1.7976931348623157e309}}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"extra_params": {"n": 123456789012345678901234567890.5}}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"extra_params": {"a": {"b": [[[[[]]]]]}}}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"enable_thinking": "true"}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"enable_thinking": 1}}',
    '{"utterance": "x", "intents": [{"name": "a"}], "overrides": {"timeout_s": "1.5"}}',
    '{"utterance": "x", "slots": [{"name": "s", "type": "enum", "values": ["a", "A"]}]}',
    '{"utterance": "x", "intents": [{"name": "a"}]}  ',
    '\ufeff{"utterance": "x", "intents": [{"name": "a"}]}',  # a byte-order mark
    ' \n{"utterance": "x", "intents": [{"name": "a"}]}',
    '{"utterance": "x", "intents": [{"name": "a"}], "context": [{"role": "user", "content": "\\u00e9"}]}',
    '{"utterance": null, "intents": [{"name": "a"}]}',
    '{"utterance": "x", "intents": [{"name": "a", "description": null}]}',
]


@pytest.mark.parametrize("raw", ODD)
def test_odd_json_is_read_as_fastapi_reads_it(raw: str) -> None:
    _same_reading(raw)
    _same_reading(raw.encode("utf-8", "surrogatepass"))


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
_bodies = st.fixed_dictionaries(
    {"utterance": st.one_of(st.text(max_size=20), _values)},
    optional={"intents": st.one_of(st.lists(st.fixed_dictionaries(
                  {"name": st.sampled_from(["a", "b", "意图", "x y", ""])},
                  optional={"description": st.one_of(st.text(max_size=10), _values)}),
                  max_size=3), _values),
              "slots": st.lists(st.fixed_dictionaries(
                  {"name": st.sampled_from(["s", "t"])},
                  optional={"type": st.sampled_from(["string", "number", "enum", "date"]),
                            "values": st.one_of(st.lists(st.text(max_size=4), max_size=3), _values)}),
                  max_size=2),
              "deadline_ms": _values | st.integers(0, 200_000),
              "fallback_intent": st.sampled_from(["a", "b", None]),
              "call_id": _values,
              "overrides": st.one_of(_values, st.fixed_dictionaries({}, optional={
                  "temperature": _values, "max_tokens": _values, "extra_params": _values,
                  "enable_thinking": _values}))})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=_bodies, ascii_only=st.booleans())
def test_generated_bodies_are_read_as_fastapi_reads_them(body: dict[str, Any], ascii_only: bool) -> None:
    _same_reading(json.dumps(body, ensure_ascii=ascii_only))
