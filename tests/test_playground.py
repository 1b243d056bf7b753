"""The console's playground: any configuration of the tier, recorded as `source: "playground"`.

A try-out is never live traffic: the live summary and metrics leave it out, an NLU
decision's inputs are not kept (so shadow evaluation can never replay it), and a console
user's chat session records its turns the same way. The dialer's own calls stay live.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from tests.fixtures.app import running_app
from tests.fixtures.database import (
    ADMIN_HEADERS,
    EN,
    SERVICE_HEADERS,
    llm_config_body,
    reset_tables,
)
from tests.fixtures.people import People
from tests.fixtures.upstream import json_reply
from tests.support.nlu import DECIDE, answer, decide_body

PLAY = "/api/admin/playground"


def _completion(content: str, model: str = "m") -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


@pytest.fixture
async def app(make_settings, pg_url, upstream) -> AsyncIterator[httpx.AsyncClient]:
    await reset_tables(pg_url)
    upstream.reply = json_reply(_completion(answer("agree", 0.9, time="明天")))
    tiers = {f"llm.{tier}.base_url": upstream.base_url for tier in ("nlu", "chat", "script")}
    async with running_app(make_settings(**tiers)) as client:
        yield client


async def _config(app: httpx.AsyncClient, upstream: Any, **fields: Any) -> int:
    r = await app.post("/api/admin/llm-configs", headers=ADMIN_HEADERS,
                       json=llm_config_body(base_url=upstream.base_url, **fields))
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


async def _records(app: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    await app.services.recorder.flush()  # type: ignore[attr-defined]
    r = await app.get("/api/admin/diagnostics", headers=ADMIN_HEADERS, params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


async def test_a_try_out_uses_the_chosen_configuration_and_is_no_live_traffic(
        app, upstream) -> None:
    candidate = await _config(app, upstream, name="nlu-candidate", model="candidate-model")
    body = decide_body(deadline_ms=5000, instructions="只判断客户是否同意",
                       context=[{"role": "assistant", "content": "您明天方便吗？"}])
    r = await app.post(PLAY + "/nlu", headers=ADMIN_HEADERS, params={"config_id": candidate},
                       json=body)
    assert r.status_code == 200, r.text
    assert r.json()["intent"] == "agree" and r.json()["model"] == "candidate-model"
    sent = upstream.requests[-1].json()
    assert sent["model"] == "candidate-model"
    prompt = orjson.dumps(sent["messages"]).decode()
    assert "只判断客户是否同意" in prompt and "您明天方便吗" in prompt
    # Without config_id: the tier's active configuration.
    r = await app.post(PLAY + "/nlu", headers=ADMIN_HEADERS, json=decide_body())
    assert r.status_code == 200 and upstream.requests[-1].json()["model"] == "qwen3.5-2b"

    played = await _records(app, source="playground")
    assert [(x["tier"], x["config_id"]) for x in played] == [("nlu", None), ("nlu", candidate)]
    assert await _records(app, source="live") == []
    summary = (await app.get("/api/admin/diagnostics/summary", headers=ADMIN_HEADERS)).json()
    assert "nlu" not in summary, summary
    nodes = (await app.get("/api/admin/evaluations/nodes", headers=ADMIN_HEADERS)).json()
    assert nodes["items"] == [], nodes  # no inputs kept: nothing a replay could pick

    # The dialer's call is live and its inputs are kept, as before.
    r = await app.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body(node_id="n1"))
    assert r.status_code == 200, r.text
    assert [x["tier"] for x in await _records(app, source="live")] == ["nlu"]
    nodes = (await app.get("/api/admin/evaluations/nodes", headers=ADMIN_HEADERS)).json()
    assert [n["node_id"] for n in nodes["items"]] == ["n1"]


async def test_a_script_try_out_with_another_configuration(app, upstream) -> None:
    candidate = await _config(app, upstream, tier="script", name="script-candidate",
                              model="writer-2", max_tokens=2000)
    upstream.reply = json_reply(_completion("【开场白】您好，我是客服小李。", "writer-2"))
    r = await app.post(PLAY + "/script", headers=ADMIN_HEADERS, params={"config_id": candidate},
                       json={"brief": "提醒客户还款", "save": False})
    assert r.status_code == 200, r.text
    assert r.json()["model"] == "writer-2" and r.json()["script"].startswith("【开场白】")
    assert [(x["tier"], x["config_id"]) for x in await _records(app, source="playground")] \
        == [("script", candidate)]


async def test_a_configuration_of_another_tier_or_none_is_refused(app, upstream) -> None:
    chat = await _config(app, upstream, tier="chat", name="chat-x", max_tokens=200)
    r = await app.post(PLAY + "/nlu", headers={**ADMIN_HEADERS, **EN},
                       params={"config_id": chat}, json=decide_body())
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "config_wrong_tier" and "config_id" in error["message"]
    assert "chat" in error["message"]
    r = await app.post(PLAY + "/nlu", headers=ADMIN_HEADERS, params={"config_id": 999_999},
                       json=decide_body())
    assert r.status_code == 404, r.text
    r = await app.post(PLAY + "/nlu", headers=SERVICE_HEADERS, json=decide_body())
    assert r.status_code == 403, r.text  # the dialer's token is no console user
    assert upstream.requests == []
    assert await _records(app) == []


async def test_a_console_users_chat_session_is_the_playground(app, upstream) -> None:
    from tests.fixtures.upstream import sse_reply

    def chunk(text: str, finish: str | None = None) -> bytes:
        return b"data: " + orjson.dumps({"choices": [
            {"delta": {"content": text}, "finish_reason": finish}]}) + b"\n\n"

    people = People(app)
    try:
        operator = await people.as_role("operator")
        for client, call_id in ((operator, "pg-1"), (None, "live-1")):
            http = client or app
            headers = {} if client else SERVICE_HEADERS
            upstream.reply = sse_reply([(0, chunk("您好。", "stop")), (0, b"data: [DONE]\n\n")])
            r = await http.post("/api/chat/sessions", headers=headers,
                                json={"call_id": call_id, "system_prompt": "你是客服"})
            assert r.status_code == 201, r.text
            r = await http.post(f"/api/chat/sessions/{call_id}/turns", headers=headers,
                                json={"turn_id": "t1", "text": "你好", "output": "text"})
            assert '"reason":"completed"' in r.text, r.text
    finally:
        await people.aclose()
    assert [x["call_id"] for x in await _records(app, source="playground")] == ["pg-1"]
    assert [x["call_id"] for x in await _records(app, source="live")] == ["live-1"]


async def test_a_chat_try_out_with_another_configuration(app, upstream) -> None:
    from tests.fixtures.upstream import sse_reply

    candidate = await _config(app, upstream, tier="chat", name="chat-candidate",
                              model="talker-2", max_tokens=200)
    upstream.reply = sse_reply([(0, b'data: {"choices":[{"delta":{"content":"\xe6\x82\xa8\xe5'
                                    b'\xa5\xbd\xe3\x80\x82"},"finish_reason":"stop"}]}\n\n'),
                                (0, b"data: [DONE]\n\n")])
    r = await app.post(PLAY + "/chat/sessions", headers=ADMIN_HEADERS,
                       params={"config_id": candidate},
                       json={"call_id": "pg-chat", "system_prompt": "你是客服"})
    assert r.status_code == 201, r.text
    r = await app.post("/api/chat/sessions/pg-chat/turns", headers=ADMIN_HEADERS,
                       json={"turn_id": "t1", "text": "你好", "output": "text"})
    assert '"reason":"completed"' in r.text, r.text
    assert upstream.requests[-1].json()["model"] == "talker-2"
    assert [(x["tier"], x["config_id"], x["call_id"])
            for x in await _records(app, source="playground")] == [("chat", candidate, "pg-chat")]
    nlu = await _config(app, upstream, name="nlu-y")
    r = await app.post(PLAY + "/chat/sessions", headers=ADMIN_HEADERS, params={"config_id": nlu},
                       json={"call_id": "pg-chat-2"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "config_wrong_tier"
