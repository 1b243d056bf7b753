"""Shadow evaluation end to end: the whole app on PostgreSQL, live traffic and the candidate
both on the real emulator process.

Live decisions are made one after another, so the live model's scripted answers land on
known calls; the candidate answers every call the same way, so which recorded calls it
disagrees with is known exactly, and the report must say exactly that.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from callout_server.calllog.models import NluCallInput
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.evaluation.models import Evaluation, EvaluationResult
from tests.fixtures.app import running_app
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body
from tests.support.nlu import answer, decide, nlu_app

EVALS = "/api/admin/evaluations"


async def eventually(check: Callable[[], Awaitable[Any]], timeout_s: float = 30.0) -> Any:
    """Poll `check` until it returns something truthy (generous bound for a busy machine)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


async def candidate(client: httpx.AsyncClient, emulator: Any, model: str, **fields: Any) -> int:
    r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
        model=model, base_url=emulator.base_url("vllm"), **fields))
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


async def start(client: httpx.AsyncClient, **body: Any) -> httpx.Response:
    return await client.post(EVALS, headers=ADMIN_HEADERS, json=body)


async def get(client: httpx.AsyncClient, evaluation_id: int, **params: Any) -> dict[str, Any]:
    r = await client.get(f"{EVALS}/{evaluation_id}", headers=ADMIN_HEADERS, params=params)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def finished(client: httpx.AsyncClient, evaluation_id: int,
                   timeout_s: float = 60.0) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        body = await get(client, evaluation_id)
        return body if body["status"] != "running" else None
    return dict(await eventually(check, timeout_s))


async def live_traffic(client: httpx.AsyncClient, emulator: Any, live: str) -> None:
    """Ten recorded decisions on two nodes; the candidate (always agree, time 明天) will
    disagree on exactly c7, c8 (intent and slot), c9 (slot only) and c10 (a fallback)."""
    agree = {"content": answer("agree", 0.9, time="明天")}
    for reply in [agree] * 6 + [{"content": answer("refuse", 0.8, time=None)}] * 2 + [
            {"content": answer("agree", 0.9, time="后天")}, {"status": 400}]:
        await emulator.script(live, reply, times=1)
    for i in range(1, 11):
        r, _ = await decide(client, call_id=f"c{i}", node_id="n1" if i <= 5 else "n2",
                            fallback_intent="refuse")
        assert r.status_code == 200, r.text
    await client.services.recorder.flush()  # type: ignore[attr-defined]


@pytest.fixture
def app_for(make_settings, pg_url, emulator):
    def build(model: str, **settings: Any):
        return nlu_app(make_settings, pg_url, emulator, model, **settings)
    return build


