"""Pools end to end: the real app on PostgreSQL, configurations saved through the admin API,
the emulator playing healthy, dead, slow and failing replicas; what a dialer worker gets, what
ops read (one record per call, `GET /api/admin/upstreams`, test connection)."""

from __future__ import annotations

import socket
from typing import Any

from callout_server.llm import Endpoint, LLMConfig
from callout_server.upstream import Route
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body
from tests.support.chat import collect, make_service, names, new_session, sentences, turn
from tests.support.chat import the_end as end_of
from tests.support.nlu import answer, decide, nlu_app
from tests.test_nlu_decide import records

CONFIGS = "/api/admin/llm-configs"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _save(client: Any, **fields: Any) -> dict[str, Any]:
    r = await client.post(CONFIGS, headers=ADMIN_HEADERS, json=llm_config_body(**fields))
    assert r.status_code == 201, r.text
    return dict(r.json())


async def test_nlu_pool_with_dead_and_slow_replicas_answers_every_call(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    # The oldest matching script wins: the slow replica's own first, then the others'.
    await emulator.script_replica(model, "slow", {"content": answer("agree"), "ttft_ms": 2000})
    await emulator.script_replica(model, None, {"content": answer("agree", time="明天")})
    dead = f"http://127.0.0.1:{free_port()}/v1"
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        pool = await _save(client, model=model, base_url=emulator.replica_url("ok"),
                           endpoints=[{"base_url": dead}, {"base_url": emulator.replica_url("slow")}],
                           hedge_after_ms=100, is_active=True)
        for _ in range(20):
            r, elapsed = await decide(client, fallback_intent="refuse", deadline_ms=1500)
            assert r.status_code == 200 and r.json()["fallback"] is False, r.text
            assert elapsed < 1.0  # a hedge or the balancer, never the 2 s replica
        recs = await records(client)
        assert len(recs) == 20 and {x["code"] for x in recs} == {"ok"}
        assert {x["config_id"] for x in recs} == {pool["id"]}
        assert {x["endpoint"] for x in recs} == {emulator.replica_url("ok")}
        assert all(x["attempts"] >= 1 for x in recs) and max(x["attempts"] for x in recs) >= 2

        r = await client.get("/api/admin/upstreams", headers=ADMIN_HEADERS)
        assert r.status_code == 200
        items = {i["base_url"]: i for i in r.json()["items"]}
        assert items[dead]["state"] in ("cooling_down", "probing")
        assert items[dead]["last_error"]["code"] == "connect_error"
        assert items[dead]["config_id"] == pool["id"] and items[dead]["role"] == "active"
        assert items[emulator.replica_url("ok")]["state"] == "healthy"
        assert items[emulator.replica_url("ok")]["latency_ms"] is not None
        assert (await client.get("/api/admin/upstreams")).status_code == 401


async def test_every_replica_down_is_answered_by_the_fallback(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    backup = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(backup, None, {"content": answer("refuse")})
    await emulator.script_replica(model, None, {"status": 503})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        fb = await _save(client, name="backup", model=backup, base_url=emulator.replica_url("f"))
        pool = await _save(client, model=model, base_url=emulator.replica_url("a"),
                           endpoints=[{"base_url": f"http://127.0.0.1:{free_port()}/v1"}],
                           fallback_ids=[fb["id"]], is_active=True)
        for _ in range(10):
            r, _ = await decide(client, deadline_ms=1500)
            assert r.status_code == 200 and r.json()["intent"] == "refuse", r.text
            assert r.json()["model"] == backup
        recs = await records(client)
        assert {x["config_id"] for x in recs} == {fb["id"]}  # the configuration that answered
        assert {x["endpoint"] for x in recs} == {emulator.replica_url("f")}
        assert recs[-1]["attempts"] >= 2  # the first call tried the pool first
        items = (await client.get("/api/admin/upstreams", headers=ADMIN_HEADERS)).json()["items"]
        roles = {(i["config_id"], i["role"]) for i in items}
        assert (pool["id"], "active") in roles and (fb["id"], "fallback") in roles


async def test_test_connection_tests_every_endpoint(make_settings: Any, pg_url: str,
                                                     emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    dead = f"http://127.0.0.1:{free_port()}/v1"
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        cfg = await _save(client, model=model, base_url=emulator.replica_url("a"),
                          endpoints=[{"base_url": emulator.replica_url("b")}, {"base_url": dead}])
        r = await client.post(f"{CONFIGS}/{cfg['id']}/test", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["ok"] is False  # one endpoint of three is down
        assert [e["base_url"] for e in got["endpoints"]] == [
            emulator.replica_url("a"), emulator.replica_url("b"), dead]
        assert [e["ok"] for e in got["endpoints"]] == [True, True, False]
        assert got["endpoints"][2]["diagnostic"]["code"] == "connect_error"
        assert got["latency_ms"] is not None and got["model"] == model
    replicas = {r["replica"] for r in await emulator.requests(model)}
    assert replicas == {"a", "b"}


async def test_chat_turn_whose_first_endpoint_answers_503_completes_elsewhere(
        emulator: Any) -> None:
    model = emulator.unique_model("chatm")
    backup = emulator.unique_model("chatm")
    await emulator.script_replica(model, None, {"status": 503})
    await emulator.script_replica(backup, None, {"content": "您好，我是客服小王。请问您现在方便吗？"})
    h = await make_service(emulator, model)
    primary = LLMConfig(tier="chat", name="p", base_url=emulator.replica_url("bad"), model=model,
                        id=1, max_tokens=200)
    fallback = LLMConfig(tier="chat", name="f", base_url=emulator.replica_url("good"),
                         model=backup, id=2, max_tokens=200)
    h.cfg["cfg"] = Route(primary, (fallback,))
    try:
        new_session(h)
        events = await collect(turn(h, "t1", "喂"))
        assert names(events).count("end") == 1 and end_of(events)["reason"] == "completed"
        assert "".join(sentences(events)) == "您好，我是客服小王。请问您现在方便吗？"
        (rec,) = h.recorder.records
        assert (rec.code, rec.config_id, rec.model) == ("ok", 2, backup)
        assert rec.endpoint == emulator.replica_url("good") and rec.attempts == 2
    finally:
        await h.close()


async def test_chat_turn_over_replicas_fails_over_to_the_other_replica(emulator: Any) -> None:
    model = emulator.unique_model("chatm")
    await emulator.script_replica(model, "bad", {"status": 503})
    await emulator.script_replica(model, "good", {"content": "好的。"})
    h = await make_service(emulator, model)
    # The failing replica weighs most: the balancer sends the first turn there.
    h.cfg["cfg"] = LLMConfig(tier="chat", name="p", base_url=emulator.replica_url("good"),
                             model=model, id=1, max_tokens=200,
                             endpoints=(Endpoint(emulator.replica_url("bad"), weight=1000),))
    try:
        new_session(h)
        events = await collect(turn(h, "t1", "喂"))
        assert names(events).count("end") == 1 and end_of(events)["reason"] == "completed"
        assert sentences(events) == ["好的。"]
        assert h.recorder.records[0].attempts == 2
    finally:
        await h.close()


async def test_script_generation_fails_over_to_a_replica_streamed_or_not(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    from tests.support.scripts import (
        SCRIPT,
        end_of,
        generate,
        script_app,
        script_records,
        stream_events,
        streamed_text,
    )

    model = emulator.unique_model("deepseek-chat")
    await emulator.script_replica(model, "down", {"status": 503})
    await emulator.script_replica(model, "up", {"content": SCRIPT})
    down, up = emulator.replica_url("down", "deepseek"), emulator.replica_url("up", "deepseek")
    async with script_app(make_settings, pg_url, emulator, model, base_url=down,
                          endpoints=[{"base_url": up}]) as client:
        r = await generate(client)
        assert r.status_code == 200 and r.json()["script"] == SCRIPT, r.text
        events = await stream_events(client)
        assert end_of(events)["reason"] == "completed" and streamed_text(events) == SCRIPT
        recs = await script_records(client)
        assert {x["code"] for x in recs} == {"ok"}
        assert {x["endpoint"] for x in recs} == {up}


async def test_an_endpoints_last_error_reads_in_the_readers_language(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    """The failing call was a Chinese caller's; ops reading in English get English (and
    the other way round): the endpoint keeps the diagnostic, the view words it."""
    model = emulator.unique_model("qwen2.5-7b")
    dead = f"http://127.0.0.1:{free_port()}/v1"
    async with nlu_app(make_settings, pg_url, emulator, model, base_url=dead) as client:
        r, _ = await decide(client, fallback_intent="refuse")
        assert r.status_code == 200 and r.json()["fallback"] is True, r.text

        async def last_error(lang: str) -> dict[str, Any]:
            got = await client.get("/api/admin/upstreams",
                                   headers={**ADMIN_HEADERS, "Accept-Language": lang})
            (item,) = [i for i in got.json()["items"] if i["base_url"] == dead]
            return dict(item["last_error"])

        en, zh = await last_error("en"), await last_error("zh")
        assert en["code"] == zh["code"] == "connect_error"
        assert en["message"].startswith("Could not connect to the inference server"), en
        assert en["advice"].startswith("Check base_url"), en
        assert zh["message"].startswith("无法连接推理服务"), zh
        assert zh["advice"].startswith("检查 base_url"), zh
