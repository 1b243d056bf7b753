"""Script generation when it goes wrong: truncation diagnosed (never handed over as complete),
upstream errors, timeouts, a client hang-up stopping the upstream generation, and a database
gone while a script streams."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest

from callout_server.i18n import text
from tests.fixtures.database import SERVICE_HEADERS
from tests.fixtures.emulator import EmulatorHandle
from tests.fixtures.tcp_proxy import TcpProxy
from tests.support.chat import chunks_of, read_sse, wait_disconnect
from tests.support.scripts import (
    BRIEF,
    SCRIPT,
    MakeSettings,
    draft_count,
    end_of,
    generate,
    get_draft,
    script_app,
    script_records,
    stream_events,
    streamed_text,
)

PARTIAL = SCRIPT[:20]


async def test_cut_at_max_tokens_is_saved_as_truncated(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": PARTIAL, "finish_reason": "length"})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await generate(c)
        assert r.status_code == 200, r.text  # the text is there: handed over, flagged
        body = r.json()
        assert body["script"] == PARTIAL and body["complete"] is False
        d = body["diagnostic"]
        assert (d["code"], d["finish_reason"], d["max_tokens"]) == ("truncated", "length", 3000)
        assert d["id"] and d["message"] and d["advice"]
        assert (await get_draft(c, body["draft_id"]))["status"] == "truncated"

        events = await stream_events(c)
        end = end_of(events)
        assert streamed_text(events) == PARTIAL
        assert end["reason"] == "truncated"
        assert end["error"]["code"] == "truncated" and end["diagnostic"]["code"] == "truncated"
        draft = await get_draft(c, end["draft_id"])
        assert draft["status"] == "truncated" and draft["script"] == PARTIAL

        records = await script_records(c)
        assert [r["code"] for r in records] == ["truncated", "truncated"]
        assert {r["id"] for r in records} == {d["id"], end["diagnostic"]["id"]}


async def test_reasoning_eating_the_budget_is_502_and_no_draft(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-v4-flash")  # thinks by default
    await emulator.script(model, {"content": SCRIPT, "reasoning_tokens": 500})
    async with script_app(make_settings, pg_url, emulator, model, max_tokens=100) as c:
        r = await generate(c)
        assert r.status_code == 502, r.text
        err = r.json()["error"]
        assert err["code"] == "truncated_by_reasoning" and err["message"]
        d = err["diagnostic"]
        assert (d["code"], d["finish_reason"], d["max_tokens"]) == (
            "truncated_by_reasoning", "length", 100)
        assert d["id"]

        events = await stream_events(c)
        end = end_of(events)
        assert streamed_text(events) == ""
        assert end["reason"] == "error" and end["draft_id"] is None
        assert end["error"]["code"] == "truncated_by_reasoning"
        assert end["diagnostic"]["max_tokens"] == 100
        assert await draft_count(c) == 0
        records = await script_records(c)
        assert [r["code"] for r in records] == ["truncated_by_reasoning"] * 2
        # The call log keeps what the reasoning ate, streamed or not.
        assert [(r["completion_tokens"], r["max_tokens"]) for r in records] == [(100, 100)] * 2


async def test_upstream_error_is_502_with_the_diagnostic(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"status": 503})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await generate(c)
        assert r.status_code == 502, r.text
        err = r.json()["error"]
        assert err["code"] == "upstream_error" and err["diagnostic"]["status"] == 503

        end = end_of(await stream_events(c))
        assert end["reason"] == "error" and end["error"]["code"] == "upstream_error"
        assert end["diagnostic"]["status"] == 503 and end["draft_id"] is None
        assert await draft_count(c) == 0
        records = await script_records(c)
        assert [(r["code"], r["status"]) for r in records] == [("upstream_error", 503)] * 2


async def test_connection_dropped_mid_stream_ends_with_error(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"chunks": chunks_of(SCRIPT, 4), "disconnect_after": 4})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        events = await stream_events(c)
        end = end_of(events)
        assert streamed_text(events)  # some text came before the drop
        assert end["reason"] == "error" and end["error"]["code"] == "upstream_error"
        assert await draft_count(c) == 0  # a broken stream is not a draft


async def test_timeout_is_504_and_end_reason_timeout(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"hang": True})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await generate(c, overrides={"timeout_s": 0.5})
        assert r.status_code == 504, r.text
        err = r.json()["error"]
        assert err["code"] == "timeout" and err["diagnostic"]["code"] == "timeout"

        end = end_of(await stream_events(c, overrides={"timeout_s": 0.5}))
        assert end["reason"] == "timeout" and end["error"]["code"] == "timeout"
        assert await draft_count(c) == 0
        assert [r["code"] for r in await script_records(c)] == ["timeout", "timeout"]


async def test_stream_stalling_after_some_text_times_out(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"chunks": chunks_of(SCRIPT, 4), "hang": 4})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        events = await stream_events(c, overrides={"timeout_s": 1.0})
        end = end_of(events)
        assert streamed_text(events) and end["reason"] == "timeout"


async def test_client_disconnect_stops_the_upstream_generation(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    # About 12 s of generation if nobody stops it.
    await emulator.script(model, {"chunks": chunks_of(SCRIPT * 10, 2), "token_delay_ms": 50})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        async with c.stream("POST", "/api/scripts/generate", headers=SERVICE_HEADERS,
                            json={"brief": BRIEF, "stream": True}) as r:
            async for ev in read_sse(r):
                if ev.name == "text_delta":
                    break  # hang up on the first delta
        sent = await wait_disconnect(emulator, model)
        assert sent["stream"] is True and sent["disconnected"] is True
        assert sent["chunks_sent"] < 50  # stopped early, not run to the end
        await asyncio.sleep(0.2)  # the tier's clean-up runs after the disconnect
        assert await draft_count(c) == 0  # nothing half-written kept as a draft
        assert [r["code"] for r in await script_records(c)] == ["cancelled"]


async def test_a_draft_the_database_cannot_store_still_ends_the_stream(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    """The database goes away while the script streams (cut at the first delta, through a
    proxy): the caller still gets the whole script, then `usage` and the one `end`, which
    says the draft could not be stored."""
    pg = urlsplit(pg_url)
    proxy = TcpProxy(pg.hostname or "127.0.0.1", pg.port or 5432)
    await proxy.start()
    model = emulator.unique_model("deepseek-chat")
    # The rest of the script takes ~0.5 s after the first delta: the cut comes long before
    # the draft is stored.
    await emulator.script(model, {"chunks": chunks_of(SCRIPT, 8), "token_delay_ms": 80})
    database = {"database.url": proxy.url_for(pg_url), "database.connect_timeout_s": 1.0}
    try:
        async with script_app(make_settings, pg_url, emulator, model,
                              app_settings=database) as c:
            events = []
            async with c.stream("POST", "/api/scripts/generate", headers=SERVICE_HEADERS,
                                json={"brief": BRIEF, "stream": True}) as r:
                assert r.status_code == 200
                async for ev in read_sse(r):
                    if not events:
                        proxy.cut(refuse=True)
                    events.append(ev)
            end = end_of(events)
            assert streamed_text(events) == SCRIPT
            assert end["reason"] == "completed" and end["error"] is None
            assert end["draft_id"] is None and end["draft_error"] == text("draft_not_saved", "zh")
            assert events[-2].data["completion_tokens"]  # `usage` came, with its counts

            proxy.restore()
            assert await draft_count(c) == 0
            assert [r["code"] for r in await script_records(c)] == ["ok"]
    finally:
        await proxy.stop()


async def test_a_fault_of_ours_mid_stream_still_ends_the_stream(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug in the script service (here: building the second text event raises) used to
    end the response without its `end`; the call log read `cancelled`."""
    from callout_server.tiers.script import service

    made: list[str] = []

    def flaky(kind: str, data: dict) -> service.StreamEvent:  # type: ignore[type-arg]
        made.append(kind)
        if kind == "text_delta" and made.count("text_delta") == 2:
            raise RuntimeError("a bug, quoting 13812345678")
        return StreamEvent(kind, data)

    StreamEvent = service.StreamEvent
    monkeypatch.setattr(service, "StreamEvent", flaky)
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"chunks": chunks_of(SCRIPT, 4)})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        events = await stream_events(c)
        end = end_of(events)
        assert end["reason"] == "error" and end["error"]["code"] == "internal_error"
        assert "13812345678" not in str(end)
        records = await script_records(c)
        assert records[0]["code"] == "internal_error"  # newest first
        assert await draft_count(c) == 0
