"""Usage grouped by day, key, campaign, configuration and tier (from the daily summary,
not the log), one phone call's model calls in order, and the per-key Prometheus series.

Against the real app on PostgreSQL, the emulator answering the NLU tier.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from callout_server.calllog.usage_queries import percentile
from callout_server.calllog.usage_rollup import BOUNDS_MS, bucket
from tests.fixtures.database import ADMIN_HEADERS, EN, SERVICE_HEADERS, asyncpg_dsn, llm_config_body
from tests.support.keys import bearer, create_key
from tests.support.nlu import DECIDE, answer, decide_body, nlu_app
from tests.test_nlu_decide import records

PRICE = {"input_per_mtok": 1.5, "output_per_mtok": 6.0, "currency": "USD"}


def test_latency_buckets_and_percentiles() -> None:
    assert bucket(0.5) == 0 and bucket(10.0) == 0 and bucket(10.1) == 1
    assert bucket(10**9) == len(BOUNDS_MS)
    counts = [0] * (len(BOUNDS_MS) + 1)
    counts[bucket(100)] = 50  # type: ignore[index]
    counts[bucket(1000)] = 50  # type: ignore[index]
    p50, p95 = percentile(counts, 0.5), percentile(counts, 0.95)
    assert p50 is not None and BOUNDS_MS[4] < p50 <= BOUNDS_MS[6]
    assert p95 is not None and BOUNDS_MS[11] < p95 <= BOUNDS_MS[12]  # 1000 ms: 865..1298
    assert percentile([0] * 24, 0.5) is None


async def test_usage_per_group_and_the_call_view(make_settings: Any, pg_url: str,
                                                 emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree"), "ttft_ms": 20})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        cfg = (await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
            name="priced", model=model, base_url=emulator.base_url("vllm"), is_active=True,
            price=PRICE))).json()
        a = await create_key(client, name="dialer-a", tiers=["nlu"], campaign="renewals")
        b = await create_key(client, name="dialer-b", tiers=["nlu"], campaign="winback")
        for node in ("greet", "confirm_time", "close"):
            r = await client.post(DECIDE, headers=bearer(a),
                                  json=decide_body(call_id="call-a-1", node_id=node))
            assert r.status_code == 200, r.text
        await client.post(DECIDE, headers=bearer(b), json=decide_body(call_id="call-b-1"))
        await client.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body(call_id="call-env"))
        recs = await records(client, limit=100)  # flushed: records and summary written
        assert len(recs) == 5

        by = {}
        for group_by in ("day", "key", "campaign", "config", "tier"):
            r = await client.get("/api/admin/usage", headers=ADMIN_HEADERS,
                                 params={"group_by": group_by})
            assert r.status_code == 200, r.text
            by[group_by] = {i["group"]: i for i in r.json()["items"]}
        total_cost = sum(x["cost"] for x in recs)
        (day,) = by["day"].values()
        assert day["calls"] == 5 and day["errors"] == 0 and day["currency"] == "USD"
        assert day["cost"] == pytest.approx(total_cost, rel=1e-9)
        assert day["prompt_tokens"] == sum(x["prompt_tokens"] for x in recs)
        assert day["completion_tokens"] == sum(x["completion_tokens"] for x in recs)
        assert day["p50_ms"] is not None and day["p95_ms"] >= day["p50_ms"] >= 5
        assert {g: i["calls"] for g, i in by["key"].items()} == {
            str(a["id"]): 3, str(b["id"]): 1, None: 1}
        assert by["key"][str(a["id"])]["label"] == f"dialer-a ({a['prefix']})"
        assert {g: i["calls"] for g, i in by["campaign"].items()} == {
            "renewals": 3, "winback": 1, None: 1}
        assert by["campaign"]["renewals"]["cost"] == pytest.approx(
            sum(x["cost"] for x in recs if x["campaign"] == "renewals"), rel=1e-9)
        assert by["config"][str(cfg["id"])]["label"] == "priced"
        assert list(by["tier"]) == ["nlu"]

        # One phone call, oldest first, with its totals.
        r = await client.get("/api/admin/calls/call-a-1", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text
        view = r.json()
        assert view["campaign"] == "renewals"
        assert [x["node_id"] for x in view["records"]] == ["greet", "confirm_time", "close"]
        mine = [x for x in recs if x["call_id"] == "call-a-1"]
        assert view["totals"]["model_calls"] == 3
        assert view["totals"]["tokens"] == sum(
            x["prompt_tokens"] + x["completion_tokens"] for x in mine)
        assert view["totals"]["cost"] == pytest.approx(sum(x["cost"] for x in mine))
        assert view["totals"]["latency_ms"] == pytest.approx(
            sum(x["latency_ms"] for x in mine), abs=0.2)
        r = await client.get("/api/admin/calls/nobody", headers={**ADMIN_HEADERS, **EN})
        error = r.json()["error"]  # the erasure's words: they never repeat the id
        assert r.status_code == 404 and error["code"] == "call_not_found"
        assert "nobody" not in error["message"]

        # The summary answers without the log: emptied, the usage stays.
        conn = await asyncpg.connect(asyncpg_dsn(pg_url))
        try:
            await conn.execute("DELETE FROM callout.llm_call_logs")
        finally:
            await conn.close()
        r = await client.get("/api/admin/usage", headers=ADMIN_HEADERS)
        assert r.json()["items"][0]["calls"] == 5

        metrics = (await client.get("/metrics")).text
        assert f'callout_key_calls_total{{campaign="renewals",key="{a["id"]}",tier="nlu"}} 3.0' in metrics
        assert f'callout_key_cost_total{{campaign="renewals",currency="USD",key="{a["id"]}"}}' in metrics
        assert "call-a-1" not in metrics


async def test_bad_usage_queries_are_422(app_client: Any) -> None:
    for params, field in (({"group_by": "model"}, "group_by"),
                          ({"since": "2026-12-02", "until": "2026-12-01"}, "until"),
                          ({"since": "2024-01-01", "until": "2026-01-01"}, "since")):
        r = await app_client.get("/api/admin/usage", headers=ADMIN_HEADERS, params=params)
        assert r.status_code == 422, (params, r.text)
        assert field in [f["field"] for f in r.json()["error"]["fields"]], r.text
    r = await app_client.get("/api/admin/usage", headers=ADMIN_HEADERS,
                             params={"since": "2026-01-01T00:00:00Z", "until": "2026-01-02T00:00:00Z"})
    assert r.status_code == 200 and (r.json()["since"], r.json()["until"]) == (
        "2026-01-01", "2026-01-01")


async def test_the_summary_adds_up_on_sqlite_too(make_settings: Any, tmp_path: Any) -> None:
    from callout_server.calllog.records import CallRecord
    from tests.fixtures.app import running_app

    settings = make_settings(**{"database.url": "", "database.sqlite_path": str(tmp_path / "c.db"),
                                "redis.url": "", "auth.secret_key": ""})
    async with running_app(settings) as client:
        key = await create_key(client, tiers=["chat"], campaign="sqlite-c")
        recorder = client.services.recorder  # type: ignore[attr-defined]
        for batch in range(2):  # two batches: the second adds to the first's row
            for code in ("ok", "upstream_timeout"):
                recorder.record(CallRecord(tier="chat", code=code, latency_ms=120.0,
                                           prompt_tokens=10, completion_tokens=5,
                                           key_id=key["id"], campaign="sqlite-c", cost=0.25,
                                           currency="EUR", call_id=f"s-{batch}"))
            await recorder.flush()
        r = await client.get("/api/admin/usage", headers=ADMIN_HEADERS,
                             params={"group_by": "campaign"})
        assert r.status_code == 200, r.text
        (item,) = r.json()["items"]
        assert (item["group"], item["calls"], item["errors"], item["prompt_tokens"]) == (
            "sqlite-c", 4, 2, 40)
        assert (item["cost"], item["currency"]) == (1.0, "EUR")
