"""monitoring/: the Prometheus alert rules and the Grafana dashboard ops load, held to the app.

`promtool` (Debian's prometheus package; scripts/test.sh installs it) checks the rules and
runs their unit tests (monitoring/callout-alerts.test.yml), and checks every dashboard query
as PromQL; every metric either file names must be served by a running app's /metrics, so a
renamed metric cannot leave an alert that never fires.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import yaml
from prometheus_client import REGISTRY

from callout_server.calllog.metrics import watch_writer
from tests.fixtures.database import SERVICE_HEADERS
from tests.support.nlu import answer, decide, nlu_app

MONITORING = Path(__file__).resolve().parents[1] / "monitoring"
RULES = MONITORING / "callout-alerts.yml"
RULE_TESTS = MONITORING / "callout-alerts.test.yml"
DASHBOARD = MONITORING / "grafana-dashboard.json"
METRIC = re.compile(r"\bcallout_[a-z0-9_]+")


def _promtool(*args: str, cwd: Path = MONITORING) -> str:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: install Debian's prometheus package (scripts/test.sh does)"
    done = subprocess.run([promtool, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _dashboard() -> dict[str, Any]:
    return dict(json.loads(DASHBOARD.read_text()))


def _queries() -> list[str]:
    return [t["expr"] for p in _dashboard()["panels"] for t in p.get("targets", ())]


def test_the_alert_rules_are_valid() -> None:
    assert "SUCCESS: 10 rules found" in _promtool("check", "rules", RULES.name)


def test_each_alert_fires_on_what_it_describes_and_not_on_its_near_miss() -> None:
    _promtool("test", "rules", RULE_TESTS.name)
    tested = {t["alertname"] for case in yaml.safe_load(RULE_TESTS.read_text())["tests"]
              for t in case["alert_rule_test"]}
    alerts = {r["alert"] for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]}
    assert tested == alerts


def test_every_dashboard_query_is_valid_promql(tmp_path: Path) -> None:
    # Grafana's $__rate_interval is not PromQL: a fixed range in its place, checked as the
    # expression of a recording rule.
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{i}", "expr": q.replace("$__rate_interval", "5m")}
        for i, q in enumerate(_queries())]}]}
    (tmp_path / "queries.yml").write_text(yaml.safe_dump(rules))
    _promtool("check", "rules", "queries.yml", cwd=tmp_path)


def test_the_dashboard_imports_cleanly() -> None:
    d = _dashboard()
    assert d["uid"] == "callout-server" and d["schemaVersion"] >= 36
    assert [v["name"] for v in d["templating"]["list"]] == ["datasource"]
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    for p in d["panels"]:
        box = p["gridPos"]
        assert box["x"] + box["w"] <= 24, p["title"]
        if p["type"] == "row":
            continue
        assert p["title"] and p["description"] and p["targets"], p["title"]
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert all(t["expr"] and t["refId"] for t in p["targets"]), p["title"]
    covered = " ".join(_queries())
    for metric in ("callout_llm_requests_total", "callout_nlu_decisions_total",
                   "callout_llm_latency_seconds_bucket", "callout_llm_ttft_seconds_bucket",
                   "callout_upstream_state", "callout_diagnostics_writer_stalled"):
        assert metric in covered  # what the alerts watch, on screen too


def _served(text: str) -> set[str]:
    """Metric names a scrape of `text` yields, the families with no sample yet included."""
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            names.add(name)
            if kind == "histogram":
                names |= {f"{name}_bucket", f"{name}_count", f"{name}_sum"}
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


async def test_every_metric_the_rules_and_dashboard_name_is_served(
        app_client: httpx.AsyncClient) -> None:
    r = await app_client.get("/metrics")
    assert r.status_code == 200
    served = _served(r.text)
    named = set()
    for path in (RULES, RULE_TESTS, DASHBOARD):
        named |= set(METRIC.findall(path.read_text()))
    assert len(named) >= 12
    assert sorted(named - served) == []


async def test_nlu_decisions_are_counted_by_what_answered(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    def value(outcome: str) -> float:
        got = REGISTRY.get_sample_value("callout_nlu_decisions_total", {"outcome": outcome})
        return got or 0.0

    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")}, times=1)
    await emulator.script(model, {"status": 400}, times=2)  # a 400 is not retried
    before = {o: value(o) for o in ("model", "fallback", "error")}
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        r, _ = await decide(client, fallback_intent="refuse")
        assert r.json()["fallback"] is False, r.text
        r, _ = await decide(client, fallback_intent="refuse")
        assert r.json()["fallback"] is True, r.text
        r, _ = await decide(client)
        assert r.status_code == 502, r.text
        # Refused before any model call: no decision at all.
        bad = await client.post("/api/nlu/decide", headers=SERVICE_HEADERS, json={"utterance": ""})
        assert bad.status_code == 422
        metrics = (await client.get("/metrics")).text
    assert {o: value(o) - before[o] for o in before} == {"model": 1, "fallback": 1, "error": 1}
    assert 'callout_nlu_decisions_total{outcome="fallback"}' in metrics


def test_the_call_log_writer_state_is_a_gauge() -> None:
    state = {"diagnostics_writer": "ok", "diagnostics_oldest_pending_s": None}
    watch_writer(lambda: state)
    assert REGISTRY.get_sample_value("callout_diagnostics_writer_stalled") == 0
    assert REGISTRY.get_sample_value("callout_diagnostics_oldest_pending_seconds") == 0
    state.update(diagnostics_writer="stalled", diagnostics_oldest_pending_s=42.5)
    assert REGISTRY.get_sample_value("callout_diagnostics_writer_stalled") == 1
    assert REGISTRY.get_sample_value("callout_diagnostics_oldest_pending_seconds") == 42.5
