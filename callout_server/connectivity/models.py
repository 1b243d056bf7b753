"""`ModelLister`: the models an OpenAI-compatible endpoint serves (`GET <base_url>/models`),
for the configuration form's "fetch models".

The request is made by the server, so the key never reaches the browser, and it is made
narrowly, since a form may name any URL: one GET of exactly `<base_url>/models` (the
configured base URL, nothing else: no redirect followed, no other path), bounded in time
and size, answered with model ids only, never the upstream's own body, so the route cannot
be used to read an internal page. A stored key goes only to the origin it was saved for
(`service.resolve_key`).
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import orjson

from callout_server.config.schemas import ModelList, ModelsRequest
from callout_server.config.service import ConfigService
from callout_server.connectivity.service import resolve_key
from callout_server.i18n import current
from callout_server.llm import Diagnostic

TIMEOUT_S = 10.0
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_MODELS = 1000
MAX_ID_CHARS = 256


class ModelLister:
    def __init__(self, configs: ConfigService) -> None:
        self._configs = configs

    async def models(self, body: ModelsRequest) -> ModelList:
        key = await resolve_key(self._configs, body.config_id, body.api_key, [body.base_url])
        headers = {"accept": "application/json"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        started = time.monotonic()
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT_S, follow_redirects=False,
                                         trust_env=False) as client:
                async with client.stream("GET", f"{body.base_url}/models", headers=headers) as r:
                    if r.status_code != 200:
                        return _failed("upstream_error", started, status=r.status_code)
                    raw = bytearray()
                    async for chunk in r.aiter_bytes():
                        raw += chunk
                        if len(raw) > MAX_BODY_BYTES:
                            return _not_a_list(started)
        except httpx.TimeoutException:
            return _failed("timeout", started)
        except httpx.HTTPError as exc:
            code = "connect_error" if isinstance(exc, httpx.ConnectError | httpx.UnsupportedProtocol) \
                else "upstream_error"
            return _failed(code, started)
        ids = model_ids(raw)
        if ids is None:
            return _not_a_list(started)
        return ModelList(ok=True, models=ids, latency_ms=_ms(started))


def model_ids(raw: bytes | bytearray) -> list[str] | None:
    """The ids of an OpenAI-style model list (`{"data": [{"id": ...}]}`), sorted; None when
    the body is no such list."""
    try:
        body: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    ids = {m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)
           and 0 < len(m["id"]) <= MAX_ID_CHARS}
    return sorted(ids)[:MAX_MODELS]


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _failed(code: str, started: float, *, status: int | None = None) -> ModelList:
    locale = current()
    return ModelList(ok=False, latency_ms=_ms(started),
                     diagnostic=Diagnostic.make(code, locale, status=status).to_dict(locale))


def _not_a_list(started: float) -> ModelList:
    return ModelList(ok=False, latency_ms=_ms(started), reason="not_a_model_list")
