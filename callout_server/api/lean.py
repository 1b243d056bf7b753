"""`LeanJsonRoute`: a FastAPI route whose common request skips FastAPI's per-request machinery.

For the dialer's hot route (`POST /api/nlu/decide`, thousands a second per worker). FastAPI's
handler costs about a quarter of a decision's CPU (bench/README.md, the profile): a `Request`,
two exit stacks, the body parsed by the stdlib `json` into Python objects and validated from
those, the dependency solver, the response validated and serialised, a `Response` object.
This route serves the common request straight from ASGI:

    the body read whole (the edge's size limit applies as it reads)  ->  Content-Type exactly
    application/json  ->  the body model validated from the JSON bytes in one pass (pydantic's
    `model_validate_json`, no intermediate Python objects)  ->  each dependency called with the
    request  ->  the endpoint  ->  the answer serialised by the route's own response field,
    as FastAPI does it  ->  two ASGI messages.

Anything else goes to FastAPI's own handler for the route, with the body as it was read:
another content type, a body the fast decoder refuses (so every 422 is FastAPI's, unchanged in
shape, code and message), a client gone mid-body, dependency overrides (tests). The route stays
an `APIRoute`: the OpenAPI document is built from it as before (tests/test_lean_route.py
compares both), and so is the role table's view of its dependencies.

Finding the route costs as much again (FastAPI's router walks its included routers and matches
the path twice, about a tenth of a decision). `LeanDispatch` sits where the router is, inside
every middleware and the exception handlers: the first request to a lean route's path goes
through the router, and the route notes what the router put in the scope; later requests to
that method and path get the same scope entries and go straight to the route.

Only a route whose dependencies are plain `async def dep(request)` functions qualifies (ours:
`provide(...)`, `require(...)`); any other keeps FastAPI's handler for every request.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi.datastructures import DefaultPlaceholder
from fastapi.exceptions import ResponseValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_JSON = b"application/json"
_HEADERS_JSON = (b"content-type", _JSON)


class LeanJsonRoute(APIRoute):
    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        # Per inclusion of the route (FastAPI builds one effective route per include_router):
        # id -> (the effective route, its plan or None). Bounded by the app's inclusions.
        self._plans: dict[int, tuple[Any, _Plan | None]] = {}
        self.served_lean = 0  # requests the fast path answered (tests, benchmarks)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        learning = scope.get(_LEARN)
        if learning is not None:
            learning.learn(scope, self)
        target = _effective(scope, self)
        known = self._plans.get(id(target))
        if known is None or known[0] is not target:
            known = self._plans[id(target)] = (target, _plan(target))
        plan = known[1]
        if plan is None or scope["method"] not in target.methods:
            await super().handle(scope, receive, send)
            return
        await self._serve(plan, target, scope, receive, send)

    async def _serve(self, plan: _Plan, target: Any, scope: Scope, receive: Receive,
                     send: Send) -> None:
        messages: list[Message] = []
        chunks: list[bytes] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":  # a disconnect: FastAPI says what it says
                await super().handle(scope, _replay(messages, receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        overrides = getattr(target.dependency_overrides_provider, "dependency_overrides", None)
        if overrides or _content_type(scope) != _JSON:
            await super().handle(scope, _replay(messages, receive), send)
            return
        body_name, body_model, deps = plan
        try:
            value = body_model.model_validate_json(body)
        except ValidationError:
            # FastAPI decodes and validates it again and answers its own 422 (or 400)
            await super().handle(scope, _replay(messages, receive), send)
            return
        request = Request(scope, _replay(messages, receive), send)
        values: dict[str, Any] = {body_name: value}
        for name, dependency in deps:
            values[name] = await dependency(request)
        answer = await target.endpoint(**values)
        self.served_lean += 1
        if isinstance(answer, Response):
            await answer(scope, receive, send)
            return
        content = _encode(target, answer)
        await send({"type": "http.response.start", "status": target.status_code or 200,
                    "headers": [(b"content-length", str(len(content)).encode()), _HEADERS_JSON]})
        await send({"type": "http.response.body", "body": content})


_LEARN = "callout.lean_dispatch"
_ROUTED = ("fastapi.telemetry", "root_path")  # present and set: the router's own way


class LeanDispatch:
    """In place of the router's ASGI app (`install`): a request for a lean route's method and
    exact path, once the router has found that route for it, goes straight to the route.

    What the router adds to the scope on the way (route, endpoint, path parameters, FastAPI's
    record of the included router and the route as included) is noted when the route is
    reached, and given, copied, to each later request. The router keeps everything else: other
    paths and methods (405, redirects, 404), mounted apps, a `root_path`, telemetry. The routes
    are fixed once the app serves (they are included at start-up), so nothing noted goes stale.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._known: dict[tuple[str, str], tuple[LeanJsonRoute, dict[str, Any],
                                                  dict[str, Any]]] = {}
        self.dispatched = 0  # requests sent straight to their route (tests, benchmarks)

    @classmethod
    def install(cls, app: Any) -> LeanDispatch:
        """Put a dispatcher in front of `app.router`'s own ASGI app (inside the middleware
        and exception handling FastAPI builds around the router)."""
        router = app.router
        dispatch = cls(router.middleware_stack)
        router.middleware_stack = dispatch
        return dispatch

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not any(scope.get(k) for k in _ROUTED):
            known = self._known.get((scope["method"], scope["path"]))
            if known is not None:
                route, entries, fastapi = known
                scope.update(entries)
                scope["path_params"] = {}
                scope.setdefault("fastapi", {}).update(fastapi)
                self.dispatched += 1
                await route.handle(scope, receive, send)
                return
            scope[_LEARN] = _Learning(self, set(scope), dict(scope.get("fastapi", {})))
        await self.app(scope, receive, send)