async def test_a_candidate_disagreeing_on_a_known_subset_is_reported_exactly(
        app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(cand, {"content": answer("agree", 0.7, time="明天"), "ttft_ms": 50})
    async with app_for(live) as client:
        await live_traffic(client, emulator, live)
        cand_id = await candidate(client, emulator, cand)
        generation = (await client.get("/api/admin/llm-active", headers=ADMIN_HEADERS)).json()
        r = await start(client, candidate_id=cand_id, limit=500)
        assert r.status_code == 202, r.text
        assert r.json() == {"id": r.json()["id"], "status": "running"}
        body = await finished(client, r.json()["id"])

        assert body["status"] == "done" and body["reason"] is None
        assert body["progress"] == {"done": 10, "total": 10}
        assert body["candidate_id"] == cand_id and body["created_by"] == "admin-token"
        assert body["candidate"]["model"] == cand
        s = body["summary"]
        assert (s["calls"], s["agreeing"], s["skipped"]) == (10, 6, 0)
        assert (s["intent_agreement"], s["slot_agreement"]) == (0.7, 0.6)
        assert s["candidate"]["codes"] == {"ok": 10} and s["candidate"]["fallbacks"] == 0
        assert s["recorded"]["codes"] == {"ok": 9, "upstream_error": 1}
        assert s["recorded"]["fallbacks"] == 1
        assert s["candidate"]["p50_ms"] >= 50 and s["candidate"]["p95_ms"] >= s["candidate"]["p50_ms"]
        assert s["recorded"]["p50_ms"] is not None
        assert s["candidate"]["tokens"]["prompt_tokens"] > 0
        nodes = {n["node_id"]: n for n in s["by_node"]}
        assert (nodes["n1"]["intent_agreement"], nodes["n1"]["slot_agreement"]) == (1.0, 1.0)
        assert (nodes["n2"]["intent_agreement"], nodes["n2"]["slot_agreement"]) == (0.4, 0.2)
        assert sum(s["latency_histogram"]["candidate"]) == 10

        dis = {d["call_id"]: d for d in body["disagreements"]}
        assert set(dis) == {"c7", "c8", "c9", "c10"}
        assert dis["c7"]["utterance"] == "明天下午三点以后都可以" and dis["c7"]["node_id"] == "n2"
        assert dis["c7"]["recorded"] | {"latency_ms": 0} == {
            "intent": "refuse", "global_intent": None, "slots": {"time": None},
            "fallback": False, "code": "ok", "latency_ms": 0}
        assert dis["c7"]["candidate"]["intent"] == "agree"
        assert dis["c7"]["candidate"]["slots"] == {"time": "明天"}
        assert dis["c7"]["candidate"]["code"] == "ok"
        assert (dis["c9"]["intent_agrees"], dis["c9"]["slots_agree"]) == (True, False)
        assert dis["c10"]["recorded"]["fallback"] is True
        assert dis["c10"]["recorded"]["code"] == "upstream_error"

        # paged, and filtered by node
        page = await get(client, body["id"], disagreements_limit=3)
        assert len(page["disagreements"]) == 3 and page["disagreements_next"]
        rest = (await client.get(f"{EVALS}/{body['id']}/disagreements", headers=ADMIN_HEADERS,
                                 params={"after": page["disagreements_next"]})).json()
        assert len(rest["items"]) == 1 and rest["next_after"] is None
        n1 = (await client.get(f"{EVALS}/{body['id']}/disagreements", headers=ADMIN_HEADERS,
                               params={"node_id": "n1"})).json()
        assert n1["items"] == []

        # the replays went through the live path: the same prompt, JSON mode, the node's deadline
        sent = await emulator.requests(cand)
        assert len(sent) == 10
        assert sent[0]["body"]["response_format"] == {"type": "json_object"}
        live_prompts = sorted(x["body"]["messages"][0]["content"] for x in await emulator.requests(live))
        assert sorted(x["body"]["messages"][0]["content"] for x in sent) == live_prompts

        # recorded as evaluation calls: never live traffic, never a change of configuration
        await client.services.recorder.flush()  # type: ignore[attr-defined]
        summary = (await client.get("/api/admin/diagnostics/summary", headers=ADMIN_HEADERS)).json()
        assert summary["tiers"]["nlu"]["count"] == 10
        replays = (await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS,
                                    params={"source": "evaluation"})).json()["items"]
        assert len(replays) == 10 and {x["model"] for x in replays} == {cand}
        assert {x["node_id"] for x in replays} == {"n1", "n2"}
        assert (await client.get("/api/admin/llm-active", headers=ADMIN_HEADERS)).json() == generation
        listed = (await client.get(EVALS, headers=ADMIN_HEADERS)).json()["items"]
        assert [x["id"] for x in listed] == [body["id"]] and listed[0]["status"] == "done"


