"""No log line keeps a customer's personal data: a real `serve` process, both formats, the
access log on; a failed model call whose vendor echoes the prompt, a call named by the
callee's number, a query string holding one. The live answer still carries the values."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body
from tests.support.nlu import answer
from tests.support.pii import leaks, structured_utterances


@pytest.mark.parametrize("fmt", ["text", "json"])
async def test_log_lines_hold_no_personal_value(start_worker: Any, emulator: Any,
                                                fmt: str) -> None:
    said = structured_utterances(6)
    model = emulator.unique_model("qwen2.5-7b")
    worker = await start_worker("w", CALLOUT_LOG_FORMAT=fmt, CALLOUT_ACCESS_LOG="true")
    async with httpx.AsyncClient(base_url=worker.url, timeout=30) as client:
        r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
            is_active=True, model=model, base_url=emulator.base_url("vllm")))
        assert r.status_code == 201, r.text
        await emulator.script(model, {"status": 400,
                                      "error_body": f'{{"error": "bad prompt: {said[0].text}"}}'},
                              times=1)
        await emulator.script(model, {"content": answer("agree", contact=said[1].values[0].text)},
                              times=1)
        body = {"call_id": said[2].values[0].text, "node_id": "n", "utterance": said[0].text,
                "intents": [{"name": "agree"}], "fallback_intent": "agree",
                "slots": [{"name": "contact"}]}
        r = await client.post("/api/nlu/decide", headers=SERVICE_HEADERS, json=body)
        assert r.status_code == 200 and r.json()["fallback"] is True
        r = await client.post("/api/nlu/decide", headers=SERVICE_HEADERS, json=body)
        assert r.json()["slots"]["contact"] == said[1].values[0].text  # live: as said
        r = await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS,
                             params={"call_id": said[3].values[0].text, "x": said[4].text})
        assert r.status_code == 200
    worker.stop()
    log = worker.log_path.read_text()
    # The vendor's body is in the failed call's line, the query in the access line: redacted.
    assert "model call failed" in log and "bad prompt" in log and "/api/admin/diagnostics" in log
    assert leaks(log, said) == [], [line for line in log.splitlines() if leaks(line, said)]
