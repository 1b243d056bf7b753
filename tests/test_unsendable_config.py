"""A configuration the HTTP client cannot send, got in beside the API (a row saved by an older
version): every tier answers with a `connect_error` diagnostic (the NLU fallback intent
honoured, chat and script streams ending with their `end` event), never a 500, and nothing
reaches the upstream. Through the whole app on PostgreSQL."""

from __future__ import annotations

import json
import logging
from typing import Any

import asyncpg
import pytest

from callout_server.config.secrets import SecretBox
from tests.fixtures.database import (
    ADMIN_HEADERS,
    SECRET_KEY,
    SERVICE_HEADERS,
    asyncpg_dsn,
    llm_config_body,
)
from tests.support.nlu import decide_body
from tests.test_config_credentials import BAD_KEYS, SECRET

URL = "/api/admin/llm-configs"
CASES = {
    "key-crlf": (BAD_KEYS["CR LF"], None),
    "key-nul": (BAD_KEYS["NUL"], None),
    "key-non-ascii": (BAD_KEYS["non-ASCII"], None),
    "url-credentials": (SECRET, "http://bob:{pw}@{hostport}"),
}
PASSWORD = "hunter2" + "pw"


async def _install(client, pg_url: str, emulator, model: str, case: str) -> dict[str, int]:
    """One active configuration per tier on the emulator, then the bad value written raw."""
    bad_key, url_template = CASES[case]
    ids = {}
    for tier in ("nlu", "chat", "script"):
        r = await client.post(URL, headers=ADMIN_HEADERS, json=llm_config_body(
            tier=tier, model=model, base_url=emulator.base_url("vllm"), api_key="sk-fine-0000000000",
            is_active=True))
        assert r.status_code == 201, r.text
        ids[tier] = r.json()["id"]
    box = SecretBox(SECRET_KEY)
    base_url = emulator.base_url("vllm")
    if url_template:
        hostport = base_url.split("://", 1)[1]
        base_url = "http://" + url_template.format(pw=PASSWORD, hostport=hostport).split("://", 1)[1]
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        await conn.execute("UPDATE callout.ai_llm_configs SET api_key_enc = $1, base_url = $2",
                           box.encrypt(bad_key), base_url)
    finally:
        await conn.close()
    await client.services.store.refresh()  # type: ignore[attr-defined]
    return ids


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        name = next(line[7:] for line in block.splitlines() if line.startswith("event: "))
        data = "".join(line[6:] for line in block.splitlines() if line.startswith("data: "))
        events.append((name, json.loads(data)))
    return events


def _clean(text: str) -> bool:
    return SECRET[:10] not in text and SECRET[-10:] not in text and PASSWORD not in text


@pytest.mark.parametrize("case", sorted(CASES))
async def test_every_tier_answers_with_a_diagnostic(app_client, pg_url, emulator, caplog,
                                                    case: str) -> None:
    caplog.set_level(logging.DEBUG)
    model = emulator.unique_model("qwen3-8b")
    ids = await _install(app_client, pg_url, emulator, model, case)
    answers: list[str] = []

    # NLU: the fallback intent is honoured; without one, a 502 carrying the diagnostic.
    r = await app_client.post("/api/nlu/decide", headers=SERVICE_HEADERS,
                              json=decide_body(fallback_intent="refuse"))
    answers.append(r.text)
    assert r.status_code == 200, r.text
    decision = r.json()
    assert decision["fallback"] is True and decision["intent"] == "refuse"
    assert decision["diagnostic"]["code"] == "connect_error"
    r = await app_client.post("/api/nlu/decide", headers=SERVICE_HEADERS, json=decide_body())
    answers.append(r.text)
    assert r.status_code == 502 and r.json()["error"]["code"] == "connect_error"

    # Chat: the turn stream ends with its `end` event, carrying the error.
    r = await app_client.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                              json={"call_id": f"c-{case}"})
    assert r.status_code == 201, r.text
    r = await app_client.post(f"/api/chat/sessions/c-{case}/turns", headers=SERVICE_HEADERS,
                              json={"turn_id": "t1", "text": "喂", "output": "text"})
    answers.append(r.text)
    assert r.status_code == 200
    events = _sse(r.text)
    assert [n for n, _ in events].count("end") == 1 and events[-1][0] == "end", events
    assert events[-1][1]["error"]["code"] == "connect_error"

    # Script: streamed, `end` with the error; not streamed, a 502 with the diagnostic.
    r = await app_client.post("/api/scripts/generate", headers=SERVICE_HEADERS,
                              json={"brief": "回访", "stream": True})
    answers.append(r.text)
    events = _sse(r.text)
    assert events[-1][0] == "end" and events[-1][1]["error"]["code"] == "connect_error", events
    r = await app_client.post("/api/scripts/generate", headers=SERVICE_HEADERS,
                              json={"brief": "回访", "stream": False})
    answers.append(r.text)
    assert r.status_code == 502 and r.json()["error"]["code"] == "connect_error"

    # The connectivity test says the same.
    r = await app_client.post(f"{URL}/{ids['nlu']}/test", headers=ADMIN_HEADERS)
    answers.append(r.text)
    assert r.status_code == 200 and r.json()["ok"] is False
    assert r.json()["diagnostic"]["code"] == "connect_error"

    assert await emulator.requests(model) == []  # nothing was sent upstream
    await app_client.services.recorder.flush()  # type: ignore[attr-defined]
    r = await app_client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS)
    answers.append(r.text)
    codes = {item["code"] for item in r.json()["items"]}
    assert codes == {"connect_error"}
    for text in answers:
        assert _clean(text), text
    assert _clean("\n".join(f"{rec.getMessage()} {rec.exc_text or ''}" for rec in caplog.records))
