"""A global intent the model named is kept with the decision's inputs and compared by a
shadow evaluation; a node that opted out of global intents is replayed opted out (the
whole app, the real emulator, PostgreSQL)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from sqlalchemy import select

from callout_server.calllog.models import NluCallInput
from tests.support.nlu import answer, decide, nlu_app
from tests.test_evaluation import candidate, finished, start


def named(intent: str, global_intent: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"intent": intent, "confidence": 0.8, "slots": {"time": None}}
    if global_intent is not None:
        body["global_intent"] = global_intent
    return {"content": orjson.dumps(body).decode()}


@pytest.fixture
def app_for(make_settings, pg_url, emulator):
    def build(model: str, **settings: Any):
        return nlu_app(make_settings, pg_url, emulator, model, **settings)
    return build


async def _kept(client: Any) -> dict[str, NluCallInput]:
    services = client.services
    await services.recorder.flush()
    async with services.db.session() as s:
        return {r.call_id: r for r in (await s.scalars(select(NluCallInput))).all()}


async def test_a_named_global_intent_is_kept_and_compared(app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    # live: g1 named opt_out (as its `intent`), g2 complaint beside refuse, g3 refuse only
    for reply in (named("opt_out"), named("refuse", "complaint"), named("refuse")):
        await emulator.script(live, reply, times=1)
    # the candidate, replayed newest first (g3, g2, g1) one at a time: names opt_out on g3,
    # names complaint beside refuse on g2, misses opt_out on g1 (the node's refuse)
    for reply in (named("refuse", "opt_out"), named("refuse", "complaint"), named("refuse")):
        await emulator.script(cand, reply, times=1)
    async with app_for(live, **{"evaluation.concurrency": 1}) as client:
        for call_id in ("g1", "g2", "g3"):
            r, _ = await decide(client, call_id=call_id, utterance="你们这个事情我很不满意")
            assert r.status_code == 200, r.text
        kept = await _kept(client)
        assert kept["g1"].decision["global_intent"] == "opt_out"
        assert kept["g2"].decision["global_intent"] == "complaint"
        assert "global_intent" not in kept["g3"].decision  # none named: as before
        cand_id = await candidate(client, emulator, cand)
        r = await start(client, candidate_id=cand_id, limit=10)
        assert r.status_code == 202, r.text
        body = await finished(client, r.json()["id"])
    assert body["status"] == "done", body
    s = body["summary"]
    assert (s["calls"], s["agreeing"], s["intent_agreement"]) == (3, 1, 0.3333)
    dis = {d["call_id"]: d for d in body["disagreements"]}
    assert set(dis) == {"g1", "g3"}
    assert (dis["g1"]["recorded"]["global_intent"], dis["g1"]["candidate"]["global_intent"]) == (
        "opt_out", None)
    assert (dis["g3"]["recorded"]["global_intent"], dis["g3"]["candidate"]["global_intent"]) == (
        None, "opt_out")
    assert dis["g1"]["intent_agrees"] is False and dis["g3"]["intent_agrees"] is False


async def test_a_node_that_opted_out_is_replayed_opted_out(app_for, emulator) -> None:
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(live, {"content": answer("refuse", time=None)}, times=1)
    await emulator.script(cand, {"content": answer("refuse", time=None)}, times=1)
    async with app_for(live) as client:
        r, _ = await decide(client, call_id="o1", utterance="别再给我打电话了",
                            global_intents=False)
        assert r.status_code == 200, r.text
        kept = await _kept(client)
        assert kept["o1"].inputs["global_intents"] is False
        cand_id = await candidate(client, emulator, cand)
        r = await start(client, candidate_id=cand_id, limit=10)
        body = await finished(client, r.json()["id"])
        assert body["summary"]["agreeing"] == 1
        sent = await emulator.requests(cand)
    prompt = "\n".join(m["content"] for m in sent[-1]["body"]["messages"])
    assert "全局意图" not in prompt  # the replay, like the live call, offered none
