"""Failed model calls are visible in the server log: one structured line each, never the key.

Real app on PostgreSQL, real emulator. The lines are checked as records (their fields) and
as what the text and JSON formatters write.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from callout_server.calllog.reports import endpoint_of
from callout_server.logs import JsonFormatter, TextFormatter
from tests.fixtures.app import free_port
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body
from tests.test_config_key_never_appears import ECHO, KEY, leaks

DECIDE = "/api/nlu/decide"
BODY = {"call_id": "c-log-1", "node_id": "confirm", "utterance": "好的",
        "intents": [{"name": "agree", "description": "同意"}], "fallback_intent": "agree"}


async def _activate(client, **fields: Any) -> dict[str, Any]:
    r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS,
                          json=llm_config_body(is_active=True, api_key=KEY, **fields))
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _failures(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "callout_server.calls"]


async def test_one_line_per_failed_call_with_its_fields(app_client, caplog) -> None:
    caplog.set_level(logging.INFO, logger="callout_server.calls")
    port = free_port()
    cfg = await _activate(app_client, name="nlu-dead", base_url=f"http://127.0.0.1:{port}/v1")
    r = await app_client.post(DECIDE, headers=SERVICE_HEADERS, json=BODY)
    assert r.status_code == 200 and r.json()["fallback"] is True
    code = r.json()["diagnostic"]["code"]
    lines = _failures(caplog)
    # One line per call, as in the call log (a refused connection cools its endpoint down at
    # once: nowhere else to try, so one attempt).
    assert len(lines) == 1, [x.getMessage() for x in lines]
    line = lines[-1]
    assert line.levelno == logging.WARNING and line.getMessage() == f"model call failed: {code}"
    fields = line.__dict__
    assert fields["event"] == "model_call_failed" and fields["code"] == code == "connect_error"
    assert fields["tier"] == "nlu" and fields["config_id"] == cfg["id"]
    assert fields["config_name"] == "nlu-dead" and fields["endpoint"] == f"127.0.0.1:{port}"
    assert fields["latency_ms"] >= 0 and fields["call_id"] == "c-log-1"
    assert fields["attempts"] == 1
    assert fields["node_id"] == "confirm" and fields["model"] == cfg["model"]

    text = TextFormatter().format(line)
    assert "\n" not in text and f"endpoint=127.0.0.1:{port}" in text and "tier=nlu" in text
    as_json = json.loads(JsonFormatter().format(line))
    assert as_json["level"] == "WARNING" and as_json["logger"] == "callout_server.calls"
    assert as_json["code"] == "connect_error" and as_json["config_id"] == cfg["id"]
    assert as_json["time"].endswith("Z")


async def test_successful_calls_log_nothing(app_client, emulator, caplog) -> None:
    caplog.set_level(logging.INFO, logger="callout_server.calls")
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"content": '{"intent": "agree", "confidence": 0.9}'})
    await _activate(app_client, model=model, base_url=emulator.base_url("vllm"))
    r = await app_client.post(DECIDE, headers=SERVICE_HEADERS, json=BODY)
    assert r.status_code == 200 and r.json()["fallback"] is False
    assert _failures(caplog) == []


async def test_the_key_never_reaches_the_log(app_client, emulator, caplog) -> None:
    """A vendor that echoes the key in its error: the line has the status, not the key."""
    caplog.set_level(logging.DEBUG)
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"status": 401, "error_body": ECHO})
    await _activate(app_client, model=model, base_url=emulator.base_url("vllm"))
    r = await app_client.post(DECIDE, headers=SERVICE_HEADERS, json=BODY)
    assert r.status_code == 200 and r.json()["diagnostic"]["status"] == 401
    lines = _failures(caplog)
    assert len(lines) == 1 and lines[0].__dict__["status"] == 401
    written = [f().format(x) for x in caplog.records for f in (TextFormatter, JsonFormatter)]
    assert not leaks("\n".join(written))
    assert not leaks(str([x.__dict__ for x in caplog.records]))


async def test_a_cancelled_call_is_no_failure(app_client, emulator, caplog) -> None:
    from callout_server.calllog.reports import NULL_RECORDER, record_call
    from callout_server.llm import Diagnostic
    from callout_server.upstream import CallReport

    caplog.set_level(logging.INFO, logger="callout_server.calls")
    cfg = app_client.services.store.current.config_for("chat")  # type: ignore[attr-defined]

    def report(diagnostic: Diagnostic) -> CallReport:
        return CallReport(cfg, None, 1, "vllm", diagnostic, 0.0)

    record_call(NULL_RECORDER, report(Diagnostic.make("cancelled")), "chat")
    assert _failures(caplog) == []
    record_call(NULL_RECORDER, report(Diagnostic.make("timeout", detail="x")), "chat")
    assert [x.__dict__["code"] for x in _failures(caplog)] == ["timeout"]


def test_endpoint_is_host_and_port_only() -> None:
    assert endpoint_of("http://bob:pw@gw.example:8443/v1?key=x") == "gw.example:8443"
    assert endpoint_of("https://api.deepseek.com/v1") == "api.deepseek.com"
    assert endpoint_of("http://[::1]:8900/v1") == "[::1]:8900"
    assert endpoint_of("http://[bad") == "?"


def test_text_lines_cannot_be_forged_by_a_field() -> None:
    record = logging.makeLogRecord({"name": "callout_server.calls", "levelno": 30,
                                    "levelname": "WARNING", "msg": "model call failed: timeout",
                                    "call_id": "c1\n2026-01-01 INFO forged", "tier": "nlu"})
    line = TextFormatter().format(record)
    assert "\n" not in line and 'call_id="c1\\n2026-01-01 INFO forged"' in line
    assert " tier=nlu" in line
