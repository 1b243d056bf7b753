"""What ops read about NLU calls: the diagnostics log API, `/metrics`, and no key anywhere."""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from typing import Any

import httpx
import pytest

from callout_server.calllog.records import CallRecord
from callout_server.db.base import utcnow
from tests.fixtures.app import free_port
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body
from tests.support.nlu import answer, decide, nlu_app
from tests.test_config_key_never_appears import KEY, leaks

DIAG = "/api/admin/diagnostics"


async def get(client: httpx.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    r = await client.get(path, headers=ADMIN_HEADERS, params=params)
    assert r.status_code == 200, r.text
    return dict(r.json())


def metric(text: str, name: str, **labels: str) -> float:
    """One sample of the Prometheus text exposition (0 when the series is absent)."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        series, _, value = line.rpartition(" ")
        got = dict(re.findall(r'(\w+)="([^"]*)"', series))
        if series.split("{")[0] == name and got == labels:
            return float(value)
    return 0.0


async def test_diagnostics_filters_keyset_pages_and_summary(make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")}, times=3)
    await emulator.script(model, {"content": answer("perhaps")})  # schema_mismatch from here
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        for i in range(3):
            assert (await decide(client, call_id="call-a", node_id=f"n{i}"))[0].status_code == 200
        for _ in range(2):
            r, _ = await decide(client, call_id="call-b", node_id="n9", fallback_intent="refuse")
            assert r.json()["diagnostic"]["code"] == "schema_mismatch"
        recorder = client.services.recorder  # type: ignore[attr-defined]
        # Records of other tiers, and one from two hours ago (what `since`/`until` cut).
        recorder.record(CallRecord(tier="chat", code="timeout", model="chat-m", latency_ms=900.0))
        recorder.record(CallRecord(tier="script", code="ok", model="script-m", latency_ms=5000.0))
        old = recorder.record(CallRecord(tier="nlu", code="ok", model=model, latency_ms=1.0,
                                         at=utcnow() - timedelta(hours=2)))
        await recorder.flush()

        everything = (await get(client, DIAG))["items"]
        assert len(everything) == 8
        ids = [x["id"] for x in everything]
        assert ids == sorted(ids, reverse=True)  # newest first
        assert set(everything[0]) >= {
            "id", "at", "tier", "config_id", "model", "vendor", "code", "message", "advice",
            "finish_reason", "latency_ms", "ttft_ms", "prompt_tokens", "completion_tokens",
            "reasoning_tokens", "max_tokens", "call_id", "node_id"}

        def codes(items: list[dict[str, Any]]) -> list[str]:
            return [x["code"] for x in items]

        assert codes((await get(client, DIAG, tier="chat"))["items"]) == ["timeout"]
        mismatch = (await get(client, DIAG, code="schema_mismatch"))["items"]
        assert [x["call_id"] for x in mismatch] == ["call-b", "call-b"]
        assert mismatch[0]["message"] and mismatch[0]["advice"]
        assert len((await get(client, DIAG, model=model))["items"]) == 6
        assert len((await get(client, DIAG, call_id="call-a"))["items"]) == 3
        assert codes((await get(client, DIAG, node_id="n1"))["items"]) == ["ok"]
        hour_ago = (utcnow() - timedelta(hours=1)).isoformat()
        assert len((await get(client, DIAG, since=hour_ago))["items"]) == 7
        assert [x["id"] for x in (await get(client, DIAG, until=hour_ago))["items"]] == [old]
        both = (await get(client, DIAG, tier="nlu", code="ok", since=hour_ago))["items"]
        assert len(both) == 3

        # Keyset paging: pages of 3 walk everything once, in order, and say when they end.
        seen: list[int] = []
        page = await get(client, DIAG, limit=3)
        while True:
            seen += [x["id"] for x in page["items"]]
            if page["next_before_id"] is None:
                break
            assert page["next_before_id"] == page["items"][-1]["id"]
            page = await get(client, DIAG, limit=3, before_id=page["next_before_id"])
        assert seen == ids

        summary = await get(client, f"{DIAG}/summary", window="1h")
        nlu = summary["tiers"]["nlu"]
        assert nlu["count"] == 5 and nlu["codes"] == {"ok": 3, "schema_mismatch": 2}
        assert nlu["latency_ms"]["p50"] is not None and nlu["latency_ms"]["p99"] is not None
        assert summary["tiers"]["chat"]["codes"] == {"timeout": 1}
        assert summary["dropped"] == 0
        assert (await get(client, f"{DIAG}/summary", window="3h"))["tiers"]["nlu"]["count"] == 6

        bad = await client.get(f"{DIAG}/summary", headers=ADMIN_HEADERS, params={"window": "1y"})
        assert bad.status_code == 422 and "window" in bad.json()["error"]["message"]
        assert (await client.get(DIAG, headers=ADMIN_HEADERS,
                                 params={"limit": 0})).status_code == 422
        assert (await client.get(DIAG, headers=SERVICE_HEADERS)).status_code == 403
        assert (await client.get(DIAG)).status_code == 401


async def test_metrics_by_tier_and_code_latency_dropped_and_generation(
        make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")}, times=2)
    await emulator.script(model, {"status": 500})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        before = (await client.get("/metrics")).text
        for _ in range(2):
            assert (await decide(client))[0].status_code == 200
        assert (await decide(client))[0].status_code == 502  # one call of two attempts
        r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS,
                              json=llm_config_body(api_key=KEY, is_active=True, model=model,
                                                   base_url=emulator.base_url("vllm")))
        assert r.status_code == 201
        r = await client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text

    def delta(name: str, **labels: str) -> float:
        return metric(text, name, **labels) - metric(before, name, **labels)

    assert delta("callout_llm_requests_total", tier="nlu", code="ok") == 2
    assert delta("callout_llm_requests_total", tier="nlu", code="upstream_error") == 1
    assert delta("callout_llm_latency_seconds_count", tier="nlu") == 3
    assert metric(text, "callout_llm_latency_seconds_bucket", tier="nlu", le="+Inf") >= 3
    assert delta("callout_llm_tokens_total", tier="nlu", kind="prompt") > 0
    assert "callout_diagnostics_dropped_total" in text
    generation = client.services.store.current.generation  # type: ignore[attr-defined]
    assert generation >= 1 and metric(text, "callout_config_generation") == generation
    assert not leaks(text)


async def test_api_key_never_appears_on_the_nlu_route(make_settings, pg_url, emulator,
                                                       caplog: pytest.LogCaptureFixture,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    model = emulator.unique_model("qwen2.5-7b")
    # Vendors echo keys in their errors: a 401 quoting it back, and a 500 doing the same.
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "auth"}}
    await emulator.script(model, {"content": answer("agree", time="明天")}, times=1)
    await emulator.script(model, {"status": 401, "error_body": echo}, times=1)
    await emulator.script(model, {"status": 500, "error_body": echo}, times=2)
    await emulator.script(model, {"content": "not json " + KEY})
    bodies: list[str] = []
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        services = client.services  # type: ignore[attr-defined]
        r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
            api_key=KEY, model=model, base_url=emulator.base_url("vllm"), is_active=True))
        assert r.status_code == 201
        ok, _ = await decide(client)
        assert ok.status_code == 200 and ok.json()["intent"] == "agree"
        for fields in ({}, {"fallback_intent": "refuse"}, {"fallback_intent": "refuse"}, {}):
            r, _ = await decide(client, **fields)
            bodies.append(r.text + str(r.headers))
        assert [b.split('"code":"')[1].split('"')[0] for b in bodies[:2]] == [
            "upstream_error", "upstream_error"]
        bodies.append(ok.text + str(ok.headers))
        # A dead endpoint with the same key: the connect_error path.
        r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
            api_key=KEY, model=model, base_url=f"http://127.0.0.1:{free_port()}/v1",
            is_active=True))
        assert r.status_code == 201
        r, _ = await decide(client, fallback_intent="refuse")
        assert r.json()["diagnostic"]["code"] == "connect_error"
        bodies.append(r.text)
        await services.recorder.flush()
        bodies.append((await client.get(DIAG, headers=ADMIN_HEADERS,
                                        params={"limit": 500})).text)
        bodies.append((await client.get(f"{DIAG}/summary", headers=ADMIN_HEADERS)).text)
        bodies.append((await client.get("/metrics")).text)
        bodies.append((await client.get("/healthz")).text)
        bodies.append(repr(services.nlu) + repr(services.store.current))
    sent = await emulator.requests(model)
    assert sent and all(x["authorization_present"] for x in sent)  # it did go upstream
    out = capsys.readouterr()
    logs = "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
    for where, text in [("responses", "\n".join(bodies)), ("logs", logs),
                        ("stdout", out.out), ("stderr", out.err)]:
        assert not leaks(text), f"API key material in {where}"