class _Learning:
    """What the scope held when the dispatcher passed it to the router."""

    __slots__ = ("before", "before_fastapi", "dispatch")

    def __init__(self, dispatch: LeanDispatch, before: set[str],
                 before_fastapi: dict[str, Any]) -> None:
        self.dispatch, self.before, self.before_fastapi = dispatch, before, before_fastapi

    def learn(self, scope: Scope, route: LeanJsonRoute) -> None:
        del scope[_LEARN]
        if scope.get("path_params") or scope["method"] not in route.methods:
            return  # a path with parameters (or a 405 to come): the router's every time
        entries = {k: v for k, v in scope.items()
                   if k not in self.before and k not in ("fastapi", "path_params")}
        fastapi = {k: v for k, v in scope.get("fastapi", {}).items()
                   if self.before_fastapi.get(k, _MISSING) is not v}
        self.dispatch._known[(scope["method"], scope["path"])] = (route, entries, fastapi)


_MISSING = object()


def _effective(scope: Scope, route: APIRoute) -> Any:
    """The route as included (its prefix, the app's overrides), as FastAPI's own handle()
    finds it; the route itself when it was added to the app directly."""
    context = scope.get("fastapi", {}).get("effective_route_context")
    return context if getattr(context, "original_route", None) is route else route


def _encode(target: Any, answer: Any) -> bytes:
    """The answer as FastAPI encodes it: validated by the response field, then dumped."""
    field = target.response_field
    value, errors = field.validate(answer, {}, loc=("response",))
    if errors:  # our bug, not the caller's: FastAPI's own 500 for it
        raise ResponseValidationError(errors=errors, body=answer)
    return field.serialize_json(  # type: ignore[no-any-return]
        value, include=target.response_model_include, exclude=target.response_model_exclude,
        by_alias=target.response_model_by_alias,
        exclude_unset=target.response_model_exclude_unset,
        exclude_defaults=target.response_model_exclude_defaults,
        exclude_none=target.response_model_exclude_none)


Dependency = Callable[[Request], Awaitable[Any]]
# (body parameter, body model, [(parameter, dependency)])
_Plan = tuple[str, type[BaseModel], list[tuple[str, Dependency]]]


def _plan(route: Any) -> _Plan | None:
    """How the fast path serves `route` (an APIRoute, or FastAPI's effective route for one
    inclusion: the same attributes) exactly as FastAPI would; None when it cannot."""
    dependant = route.dependant
    if dependant is None:
        return None
    body = dependant.body_params
    if (len(body) != 1 or dependant.path_params or dependant.query_params
            or dependant.header_params or dependant.cookie_params
            or dependant.request_param_name or dependant.response_param_name
            or dependant.background_tasks_param_name or route.dependencies
            or route.body_field is None or route._embed_body_fields
            or getattr(route, "max_body_size", None) is not None  # FastAPI's own body limit
            or route.is_sse_stream or route.is_json_stream
            or not inspect.iscoroutinefunction(route.endpoint)
            or not isinstance(route.response_class, DefaultPlaceholder)
            or route.response_field is None):
        return None
    model = body[0].field_info.annotation
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    deps: list[tuple[str, Dependency]] = []
    for sub in dependant.dependencies:
        if (sub.name is None or sub.call is None or sub.dependencies or sub.body_params
                or sub.path_params or sub.query_params or sub.header_params
                or sub.cookie_params or sub.request_param_name is None
                or len(inspect.signature(sub.call).parameters) != 1
                or not inspect.iscoroutinefunction(sub.call)):
            return None
        deps.append((sub.name, sub.call))
    return body[0].name, model, deps


def _content_type(scope: Scope) -> bytes | None:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bytes(value).lower()
    return None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """`receive` that hands over the messages already read, then reads on."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
