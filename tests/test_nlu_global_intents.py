"""Global intents in `POST /api/nlu/decide`: a phrase rule answers at once without a model
call; otherwise the model is offered them and may name one; a node can opt out; with none
enabled the decision is the node's own (the whole app, the real emulator, PostgreSQL)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from prometheus_client import REGISTRY

from tests.fixtures.database import ADMIN_HEADERS
from tests.support.nlu import answer, decide, nlu_app
from tests.test_nlu_decide import records

GLOBAL = "/api/admin/nlu/global-intents"


@pytest.fixture
def app_for(make_settings, pg_url, emulator):
    def build(model: str, **settings: Any):
        return nlu_app(make_settings, pg_url, emulator, model, **settings)
    return build


def counted(intent: str, node: str, source: str) -> float:
    return REGISTRY.get_sample_value("callout_nlu_global_intents_total",
                                     {"intent": intent, "node": node, "source": source}) or 0.0


async def prompt_of(emulator: Any, model: str) -> str:
    sent = await emulator.requests(model)
    return "\n".join(m["content"] for m in sent[-1]["body"]["messages"])


@pytest.mark.parametrize(("utterance", "name", "action"), [
    ("你们别再给我打电话了！", "opt_out", "end_call"),
    ("Please stop calling me.", "opt_out", "end_call"),
    ("我要去12315投诉你们", "complaint", "flag"),
    ("帮我转人工", "human_agent", "transfer"),
])
async def test_a_rule_hit_answers_without_a_model_call(
        app_for, emulator, utterance: str, name: str, action: str) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    before = counted(name, "confirm_time", "rule")
    async with app_for(model) as client:
        r, _ = await decide(client, utterance=utterance)
        assert r.status_code == 200, r.text
        got = r.json()
        assert got | {"latency_ms": 0} == {
            "intent": None, "confidence": None, "slots": {"time": None}, "fallback": False,
            "model": None, "latency_ms": 0, "diagnostic": None,
            "global_intent": {"name": name, "action": action, "source": "rule"}}
        [rec] = await records(client)
    assert await emulator.requests(model) == []
    assert (rec["source"], rec["code"], rec["node_id"], rec["model"]) == (
        "rule", "ok", "confirm_time", None)
    assert rec["rule"]["name"] == f"global_intent.{name}" and rec["rule"]["intent"] == name
    assert rec["rule"]["phrase"]  # the phrase as configured, never the customer's words
    assert counted(name, "confirm_time", "rule") == before + 1


@pytest.mark.parametrize("utterance", [
    "我不投诉就问问", "不用转人工你说吧", "我没说不要", "不需要", "下周再打吧", "晚点打给我",
])
async def test_negations_and_callbacks_are_no_hit_and_go_to_the_model(
        app_for, emulator, utterance: str) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("refuse", time=None)})
    async with app_for(model) as client:
        r, _ = await decide(client, utterance=utterance)
    assert r.status_code == 200, r.text
    assert (r.json()["intent"], r.json()["global_intent"]) == ("refuse", None)
    prompt = await prompt_of(emulator, model)
    assert "全局意图" in prompt and "- opt_out:" in prompt and "- human_agent:" in prompt
    assert "global_intent" in prompt


@pytest.mark.parametrize(("content", "intent", "named"), [
    ({"intent": "refuse", "global_intent": "complaint"}, "refuse", ("complaint", "flag")),
    ({"intent": "refuse", "global_intent": "Human_Agent"}, "refuse", ("human_agent", "transfer")),
    ({"intent": "opt_out"}, None, ("opt_out", "end_call")),  # named where the node's goes
    ({"intent": "agree", "global_intent": "made_up"}, "agree", None),
    ({"intent": "agree", "global_intent": None}, "agree", None),
])
async def test_the_model_may_name_a_global_intent(
        app_for, emulator, content: dict[str, Any], intent: str | None,
        named: tuple[str, str] | None) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    body = {"confidence": 0.8, "slots": {"time": None}, **content}
    await emulator.script(model, {"content": orjson.dumps(body).decode()})
    async with app_for(model) as client:
        r, _ = await decide(client, utterance="你们这个事情我很不满意")
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["intent"], got["fallback"]) == (intent, False)
    assert got["global_intent"] == (None if named is None else {
        "name": named[0], "action": named[1], "source": "model"})


async def test_a_node_can_opt_out(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("refuse", time=None)})
    async with app_for(model) as client:
        r, _ = await decide(client, utterance="别再给我打电话了", global_intents=False)
    assert r.status_code == 200, r.text
    assert (r.json()["intent"], r.json()["global_intent"]) == ("refuse", None)
    assert "全局意图" not in await prompt_of(emulator, model)


async def test_with_none_enabled_decisions_are_as_before(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("refuse", time=None)})
    async with app_for(model, **{"global_intents.enabled": False}) as client:
        listed = (await client.get(GLOBAL, headers=ADMIN_HEADERS)).json()
        assert [i["enabled"] for i in listed["items"]] == [False, False, False]
        r, _ = await decide(client, utterance="别再给我打电话了")
        assert (r.json()["intent"], r.json()["global_intent"]) == ("refuse", None)
        with_none = await prompt_of(emulator, model)
        r, _ = await decide(client, utterance="别再给我打电话了", global_intents=False)
        assert await prompt_of(emulator, model) == with_none  # the node's own prompt
    assert "全局意图" not in with_none


async def test_a_save_changes_the_next_decision(app_for, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("refuse", time=None)})
    async with app_for(model) as client:
        r = await client.put(GLOBAL, headers=ADMIN_HEADERS, json={"version": 0, "items": [
            {"name": "wrong_person", "description": "打错了", "action": "end_call",
             "phrases": ["你打错了", "wrong number"]}]})
        assert r.status_code == 200, r.text
        r, _ = await decide(client, utterance="你打错了吧")
        assert r.json()["global_intent"] == {"name": "wrong_person", "action": "end_call",
                                             "source": "rule"}
        r, _ = await decide(client, utterance="别再给我打电话了")  # opt_out is gone
        assert r.json()["global_intent"] is None and r.json()["intent"] == "refuse"


def test_metric_labels_stay_bounded() -> None:
    from callout_server.tiers.nlu import metrics

    for n in range(metrics.MAX_NODES + 50):
        metrics.global_intent("opt_out", f"node-{n}-" + "x" * 100, "rule")
    nodes = {s.labels["node"] for m in REGISTRY.collect()
             if m.name == "callout_nlu_global_intents" for s in m.samples
             if s.name.endswith("_total")}
    assert len(nodes) <= metrics.MAX_NODES + 2  # the first ones seen, _other and _none
    assert metrics.OTHER_NODE in nodes and max(len(n) for n in nodes) <= 64
