"""`POST /api/nlu/decide` end to end: the whole app, the real emulator process, PostgreSQL.

Every diagnostic code is produced by a real upstream behaviour (scripted on the emulator)
and checked in the answer, in the error body or the fallback, and in the call log.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.fixtures.app import free_port
from tests.fixtures.database import ADMIN_HEADERS
from tests.support.nlu import answer, decide, nlu_app

# What a loaded machine (both cores busy) may add to one request. The timing tests below
# tell a limit that fired (0.3-0.5 s) from the one that did not (2 s and more), so their
# upper bounds are the limit plus this, not the limit plus a few milliseconds.
SLACK_S = 1.0


@pytest.fixture
def app_for(make_settings, pg_url, emulator):
    """`async with app_for(model, persona="vllm", **settings) as client`."""
    def build(model: str, persona: str = "vllm", **settings: Any):
        return nlu_app(make_settings, pg_url, emulator, model, persona, **settings)
    return build


async def records(client: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    await client.services.recorder.flush()  # type: ignore[attr-defined]
    r = await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS, params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


# -- decisions ------------------------------------------------------------------------------

async def test_chinese_utterance_decided_and_thinking_suppressed_in_json_mode(
        app_for, emulator) -> None:
    model = emulator.unique_model("qwen3-8b")  # a hybrid Qwen3: thinks unless told not to
    await emulator.script(model, {"content": answer("agree", 0.93, time="明天下午三点以后")})
    async with app_for(model) as client:
        r, _ = await decide(client)
        assert r.status_code == 200, r.text
        assert r.json() | {"latency_ms": 0} == {
            "intent": "agree", "confidence": 0.93, "slots": {"time": "明天下午三点以后"},
            "fallback": False, "model": model, "latency_ms": 0, "diagnostic": None,
            "global_intent": None}
        [rec] = await records(client)
    assert (rec["code"], rec["tier"], rec["call_id"], rec["node_id"]) == (
        "ok", "nlu", "c-20261129-0001", "confirm_time")
    assert rec["vendor"] and rec["prompt_tokens"] and rec["max_tokens"] == 300
    [sent] = await emulator.requests(model)
    body = sent["body"]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}  # the tier default: off
    assert body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 300 and body["stream"] is False
    prompt = "\n".join(m["content"] for m in body["messages"])
    assert "明天下午三点以后都可以" in prompt and "agree" in prompt and "请问您什么时候" in prompt


async def test_english_utterance_with_slots_coerced_and_confidence_clamped(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    slots = [{"name": "count", "type": "integer"}, {"name": "amount", "type": "number"},
             {"name": "vip", "type": "boolean"},
             {"name": "plan", "type": "enum", "values": ["gold", "silver"]},
             {"name": "note", "type": "string"}, {"name": "missing", "type": "string"}]
    content = ('Sure! {"intent": "Refuse", "confidence": "1.7", "slots": {"count": "3", '
               '"amount": "1,250.5", "vip": "yes", "plan": "GOLD", "note": 42, "extra": 1}}')
    await emulator.script(model, {"content": content})
    async with app_for(model) as client:
        r, _ = await decide(client, utterance="No thanks, I already have three gold cards.",
                            context=[], slots=slots, overrides={"max_tokens": 120})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["intent"] == "refuse" and got["confidence"] == 1.0 and got["fallback"] is False
    assert got["slots"] == {"count": 3, "amount": 1250.5, "vip": True, "plan": "gold",
                            "note": "42", "missing": None}
    [sent] = await emulator.requests(model)
    assert sent["body"]["max_tokens"] == 120  # the node's override wins over the config


async def test_overrides_outside_the_whitelist_are_422_naming_the_field(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with app_for(model) as client:
        r, _ = await decide(client, overrides={"top_p": 0.5})
        assert r.status_code == 422
        assert "overrides.top_p" in r.json()["error"]["message"]
        assert {"field": "overrides.top_p"}.items() <= r.json()["error"]["fields"][0].items()
        r, _ = await decide(client, overrides={"extra_params": {"model": "other"}})
        assert r.status_code == 422 and "overrides.extra_params" in r.text
    assert await emulator.requests(model) == []  # refused before any model call


# -- each diagnostic code -------------------------------------------------------------------

async def test_reasoning_that_eats_max_tokens_is_truncated_by_reasoning(app_for, emulator) -> None:
    # Thinking allowed by the node: the emulator's Qwen3 reasons ~600 tokens, the budget is 300.
    model = emulator.unique_model("qwen3-8b")
    async with app_for(model) as client:
        r, _ = await decide(client, fallback_intent="refuse", overrides={"enable_thinking": True})
        assert r.status_code == 200, r.text
        got = r.json()
        assert (got["intent"], got["fallback"], got["slots"]) == ("refuse", True, {"time": None})
        d = got["diagnostic"]
        assert d["code"] == "truncated_by_reasoning"
        assert (d["finish_reason"], d["max_tokens"]) == ("length", 300)
        assert d["advice"] == "调大 max_tokens 或关闭思考模式" and "300" in d["message"]
        [rec] = await records(client)
        assert rec["id"] == d["id"] and rec["code"] == "truncated_by_reasoning"
        assert rec["vendor"] == "selfhosted" and rec["finish_reason"] == "length"
    [sent] = await emulator.requests(model)  # a budget problem: retrying cannot help
    assert sent["body"]["chat_template_kwargs"] == {"enable_thinking": True}


async def test_always_thinking_model_reported_by_usage_no_fallback_is_502(app_for, emulator) -> None:
    # DashScope reports reasoning tokens in usage; a QwQ model thinks whatever we send.
    model = emulator.unique_model("qwq-32b")
    await emulator.script(model, {"reasoning_tokens": 300})
    async with app_for(model, persona="dashscope") as client:
        r, _ = await decide(client)
    assert r.status_code == 502
    err = r.json()["error"]
    assert err["code"] == "truncated_by_reasoning" and err["message"]
    assert err["diagnostic"]["reasoning_tokens"] == 300 and err["diagnostic"]["id"]


async def test_cut_answer_is_truncated(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": '{"intent": "agree", "slots": {"time": "明天',
                                  "finish_reason": "length"})
    async with app_for(model) as client:
        r, _ = await decide(client, fallback_intent="refuse")
    d = r.json()["diagnostic"]
    assert (r.status_code, d["code"], d["advice"]) == (200, "truncated", "调大 max_tokens")
    assert len(await emulator.requests(model)) == 1


async def test_truncation_is_the_clients_verdict_once(app_for, emulator) -> None:
    """A cut answer that holds no complete object is `truncated` (the client's verdict, not
    the extractor's `empty`); a whole decision before the cut is a decision, recorded ok."""
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": "我认为用户", "finish_reason": "length"}, times=1)
    await emulator.script(model, {"content": answer("agree", time="明天"),
                                  "finish_reason": "length"}, times=1)
    async with app_for(model) as client:
        r, _ = await decide(client, fallback_intent="refuse")
        d = r.json()["diagnostic"]
        assert (r.status_code, d["code"], d["finish_reason"]) == (200, "truncated", "length")
        r, _ = await decide(client, call_id="c-whole")
        assert r.status_code == 200 and r.json()["fallback"] is False, r.text
        assert r.json()["intent"] == "agree" and r.json()["diagnostic"] is None
        by_call = {rec["call_id"]: rec for rec in await records(client)}
    assert by_call["c-whole"]["code"] == "ok" and by_call["c-whole"]["finish_reason"] == "length"


async def test_empty_output(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": "", "finish_reason": "stop"})
    async with app_for(model) as client:
        r, _ = await decide(client)
    assert r.status_code == 502 and r.json()["error"]["code"] == "empty_output"
    assert "finish_reason=stop" in r.json()["error"]["message"]


async def test_invalid_json_is_the_answer_not_retried(app_for, emulator) -> None:
    # Invalid output is the model's answer, not an endpoint failure: no second request.
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": "客户应该是同意了"})
    async with app_for(model) as client:
        r, _ = await decide(client, fallback_intent="refuse")
        got = r.json()
        assert (r.status_code, got["intent"], got["fallback"]) == (200, "refuse", True)
        assert got["diagnostic"]["code"] == "invalid_json"
        recs = await records(client)
    assert len(await emulator.requests(model)) == 1
    assert [(x["code"], x["attempts"]) for x in recs] == [("invalid_json", 1)]
    assert recs[0]["id"] == got["diagnostic"]["id"]  # the answer names its record


async def test_intent_not_offered_is_schema_mismatch_never_passed_through(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("maybe_later", time="明天")})
    async with app_for(model) as client:
        r, _ = await decide(client)
        assert r.status_code == 502
        err = r.json()["error"]
        assert err["code"] == "schema_mismatch" and "maybe_later" in err["message"]
        # The offered names as a reader writes them, not a Python list's repr.
        assert "（agree, refuse）" in err["message"] and "[" not in err["message"], err
        assert "maybe_later" not in str(r.json().get("intent"))
        r, _ = await decide(client, fallback_intent="refuse")
        assert (r.json()["intent"], r.json()["fallback"]) == ("refuse", True)
    assert len(await emulator.requests(model)) == 2  # one per decision: not retried


async def test_slots_only_node_falls_back_with_no_intent(app_for, emulator) -> None:
    # A node that offers no intents says nothing about intents when its model fails: the
    # fallback answers `intent` null (the slots null), never the fallback name as an intent.
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"status": 400})
    async with app_for(model) as client:
        r, _ = await decide(client, intents=[], fallback_intent="retry_node")
        assert r.status_code == 200, r.text
        got = r.json()
        assert (got["intent"], got["fallback"], got["slots"]) == (None, True, {"time": None})
        assert got["diagnostic"]["code"] == "upstream_error"
        # Bounded as an intent name is: it would be answered and stored.
        r, _ = await decide(client, intents=[], fallback_intent="x" * 5000)
        assert r.status_code == 422
        assert [f["field"] for f in r.json()["error"]["fields"]] == ["fallback_intent"]
    assert len(await emulator.requests(model)) == 1  # the 422 sent nothing


