"""Canary rollout over HTTP, in one worker on PostgreSQL with the emulator as the models:
start (validation, one per tier, roles), the split by call_id with records carrying their
side, figures per side, stop, promote (the candidate activated), the in_use guard, and the
automatic rollback; a chat canary (every turn of a call on one side, rolled back on errors).
Two workers: tests/test_canary_workers.py."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import orjson

from callout_server.canary.figures import agreement, crossed, side
from callout_server.canary.repository import _quantile
from callout_server.canary.split import bucket, on_canary
from tests.fixtures.app import running_app
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body, reset_tables
from tests.fixtures.people import People
from tests.support.nlu import answer, decide, nlu_app
from tests.test_nlu_decide import records

CANARIES, CONFIGS = "/api/admin/canaries", "/api/admin/llm-configs"
LIMITS = {"max_fallback_rate": 0.5, "min_calls": 5}


async def _candidate(client: httpx.AsyncClient, emulator: Any, model: str,
                     **fields: Any) -> dict[str, Any]:
    r = await client.post(CONFIGS, headers=ADMIN_HEADERS, json=llm_config_body(
        **{"name": "candidate", "model": model, "base_url": emulator.base_url("vllm"),
           **fields}))
    assert r.status_code == 201, r.text
    return dict(r.json())


async def _start(client: httpx.AsyncClient, candidate_id: int, percent: float = 50,
                 **limits: Any) -> httpx.Response:
    return await client.post(CANARIES, headers=ADMIN_HEADERS, json={
        "candidate_id": candidate_id, "percent": percent, "rollback": {**LIMITS, **limits}})


async def _wait(condition: Any, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not await condition():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.05)


def test_the_split_is_stable_keyed_and_near_its_share() -> None:
    salt = bytes.fromhex("00" * 16)
    assert bucket(salt, "call-1") == bucket(salt, "call-1")
    assert bucket(salt, "call-1") != bucket(bytes.fromhex("11" * 16), "call-1") or \
        bucket(salt, "call-2") != bucket(bytes.fromhex("11" * 16), "call-2")
    assert not on_canary(salt, None, 10_000)  # no call_id: the active side
    for percent in (1, 5, 20, 50):
        share = sum(on_canary(salt, f"c-{i}", percent * 100) for i in range(20_000)) / 20_000
        assert abs(share - percent / 100) < 0.01 + percent / 1000, (percent, share)


def test_figures_and_the_rollback_check_are_pure() -> None:
    canary = side({"ok": 90, "invalid_json": 6, "timeout": 3, "cancelled": 1}, 120.0, 480.0)
    assert (canary.calls, canary.fallbacks, canary.errors) == (100, 9, 3)
    assert (canary.fallback_rate, canary.error_rate) == (0.09, 0.03)
    limits = {"max_fallback_rate": 0.1, "max_error_rate": 0.02, "max_p95_ms": 400.0,
              "min_calls": 100}
    assert crossed(limits, canary) == {"limit": "error_rate", "value": 0.03, "max": 0.02,
                                       "calls": 100}
    assert crossed({**limits, "max_error_rate": None}, canary)["limit"] == "p95_ms"  # type: ignore[index]
    assert crossed({**limits, "min_calls": 101}, canary) is None  # not before the minimum
    assert crossed({"min_calls": 1}, canary) is None  # no limit: never rolled back
    # Same intent shares on a node: 1; disjoint: 0; a node only one side answered: left out.
    rows = [("active", "n1", "agree", 30), ("active", "n1", "refuse", 10),
            ("canary", "n1", "agree", 3), ("canary", "n1", "refuse", 1),
            ("active", "n2", "agree", 5), ("canary", "n2", "refuse", 4),
            ("canary", "n3", "agree", 7)]
    result = agreement(rows)
    assert (result.nodes, result.calls) == (2, 8) and result.intent == 0.5
    # The SQLite path's percentile is PostgreSQL's percentile_cont (linear interpolation).
    assert _quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) == 4.8 and _quantile([5.0], 0.5) == 5.0
    assert _quantile([], 0.5) is None


async def test_start_split_stop_and_what_is_refused(make_settings: Any, pg_url: str,
                                                    emulator: Any) -> None:
    active, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(active, {"content": answer("agree")})
    await emulator.script(cand, {"content": answer("refuse")})
    async with nlu_app(make_settings, pg_url, emulator, active) as client:
        candidate = await _candidate(client, emulator, cand)
        other = await _candidate(client, emulator, cand, name="other")
        # Bad input: 422 naming the field, nothing stored.
        for body, field in (
                ({"candidate_id": candidate["id"], "percent": 0, "rollback": LIMITS}, "percent"),
                ({"candidate_id": candidate["id"], "percent": 101, "rollback": LIMITS}, "percent"),
                ({"candidate_id": candidate["id"], "percent": 5, "rollback": {}}, "min_calls"),
                ({"candidate_id": candidate["id"], "percent": 5,
                  "rollback": {**LIMITS, "max_error_rate": 2}}, "max_error_rate"),
                ({"candidate_id": 999999, "percent": 5, "rollback": LIMITS}, "candidate_id"),
                ({"candidate_id": candidate["id"], "percent": 5, "rollback": LIMITS, "x": 1}, "x")):
            r = await client.post(CANARIES, headers=ADMIN_HEADERS, json=body)
            assert r.status_code == 422, (body, r.text)
            assert field in r.text, (field, r.text)
        script = await _candidate(client, emulator, cand, name="script-one", tier="script")
        r = await _start(client, script["id"])  # a script belongs to no phone call to split
        assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "candidate_id"
        assert r.json()["error"]["fields"][0]["code"] == "canary_tier_unsupported"
        assert (await client.get(CANARIES, headers=ADMIN_HEADERS)).json()["items"] == []

        r = await _start(client, candidate["id"], 50)
        assert r.status_code == 201, r.text
        canary = r.json()
        assert (canary["status"], canary["tier"], canary["percent"]) == ("running", "nlu", 50)
        assert canary["candidate"] == {"id": candidate["id"], "name": "candidate", "model": cand}
        assert canary["active"]["id"] is None  # config.toml serves the tier
        again = await _start(client, other["id"])
        assert again.status_code == 409 and again.json()["error"]["code"] == "canary_running"

        # The candidate can be neither deleted nor moved while its canary runs.
        r = await client.delete(f"{CONFIGS}/{candidate['id']}", headers=ADMIN_HEADERS)
        assert r.status_code == 409 and r.json()["error"]["code"] == "in_use", r.text
        r = await client.put(f"{CONFIGS}/{candidate['id']}", headers=ADMIN_HEADERS,
                             json={"tier": "chat", "version": candidate["version"]})
        assert r.status_code == 409 and r.json()["error"]["code"] == "in_use", r.text
        # Nor is the tier's configuration changed by hand: activating the candidate is what
        # promote does (ending the canary), activating another one would change the side the
        # canary is weighed against.
        for config_id in (candidate["id"], other["id"]):
            r = await client.post(f"{CONFIGS}/{config_id}/activate", headers=ADMIN_HEADERS)
            assert r.status_code == 409 and r.json()["error"]["code"] == "in_use", r.text
        assert "推广" in r.json()["error"]["message"]  # promote: the way to switch

        # Every request of one call on one side; both sides served; records say which.
        sides: dict[str, set[str]] = {}
        for i in range(40):
            call_id = f"call-{i}"
            for _ in range(2):
                r, _ = await decide(client, call_id=call_id, fallback_intent="refuse")
                assert r.status_code == 200, r.text
                sides.setdefault(call_id, set()).add(r.json()["intent"])
        assert all(len(s) == 1 for s in sides.values())
        assert {next(iter(s)) for s in sides.values()} == {"agree", "refuse"}
        recs = await records(client, limit=80)
        by_call = {x["call_id"]: x["variant"] for x in recs}
        assert set(by_call.values()) == {"active", "canary"}
        for call_id, side in by_call.items():
            assert sides[call_id] == ({"refuse"} if side == "canary" else {"agree"})
        r, _ = await decide(client, call_id=None)
        assert r.json()["intent"] == "agree"  # no call_id: the active side
        await client.services.recorder.flush()  # type: ignore[attr-defined]

        status = (await client.get(f"{CANARIES}/{canary['id']}", headers=ADMIN_HEADERS)).json()
        figures = status["figures"]
        canary_calls = sum(1 for s in by_call.values() if s == "canary") * 2
        assert figures["canary"]["calls"] == canary_calls
        assert figures["active"]["calls"] == 81 - canary_calls
        assert figures["canary"]["fallback_rate"] == 0 and figures["canary"]["p95_ms"] > 0
        assert figures["canary"]["codes"] == {"ok": canary_calls}
        assert figures["agreement"] == {"intent": 0.0, "nodes": 1, "calls": canary_calls}

        # Viewers read, only operators write.
        people = People(client)
        try:
            viewer = await people.as_role("viewer")
            assert (await viewer.get(f"{CANARIES}/{canary['id']}")).status_code == 200
            assert (await viewer.post(f"{CANARIES}/{canary['id']}/stop")).status_code == 403
            operator = await people.as_role("operator")
            r = await operator.post(f"{CANARIES}/{canary['id']}/stop")
            assert r.status_code == 200, r.text
        finally:
            await people.aclose()
        stopped = r.json()
        assert (stopped["status"], stopped["ended_by"]) == ("stopped", "operator-user")
        assert stopped["figures"]["canary"]["calls"] == canary_calls
        r = await client.post(f"{CANARIES}/{canary['id']}/promote", headers=ADMIN_HEADERS)
        assert r.status_code == 409 and r.json()["error"]["code"] == "canary_ended"
        assert (await client.get(f"{CANARIES}/999", headers=ADMIN_HEADERS)).status_code == 404

        for i in range(10):  # all back on the active configuration, no side recorded
            r, _ = await decide(client, call_id=f"call-{i}")
            assert r.json()["intent"] == "agree"
        assert {x["variant"] for x in await records(client, limit=10)} == {None}
        r = await client.delete(f"{CONFIGS}/{candidate['id']}", headers=ADMIN_HEADERS)
        assert r.status_code == 204, r.text

        trail = (await client.get("/api/admin/audit", headers=ADMIN_HEADERS,
                                  params={"action": "canary"})).json()["items"]
        assert [e["action"] for e in trail] == ["canary.stop", "canary.start"]
        assert trail[1]["detail"]["percent"] == 50 and trail[1]["target"] == f"canary:{canary['id']}"


async def test_the_active_side_of_a_running_canary_stays_until_it_ends(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    """Deleting or deactivating the configuration the canary is weighed against left a
    running canary beside nothing, and `stop` meant nothing; both wait for its end now."""
    active, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(cand, {"content": answer("refuse")})
    async with nlu_app(make_settings, pg_url, emulator, active) as client:
        serving = await _candidate(client, emulator, active, name="serving")
        r = await client.post(f"{CONFIGS}/{serving['id']}/activate", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text
        candidate = await _candidate(client, emulator, cand)
        r = await _start(client, candidate["id"])
        assert r.status_code == 201 and r.json()["active"]["id"] == serving["id"], r.text
        canary = r.json()
        for method, path in (("DELETE", f"{CONFIGS}/{serving['id']}"),
                             ("POST", f"{CONFIGS}/{serving['id']}/deactivate")):
            r = await client.request(method, path, headers=ADMIN_HEADERS)
            assert r.status_code == 409 and r.json()["error"]["code"] == "in_use", r.text
        r = await client.get(f"{CONFIGS}/{serving['id']}", headers=ADMIN_HEADERS)
        assert r.status_code == 200 and r.json()["is_active"] is True
        r = await client.post(f"{CANARIES}/{canary['id']}/stop", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text
        r = await client.delete(f"{CONFIGS}/{serving['id']}", headers=ADMIN_HEADERS)
        assert r.status_code == 204, r.text  # the canary ended: an ordinary delete again


async def test_promote_activates_the_candidate_and_ends_the_canary(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    active, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(active, {"content": answer("agree")})
    await emulator.script(cand, {"content": answer("refuse")})
    async with nlu_app(make_settings, pg_url, emulator, active) as client:
        candidate = await _candidate(client, emulator, cand)
        canary = (await _start(client, candidate["id"], 10)).json()
        r = await client.post(f"{CANARIES}/{canary['id']}/promote", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "promoted" and r.json()["ended_by"] == "admin-token"
        served = (await client.get("/api/admin/llm-active", headers=ADMIN_HEADERS)).json()
        assert served["tiers"]["nlu"]["config"]["id"] == candidate["id"]
        for i in range(10):
            r, _ = await decide(client, call_id=f"p-{i}")
            assert r.json()["intent"] == "refuse"
        assert {x["variant"] for x in await records(client, limit=10)} == {None}
        trail = (await client.get("/api/admin/audit", headers=ADMIN_HEADERS)).json()["items"]
        actions = [e["action"] for e in trail]
        assert actions.index("canary.promote") < actions.index("canary.start")
        assert "config.activate" in actions
        # A new canary may start once the last one ended (one running per tier).
        other = await _candidate(client, emulator, active, name="next")
        assert (await _start(client, other["id"])).status_code == 201


async def test_the_canary_rolls_back_by_itself_when_a_limit_is_crossed(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    active, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(active, {"content": answer("agree")})
    await emulator.script(cand, {"content": "sorry, no JSON today"})  # invalid_json: fallback
    async with nlu_app(make_settings, pg_url, emulator, active, **{
            "canary.check_interval_s": 0.2, "diagnostics.flush_interval_s": 0.1}) as client:
        candidate = await _candidate(client, emulator, cand)
        canary = (await _start(client, candidate["id"], 50, min_calls=5)).json()
        url = f"{CANARIES}/{canary['id']}"
        bad = 0

        async def rolled_back() -> bool:
            nonlocal bad
            for i in range(5):
                r, _ = await decide(client, call_id=f"r-{time.monotonic_ns()}-{i}",
                                    fallback_intent="refuse")
                bad += r.json()["fallback"]
            return (await client.get(url, headers=ADMIN_HEADERS)).json()["status"] != "running"

        await _wait(rolled_back)
        status = (await client.get(url, headers={**ADMIN_HEADERS,
                                                 "Accept-Language": "en"})).json()
        assert status["status"] == "rolled_back" and status["ended_by"] == "canary-monitor"
        reason = status["reason"]
        assert reason["limit"] == "fallback_rate" and reason["value"] > 0.5 and reason["max"] == 0.5
        assert reason["calls"] >= 5 and "fallback rate" in reason["message"]
        zh = (await client.get(url, headers={**ADMIN_HEADERS, "Accept-Language": "zh"})).json()
        assert "回退率" in zh["reason"]["message"]
        assert bad < 60  # bounded: the minimum, plus what arrives before the check ends it
        for i in range(10):
            r, _ = await decide(client, call_id=f"after-{i}", fallback_intent="refuse")
            assert r.json()["intent"] == "agree" and r.json()["fallback"] is False
        trail = (await client.get("/api/admin/audit", headers=ADMIN_HEADERS,
                                  params={"action": "canary"})).json()["items"]
        assert trail[0]["action"] == "canary.rollback"
        assert trail[0]["detail"]["reason"]["limit"] == "fallback_rate"


# -- the chat tier ----------------------------------------------------------------------------

async def _spoken(client: httpx.AsyncClient, call_id: str, turn_id: str) -> tuple[str, str]:
    """(what the turn said, its end reason)."""
    async with client.stream("POST", f"/api/chat/sessions/{call_id}/turns",
                             headers=SERVICE_HEADERS,
                             json={"turn_id": turn_id, "text": "你好", "output": "text"}) as s:
        datas = [orjson.loads(line[5:]) async for line in s.aiter_lines()
                 if line.startswith("data:")]
    return "".join(d.get("text", "") for d in datas), datas[-1].get("reason", "")


def _chat_app(make_settings: Any, model: str, emulator: Any, **settings: Any) -> Any:
    return running_app(make_settings(**{
        "llm.chat.base_url": emulator.base_url("vllm"), "llm.chat.model": model,
        "redis.poll_interval_s": 3600, **settings}), streaming=True)


FAST = {"token_delay_ms": 0, "ttft_ms": 0}


async def test_a_chat_canary_keeps_every_turn_of_a_call_on_one_side(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    active, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(active, {"content": "现在的模型。", **FAST})
    await emulator.script(cand, {"content": "候选的模型。", **FAST})
    await reset_tables(pg_url)
    async with _chat_app(make_settings, active, emulator) as client:
        candidate = await _candidate(client, emulator, cand, tier="chat", name="chat-candidate")
        r = await _start(client, candidate["id"], 50, max_error_rate=0.5)
        assert r.status_code == 201, r.text
        canary = r.json()
        assert (canary["tier"], canary["status"]) == ("chat", "running")
        said: dict[str, set[str]] = {}
        for i in range(16):
            call_id = f"chat-call-{i}"
            r = await client.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                                  json={"call_id": call_id})
            assert r.status_code == 201, r.text
            for turn in ("t1", "t2"):
                text, reason = await _spoken(client, call_id, turn)
                assert reason == "completed", (call_id, turn, text)
                said.setdefault(call_id, set()).add(text)
        assert all(len(texts) == 1 for texts in said.values()), said
        assert {next(iter(t)) for t in said.values()} == {"现在的模型。", "候选的模型。"}
        recs = await records(client, tier="chat", limit=100)
        by_call = {x["call_id"]: x["variant"] for x in recs}
        assert len(by_call) == 16
        for call_id, variant in by_call.items():
            assert said[call_id] == ({"候选的模型。"} if variant == "canary" else {"现在的模型。"})
        status = (await client.get(f"{CANARIES}/{canary['id']}", headers=ADMIN_HEADERS)).json()
        on_canary = sum(1 for v in by_call.values() if v == "canary")
        assert status["figures"]["canary"]["calls"] == 2 * on_canary
        assert status["figures"]["active"]["calls"] == 2 * (16 - on_canary)
        assert status["figures"]["canary"]["codes"] == {"ok": 2 * on_canary}
        assert status["figures"]["agreement"]["intent"] is None  # no intents in a chat
        r = await client.post(f"{CANARIES}/{canary['id']}/promote", headers=ADMIN_HEADERS)
        assert r.status_code == 200 and r.json()["status"] == "promoted", r.text
        r = await client.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                              json={"call_id": "after-promote"})
        assert (await _spoken(client, "after-promote", "t1"))[0] == "候选的模型。"


async def test_a_chat_canary_whose_model_fails_rolls_back(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    active, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(active, {"content": "现在的模型。", **FAST})
    await emulator.script(cand, {"status": 503, "error_body": {"error": {"message": "down"}}})
    await reset_tables(pg_url)
    async with _chat_app(make_settings, active, emulator, **{
            "canary.check_interval_s": 0.2, "diagnostics.flush_interval_s": 0.1}) as client:
        candidate = await _candidate(client, emulator, cand, tier="chat", name="chat-broken")
        canary = (await _start(client, candidate["id"], 50, min_calls=3,
                               max_error_rate=0.5)).json()
        url = f"{CANARIES}/{canary['id']}"

        async def rolled_back() -> bool:
            for i in range(4):
                call_id = f"r-{time.monotonic_ns()}-{i}"
                r = await client.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                                      json={"call_id": call_id})
                assert r.status_code == 201, r.text
                await _spoken(client, call_id, "t1")
            return (await client.get(url, headers=ADMIN_HEADERS)).json()["status"] != "running"

        await _wait(rolled_back, timeout_s=20)
        status = (await client.get(url, headers=ADMIN_HEADERS)).json()
        assert status["status"] == "rolled_back", status
        assert status["reason"]["limit"] in ("fallback_rate", "error_rate")
        assert status["figures"]["canary"]["error_rate"] > 0.5
        for i in range(6):  # every call back on the active configuration
            call_id = f"after-{i}"
            await client.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                              json={"call_id": call_id})
            assert await _spoken(client, call_id, "t1") == ("现在的模型。", "completed")
