"""Helpers shared by the NLU tier tests (no tests here).

    nlu_app(make_settings, pg_url, emulator, model, persona="vllm", **settings)
        the whole app (lifespan running) with the NLU tier pointed at the real emulator
        process, on the emptied test database; yields an httpx client with `.services`
    decide_body(**fields)          a valid `POST /api/nlu/decide` body (Chinese node)
    decide(client, **fields)       post it with the service token; (response, elapsed_s)
    answer(intent, **slots)        a model reply's content: one decision JSON object
    TcpProxy                       a TCP proxy in this event loop that can be cut and restored
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import orjson

from callout_server.config.settings import Settings
from tests.fixtures.app import running_app
from tests.fixtures.database import SERVICE_HEADERS, reset_tables

DECIDE = "/api/nlu/decide"


def decide_body(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "call_id": "c-20261129-0001",
        "node_id": "confirm_time",
        "utterance": "明天下午三点以后都可以",
        "context": [{"role": "assistant", "content": "请问您什么时候方便接听回访？"}],
        "intents": [{"name": "agree", "description": "客户同意并给出时间"},
                    {"name": "refuse", "description": "客户拒绝"}],
        "slots": [{"name": "time", "description": "客户方便的时间", "type": "string"}],
    }
    body.update(fields)
    return body


def answer(intent: str | None, confidence: Any = 0.9, **slots: Any) -> str:
    return orjson.dumps({"intent": intent, "confidence": confidence, "slots": slots}).decode()


async def decide(client: httpx.AsyncClient, **fields: Any) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    r = await client.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body(**fields))
    return r, time.perf_counter() - started


@contextlib.asynccontextmanager
async def nlu_app(make_settings: Callable[..., Settings], pg_url: str, emulator: Any,
                  model: str, persona: str = "vllm", *, base_url: str | None = None,
                  **settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    await reset_tables(pg_url)
    async with running_app(make_settings(**{
        "llm.nlu.base_url": base_url or emulator.base_url(persona), "llm.nlu.model": model,
        # The background generation poll stays out of the way of query counts and timings.
        "redis.poll_interval_s": 3600, **settings})) as client:
        yield client