async def test_upstream_timeout_shorter_than_deadline_is_timeout_504(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"hang": True})
    async with app_for(model) as client:
        r, elapsed = await decide(client, deadline_ms=3000, overrides={"timeout_s": 0.3})
    assert r.status_code == 504 and r.json()["error"]["code"] == "timeout"
    assert 0.25 < elapsed < 0.3 + SLACK_S  # the 0.3 s model timeout, not the 3 s deadline


async def test_config_timeout_applies_without_override(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"hang": True})
    async with app_for(model, **{"llm.nlu.timeout_s": 0.3}) as client:
        r, elapsed = await decide(client, fallback_intent="refuse", deadline_ms=5000)
    assert r.status_code == 200 and r.json()["diagnostic"]["code"] == "timeout"
    assert elapsed < 0.3 + SLACK_S  # not the 5 s deadline


async def test_deadline_shorter_than_upstream_answers_by_the_deadline(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree"), "ttft_ms": 5000})
    async with app_for(model) as client:
        r, elapsed = await decide(client, deadline_ms=300)
        assert r.status_code == 504
        err = r.json()["error"]
        assert err["code"] == "deadline_exceeded" and "deadline_ms=300" in err["message"]
        assert 0.28 < elapsed < 0.3 + SLACK_S  # by the deadline, not at the 5 s answer
        r, elapsed = await decide(client, deadline_ms=300, fallback_intent="refuse")
        assert r.status_code == 200 and r.json()["diagnostic"]["code"] == "deadline_exceeded"
        assert elapsed < 0.3 + SLACK_S


async def test_deadline_counts_from_the_requests_arrival(app_for, emulator) -> None:
    # The budget is the caller's: spent while its body arrived (or the worker's loop was
    # busy with others) before the decision began. A model answer after it is never given.
    import asyncio

    import orjson

    from tests.fixtures.database import SERVICE_HEADERS
    from tests.support.nlu import DECIDE, decide_body

    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree", time="明天")})
    body = orjson.dumps(decide_body(deadline_ms=300, fallback_intent="refuse"))

    async def trickle():  # type: ignore[no-untyped-def]
        yield body[:20]
        await asyncio.sleep(0.5)  # the caller's own delay: longer than its budget
        yield body[20:]

    async with app_for(model) as client:
        r = await client.post(DECIDE, content=trickle(),
                              headers={**SERVICE_HEADERS, "content-type": "application/json"})
        assert r.status_code == 200, r.text
        got = r.json()
        assert (got["intent"], got["fallback"]) == ("refuse", True)
        assert got["diagnostic"]["code"] == "deadline_exceeded" and got["latency_ms"] >= 500
        [rec] = await records(client)
        assert (rec["code"], rec["attempts"]) == ("deadline_exceeded", 0)
        assert await emulator.requests(model) == []  # no model call for a spent budget
        r, _ = await decide(client, deadline_ms=300)  # at once: the model answers
        assert (r.status_code, r.json()["intent"], r.json()["fallback"]) == (200, "agree", False)


async def test_retry_never_runs_past_the_deadline(app_for, emulator) -> None:
    # A slow 503 (transient: retried), then a retry that would take far too long.
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"status": 503, "ttft_ms": 250}, times=1)
    await emulator.script(model, {"content": answer("agree"), "ttft_ms": 5000})
    async with app_for(model) as client:
        r, elapsed = await decide(client, deadline_ms=500)
        assert r.status_code == 504 and r.json()["error"]["code"] == "deadline_exceeded"
        assert 0.45 < elapsed < 0.5 + SLACK_S  # not the retry's 5 s
        # One record for the call, counting both requests.
        assert [(x["code"], x["attempts"]) for x in await records(client)] == [
            ("deadline_exceeded", 2)]
    assert len(await emulator.requests(model)) == 2