async def test_filter_by_node_and_since_takes_the_most_recent(app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    async with app_for(live) as client:
        for i in range(6):
            r, _ = await decide(client, call_id=f"f{i}", node_id="a" if i % 2 else "b")
            assert r.status_code == 200
        services = client.services  # type: ignore[attr-defined]
        await services.recorder.flush()
        async with services.db.session() as s:  # f1 (node a) was two days ago
            await s.execute(update(NluCallInput).where(NluCallInput.call_id == "f1")
                            .values(at=utcnow() - timedelta(days=2)))
        cand_id = await candidate(client, emulator, cand)
        r = await start(client, candidate_id=cand_id, node_id="a", limit=1)
        body = await finished(client, r.json()["id"])
        assert body["progress"]["total"] == 1 and body["filter"]["node_id"] == "a"
        async with services.db.session() as s:
            [row] = (await s.scalars(select(EvaluationResult))).all()
        assert row.call_id == "f5"  # the most recent of node a
        since = (utcnow() - timedelta(days=1)).isoformat()
        r = await start(client, candidate_id=cand_id, node_id="a", since=since)
        body = await finished(client, r.json()["id"])
        assert body["progress"]["total"] == 2  # f3, f5: f1 is older than `since`
        # The start form offers the recorded nodes, busiest first.
        await decide(client, call_id="f6", node_id="a")
        await services.recorder.flush()
        nodes = await client.get(f"{EVALS}/nodes", headers=ADMIN_HEADERS)
        assert nodes.status_code == 200, nodes.text
        assert nodes.json() == {"items": [{"node_id": "a", "calls": 4}, {"node_id": "b", "calls": 3}]}


async def test_bad_input_is_refused_naming_the_field(app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    async with app_for(live) as client:
        chat_id = await candidate(client, emulator, cand, tier="chat")
        active_id = await candidate(client, emulator, cand, is_active=True)
        nlu_id = await candidate(client, emulator, cand)

        async def refused(body: dict[str, Any], code: str, field: str) -> None:
            r = await start(client, **body)
            assert r.status_code == 422, r.text
            err = r.json()["error"]
            assert err["code"] == code and field in err["message"], err
            if field and code != "validation_error":
                assert field in {f["field"] for f in err["fields"]}

        await refused({"candidate_id": chat_id}, "candidate_wrong_tier", "candidate_id")
        await refused({"candidate_id": active_id}, "candidate_is_active", "candidate_id")
        await refused({"candidate_id": 999_999}, "unknown_candidate", "candidate_id")
        await refused({"candidate_id": nlu_id}, "no_traffic", "")  # nothing recorded yet
        assert (await decide(client, node_id="n1"))[0].status_code == 200
        await client.services.recorder.flush()  # type: ignore[attr-defined]
        await refused({"candidate_id": nlu_id, "node_id": "other"}, "no_traffic", "node_id")
        await refused({"candidate_id": nlu_id, "limit": 5001}, "validation_error", "limit")
        await refused({"candidate_id": nlu_id, "limit": 0}, "validation_error", "limit")
        await refused({"candidate_id": "x"}, "validation_error", "candidate_id")
        await refused({"candidate_id": nlu_id, "extra": 1}, "validation_error", "extra")
        r = await client.get(f"{EVALS}/424242", headers=ADMIN_HEADERS)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        assert (await client.post(f"{EVALS}/424242/cancel", headers=ADMIN_HEADERS)).status_code == 404
        async with client.services.db.session() as s:  # type: ignore[attr-defined]
            assert (await s.scalars(select(Evaluation))).all() == []  # nothing half-written
        r = await client.get(EVALS)  # no credentials
        assert r.status_code == 401


async def test_cancel_closes_in_flight_calls_at_once_and_one_runs_per_worker(
        app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(cand, {"hang": True}, times=4)  # the first four: never answered
    async with app_for(live) as client:
        for i in range(12):
            assert (await decide(client, call_id=f"h{i}"))[0].status_code == 200
        await client.services.recorder.flush()  # type: ignore[attr-defined]
        cand_id = await candidate(client, emulator, cand)
        r = await start(client, candidate_id=cand_id)
        evaluation_id = r.json()["id"]

        async def in_flight() -> list[dict[str, Any]]:
            sent = await emulator.requests(cand)
            return sent if len(sent) >= 4 else []
        await eventually(in_flight)
        await asyncio.sleep(0.3)  # a fifth call would have been sent by now
        assert len(await emulator.requests(cand)) == 4  # [evaluation] concurrency

        second = await start(client, candidate_id=cand_id)
        assert second.status_code == 409
        assert second.json()["error"] | {"message": ""} == {
            "code": "evaluation_running", "message": "", "evaluation_id": evaluation_id}
        # Its candidate stays while it runs (it held a deleted configuration's key before).
        r = await client.delete(f"/api/admin/llm-configs/{cand_id}", headers=ADMIN_HEADERS)
        assert r.status_code == 409 and r.json()["error"]["code"] == "in_use", r.text
        assert r.json()["error"]["evaluation_id"] == evaluation_id

        started = time.monotonic()
        cancels = await asyncio.gather(*(client.post(f"{EVALS}/{evaluation_id}/cancel",
                                                     headers=ADMIN_HEADERS) for _ in range(3)))
        assert [c.status_code for c in cancels] == [204] * 3
        assert time.monotonic() - started < 3.0  # and one audit event for them, below
        body = await get(client, evaluation_id)
        assert body["status"] == "cancelled" and body["progress"] == {"done": 0, "total": 12}

        async def closed() -> bool:
            sent = await emulator.requests(cand)
            return all(x.get("disconnected") for x in sent)
        await eventually(closed, 10.0)
        # Who replayed customers' words, and who stopped it: in the audit trail.
        trail = (await client.get("/api/admin/audit", params={"action": "evaluation"},
                                  headers=ADMIN_HEADERS)).json()["items"]
        assert [(e["action"], e["target"]) for e in trail] == [
            ("evaluation.cancel", f"evaluation:{evaluation_id}"),
            ("evaluation.start", f"evaluation:{evaluation_id}")]
        assert trail[1]["detail"]["candidate_id"] == cand_id and trail[1]["detail"]["calls"] == 12
        assert trail[1]["via"] == "token"
        # cancelling again is no error; a new one may start now
        assert (await client.post(f"{EVALS}/{evaluation_id}/cancel",
                                  headers=ADMIN_HEADERS)).status_code == 204
        await emulator.script(cand, {"content": answer("agree", 0.9, time="明天")})
        r = await start(client, candidate_id=cand_id, limit=2)
        assert r.status_code == 202
        done = await finished(client, r.json()["id"])
        assert done["status"] == "done"
        r = await client.post(f"{EVALS}/{done['id']}/cancel", headers=ADMIN_HEADERS)
        assert r.status_code == 409 and r.json()["error"]["code"] == "evaluation_not_running"


async def test_a_cancel_asked_on_another_worker_reaches_the_run(app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(cand, {"hang": True})
    async with app_for(live) as client:
        for i in range(3):
            assert (await decide(client, call_id=f"x{i}"))[0].status_code == 200
        services = client.services  # type: ignore[attr-defined]
        await services.recorder.flush()
        r = await start(client, candidate_id=await candidate(client, emulator, cand))
        evaluation_id = r.json()["id"]
        async with services.db.session() as s:  # what POST .../cancel does on another worker
            await s.execute(update(Evaluation).where(Evaluation.id == evaluation_id)
                            .values(cancel_requested=True))

        async def cancelled() -> bool:
            return (await get(client, evaluation_id))["status"] == "cancelled"
        await eventually(cancelled, 10.0)


async def test_a_shutdown_ends_the_running_evaluation_failed_with_the_reason(
        app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(cand, {"hang": True})
    async with app_for(live) as client:
        services = client.services  # type: ignore[attr-defined]
        for i in range(3):
            assert (await decide(client, call_id=f"r{i}"))[0].status_code == 200
        await services.recorder.flush()
        cand_id = await candidate(client, emulator, cand)
        evaluation_id = (await start(client, candidate_id=cand_id)).json()["id"]
        await eventually(lambda: emulator.requests(cand))
        started = time.monotonic()
    assert time.monotonic() - started < 10.0  # shutdown is not held up by the hung calls
    async with services.db.session() as s:
        row = await s.get(Evaluation, evaluation_id)
    assert row is not None and row.status == "failed"
    assert row.reason == "interrupted: the worker running it shut down" and row.finished_at


async def test_what_a_restart_or_a_dead_worker_left_running_is_marked_failed(
        make_settings, pg_url) -> None:
    from tests.fixtures.database import reset_tables

    await reset_tables(pg_url)
    settings = make_settings(**{"evaluation.stale_after_s": 1.0,
                                "redis.poll_interval_s": 3600})
    me = f"{socket.gethostname()}:{os.getpid()}"
    db = Database(pg_url)
    now = utcnow()
    try:
        async with db.session() as s:
            # this worker's previous life (same host:pid), a silent worker, a live one
            for owner, beat in ((me, now), ("gone:1", now - timedelta(minutes=5)),
                                ("alive:2", now + timedelta(hours=1))):
                s.add(Evaluation(status="running", candidate_id=1, limit=1, total=1, done=0,
                                 owner=owner, heartbeat_at=beat, created_at=now))

        async def states() -> dict[str, tuple[str, str | None]]:
            async with db.session() as s:
                return {r.owner: (r.status, r.reason)
                        for r in (await s.scalars(select(Evaluation))).all()}

        async with running_app(settings):
            after_start = await states()  # marked during start-up, before any request
            assert after_start[me] == ("failed", "interrupted: the worker running it restarted or stopped")
            assert after_start["gone:1"][0] == "failed"
            assert after_start["alive:2"] == ("running", None)
            async with db.session() as s:  # the live worker goes silent: the sweeper notices
                await s.execute(update(Evaluation).where(Evaluation.owner == "alive:2")
                                .values(heartbeat_at=utcnow()))

            async def swept() -> bool:
                return (await states())["alive:2"][0] == "failed"
            await eventually(swept, 15.0)
    finally:
        await db.dispose()


async def test_results_quoting_customers_are_purged_with_the_inputs_the_summary_stays(
        app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    async with app_for(live) as client:
        services = client.services  # type: ignore[attr-defined]
        for i in range(3):
            assert (await decide(client, call_id=f"p{i}"))[0].status_code == 200
        await services.recorder.flush()
        r = await start(client, candidate_id=await candidate(client, emulator, cand))
        body = await finished(client, r.json()["id"])
        async with services.db.session() as s:
            await s.execute(update(EvaluationResult).where(EvaluationResult.call_id == "p0")
                            .values(at=utcnow() - timedelta(days=8)))
        assert await services.evaluations.purge() == 1
        async with services.db.session() as s:
            left = (await s.scalars(select(EvaluationResult.call_id))).all()
        assert sorted(left) == ["p1", "p2"]
        assert (await get(client, body["id"]))["summary"] == body["summary"]


async def test_the_embedded_sqlite_default_evaluates_too(make_settings, emulator, tmp_path) -> None:
    from tests.fixtures.database import SERVICE_HEADERS

    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    async with running_app(make_settings(**{
        "database.url": "", "database.sqlite_path": str(tmp_path / "callout.db"), "redis.url": "",
        "llm.nlu.base_url": emulator.base_url("vllm"), "llm.nlu.model": live})) as client:
        app = client.app  # type: ignore[attr-defined]
        for i in range(3):
            r = await client.post("/api/nlu/decide", headers=SERVICE_HEADERS, json={
                "call_id": f"s{i}", "utterance": "好的可以", "intents": [{"name": "agree"},
                                                                       {"name": "refuse"}]})
            assert r.status_code == 200, r.text
        await app.state.services.recorder.flush()
        r = await start(client, candidate_id=await candidate(client, emulator, cand))
        assert r.status_code == 202, r.text
        body = await finished(client, r.json()["id"])
    assert body["status"] == "done" and body["summary"]["calls"] == 3


async def test_a_candidate_too_slow_for_the_nodes_deadline_falls_back_and_disagrees(
        app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(live, {"content": answer("refuse", 0.9, time=None)})
    await emulator.script(cand, {"content": answer("refuse", 0.9, time=None), "ttft_ms": 1500})
    async with app_for(live) as client:
        for i in range(3):  # the recorded deadline (300 ms) is replayed with the call
            r, _ = await decide(client, call_id=f"d{i}", deadline_ms=300, fallback_intent="refuse")
            assert r.json()["fallback"] is False
        await client.services.recorder.flush()  # type: ignore[attr-defined]
        r = await start(client, candidate_id=await candidate(client, emulator, cand))
        body = await finished(client, r.json()["id"])
    s = body["summary"]
    assert s["candidate"]["codes"] == {"deadline_exceeded": 3} and s["candidate"]["fallbacks"] == 3
    assert s["recorded"]["codes"] == {"ok": 3} and s["recorded"]["fallbacks"] == 0
    # the fallback names the recorded intent, but it is no decision: all three disagree
    assert (s["intent_agreement"], s["agreeing"]) == (0.0, 0)
    assert all(d["candidate"]["code"] == "deadline_exceeded" for d in body["disagreements"])
    assert s["candidate"]["p95_ms"] < 1500  # bounded by the deadline, not the model
