"""Helpers shared by the script tier tests (no tests here).

    script_app(make_settings, pg_url, emulator, model, ...)
        the whole app (real lifespan, PostgreSQL, recorder) on tables emptied first, the
        script tier pointed at the emulator; yields an httpx client whose transport streams
        the body as it is sent and tells the app when the client hangs up
    generate(c, **body) / stream_events(c, **body)
        one non-streamed call (the response) / one streamed call (its parsed events)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

from callout_server.config.settings import Settings
from tests.fixtures.app import running_app
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, reset_tables
from tests.fixtures.emulator import EmulatorHandle
from tests.support.chat import Event, read_sse

BRIEF = "回访上周购买净水器的客户，确认安装满意度，有问题转人工"
MakeSettings = Callable[..., Settings]  # the `make_settings` fixture
SCRIPT = "【开场白】\n您好，我是清源净水的回访专员小李。\n打扰您一分钟，想了解净水器安装情况。"


@asynccontextmanager
async def script_app(make_settings: MakeSettings, pg_url: str, emulator: EmulatorHandle,
                     model: str, *, persona: str = "deepseek",
                     app_settings: dict[str, Any] | None = None, **settings: Any
                     ) -> AsyncIterator[httpx.AsyncClient]:
    """The app with its script tier on `emulator`'s `persona`; `settings` are dotted
    `llm.script.*` keys without the prefix (`max_tokens=100`, `enable_thinking=True`),
    `app_settings` any other dotted keys (`{"database.url": ...}`)."""
    await reset_tables(pg_url)
    # The emulator's personas all live on 127.0.0.1: name the vendor so the dialect (and
    # with it the thinking switch) is the one the persona imitates, as with a real host.
    vendor = "vllm" if persona == "vllm-noparser" else persona
    overrides = {"llm.script.base_url": emulator.base_url(persona), "llm.script.model": model,
                 "llm.script.vendor": vendor, "llm.script.timeout_s": 20.0}
    overrides |= {f"llm.script.{k}": v for k, v in settings.items()} | (app_settings or {})
    async with running_app(make_settings(**overrides), streaming=True) as client:
        yield client


async def generate(c: httpx.AsyncClient, **body: Any) -> httpx.Response:
    return await c.post("/api/scripts/generate", headers=SERVICE_HEADERS,
                        json={"brief": BRIEF, **body, "stream": False})


async def stream_events(c: httpx.AsyncClient, **body: Any) -> list[Event]:
    async with c.stream("POST", "/api/scripts/generate", headers=SERVICE_HEADERS,
                        json={"brief": BRIEF, **body, "stream": True}) as r:
        assert r.status_code == 200, await r.aread()
        assert r.headers["content-type"].startswith("text/event-stream")
        return [ev async for ev in read_sse(r)]


def end_of(events: list[Event]) -> dict[str, Any]:
    """The one `end` event, checked to be the last; `usage` comes right before it."""
    names = [e.name for e in events]
    assert names.count("end") == 1 and names[-1] == "end", names
    assert names[-2] == "usage", names
    assert set(names[:-2]) <= {"text_delta"}, names
    for e in events:
        assert e.data["event"] == e.name  # the name is also inside the JSON
    return events[-1].data


def streamed_text(events: list[Event]) -> str:
    return "".join(e.data["text"] for e in events if e.name == "text_delta")


async def get_draft(c: httpx.AsyncClient, draft_id: int) -> dict[str, Any]:
    r = await c.get(f"/api/admin/scripts/{draft_id}", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


async def draft_count(c: httpx.AsyncClient) -> int:
    r = await c.get("/api/admin/scripts", headers=ADMIN_HEADERS, params={"limit": 200})
    return len(r.json()["items"])


async def script_records(c: httpx.AsyncClient) -> list[dict[str, Any]]:
    """The call log's script-tier records, newest first (after flushing the recorder)."""
    await c.services.recorder.flush()  # type: ignore[attr-defined]
    r = await c.get("/api/admin/diagnostics", headers=ADMIN_HEADERS, params={"tier": "script"})
    assert r.status_code == 200, r.text
    return r.json()["items"]  # type: ignore[no-any-return]
