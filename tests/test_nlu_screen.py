"""`POST /api/nlu/screen` end to end: the rules answer templated speech without a model
call, the model (the real emulator) answers the rest, a failing model answers `unknown`.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import orjson
import pytest

from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS
from tests.support.nlu import nlu_app

SCREEN = "/api/nlu/screen"
SLACK_S = 1.0


@pytest.fixture
def app_for(make_settings, pg_url, emulator):
    def build(model: str, **settings: Any):
        return nlu_app(make_settings, pg_url, emulator, model, **settings)
    return build


async def screen(client: httpx.AsyncClient, utterance: str, **fields: Any
                 ) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    r = await client.post(SCREEN, headers=SERVICE_HEADERS,
                          json={"call_id": "c-screen-1", "utterance": utterance, **fields})
    assert r.status_code == 200, r.text
    return r.json(), time.perf_counter() - started


async def records(client: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    await client.services.recorder.flush()  # type: ignore[attr-defined]
    r = await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS, params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


def verdict(answered_by: str, carrier_status: str | None = None) -> str:
    return orjson.dumps({"answered_by": answered_by, "carrier_status": carrier_status}).decode()


async def test_templated_speech_answered_by_the_rules_without_a_model_call(
        app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with app_for(model) as client:
        cases = {
            "您好！您拨打的电话已关机。Sorry! The subscriber you dialed is power off.":
                ("carrier", "powered_off"),
            "您拨打的号码是空号，请查证后再拨": ("carrier", "vacant"),
            "您好，机主的来电助理正在为您服务，请问您找他有什么事": ("voicemail", None),
            "欢迎致电某某银行，个人业务请按1": ("ivr", None),
            "  ，。 ": ("unknown", None),
        }
        for utterance, (who, status) in cases.items():
            got, _ = await screen(client, utterance)
            assert (got["answered_by"], got["carrier_status"], got["source"]) == (
                who, status, "rule"), utterance
            assert isinstance(got["latency_ms"], int)  # timing: bench/bench_guards_http.py
            assert got["diagnostic"] is None
        recs = await records(client, source="rule")
    assert await emulator.requests(model) == []  # no model call at all
    assert len(recs) == len(cases)
    powered = [r for r in recs if r["rule"].get("carrier_status") == "powered_off"]
    assert powered and powered[0]["rule"]["name"] == "screen.carrier.announcement"
    assert powered[0]["call_id"] == "c-screen-1" and powered[0]["model"] is None


async def test_a_person_saying_a_carrier_word_goes_to_the_model(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": verdict("human")})
    async with app_for(model) as client:
        got, _ = await screen(client, "我手机快关机了你快说")
        assert (got["answered_by"], got["carrier_status"], got["source"]) == (
            "human", None, "model")
        [rec] = await records(client)
    assert (rec["code"], rec["source"], rec["tier"], rec["call_id"]) == (
        "ok", "live", "nlu", "c-screen-1")
    [sent] = await emulator.requests(model)
    body = sent["body"]
    assert body["response_format"] == {"type": "json_object"} and body["max_tokens"] == 40
    assert "我手机快关机了你快说" in body["messages"][1]["content"]


async def test_model_status_kept_only_for_a_carrier(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": '{"answered_by": "Carrier", "carrier_status": "busy"}'},
                          times=1)
    await emulator.script(model, {"content": verdict("human", "busy")})
    async with app_for(model) as client:
        first, _ = await screen(client, "嘟嘟嘟")
        second, _ = await screen(client, "嘟嘟嘟")
    assert (first["answered_by"], first["carrier_status"]) == ("carrier", "busy")
    assert (second["answered_by"], second["carrier_status"]) == ("human", None)


@pytest.mark.parametrize(("script", "code"), [
    ({"status": 500}, "upstream_error"),
    ({"content": "这是一个人"}, "invalid_json"),
    ({"content": '{"answered_by": "robot"}'}, "schema_mismatch"),
])
async def test_a_model_failure_answers_unknown_with_the_diagnostic(
        app_for, emulator, script: dict[str, Any], code: str) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, script)
    async with app_for(model) as client:
        got, _ = await screen(client, "嗯嗯好的那个")
        [rec] = await records(client)
    assert (got["answered_by"], got["carrier_status"], got["source"]) == (
        "unknown", None, "fallback")
    assert got["diagnostic"]["code"] == code and got["diagnostic"]["id"] == rec["id"]
    assert rec["code"] == code


async def test_the_deadline_bounds_the_model(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": verdict("human"), "ttft_ms": 5000})
    async with app_for(model) as client:
        got, elapsed = await screen(client, "嗯嗯好的那个", deadline_ms=300)
    assert (got["answered_by"], got["source"]) == ("unknown", "fallback")
    assert got["diagnostic"]["code"] == "deadline_exceeded"
    assert elapsed < 0.3 + SLACK_S


async def test_refusals(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with app_for(model) as client:
        r = await client.post(SCREEN, json={"utterance": "喂"})
        assert r.status_code == 401
        r = await client.post(SCREEN, headers=SERVICE_HEADERS,
                              json={"utterance": "喂", "deadline_ms": 10})
        assert r.status_code == 422
        assert [f["field"] for f in r.json()["error"]["fields"]] == ["deadline_ms"]
        r = await client.post(SCREEN, headers=SERVICE_HEADERS, json={"utterance": "x" * 5000})
        assert r.status_code == 422