@pytest.mark.parametrize(("status", "attempts"), [(429, 2), (500, 2), (400, 1)])
async def test_upstream_error_status_and_retry(app_for, emulator, status: int, attempts: int) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"status": status})
    async with app_for(model) as client:
        r, _ = await decide(client)
        assert r.status_code == 502
        d = r.json()["error"]["diagnostic"]
        assert (d["code"], d["status"]) == ("upstream_error", status)
        assert f"HTTP {status}" in d["message"]
        recs = await records(client)
        assert [(x["status"], x["attempts"]) for x in recs] == [(status, attempts)]
    assert len(await emulator.requests(model)) == attempts  # 429/5xx once more, 400 never


async def test_transient_500_then_success(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"status": 500}, times=1)
    await emulator.script(model, {"content": answer("refuse")})
    async with app_for(model) as client:
        r, _ = await decide(client)
    assert r.status_code == 200 and r.json()["intent"] == "refuse"
    assert len(await emulator.requests(model)) == 2


async def test_closed_port_is_connect_error(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    dead = f"http://127.0.0.1:{free_port()}/v1"
    async with app_for(model, **{"llm.nlu.base_url": dead}) as client:
        r, elapsed = await decide(client, deadline_ms=2000)
        assert r.status_code == 502
        assert r.json()["error"]["code"] == "connect_error"
        # Refused: the endpoint cools down at once, no second try at a closed port.
        assert [(x["code"], x["attempts"]) for x in await records(client)] == [
            ("connect_error", 1)]
        r, _ = await decide(client, fallback_intent="agree")
        assert r.status_code == 200 and r.json()["diagnostic"]["code"] == "connect_error"
    assert elapsed < 0.3 + SLACK_S  # refused at once, not at the 2 s deadline


async def test_locale_en_messages(app_for, emulator) -> None:
    model = emulator.unique_model("qwen3-8b")
    async with app_for(model, **{"server.locale": "en"}) as client:
        r, _ = await decide(client, fallback_intent="refuse", overrides={"enable_thinking": True},
                            utterance="Tomorrow after three works for me.")
        d = r.json()["diagnostic"]
        assert d["code"] == "truncated_by_reasoning"
        assert d["advice"] == "Raise max_tokens or turn thinking off"
        assert "max_tokens limit (300)" in d["message"]
        [rec] = await records(client)
        assert rec["advice"] == "Raise max_tokens or turn thinking off"
