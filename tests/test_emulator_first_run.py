"""A newcomer's first calls: the whole app against the unscripted emulator process, as with
the shipped config.toml (NLU `qwen3.5-2b`, script `qwen3.6-27b-fp8`, both on the vLLM
persona). The answers must look like a model's, not like failures.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from callout_server.emulator.tokens import pieces, prompt_tokens
from callout_server.tiers.script.prompt import build_messages
from tests.fixtures.database import SERVICE_HEADERS
from tests.fixtures.emulator import EmulatorHandle
from tests.support.nlu import DECIDE, nlu_app
from tests.support.scripts import (
    BRIEF,
    MakeSettings,
    generate,
    get_draft,
    script_app,
    stream_events,
    streamed_text,
)

# README.md "A dialer worker's call", verbatim.
README_NODE: dict[str, Any] = {
    "call_id": "c-20261129-0001", "node_id": "confirm_time",
    "utterance": "明天下午三点以后都可以",
    "intents": [{"name": "agree", "description": "客户同意并给出时间"},
                {"name": "refuse", "description": "客户拒绝"}],
    "slots": [{"name": "time", "description": "客户方便的时间", "type": "string"}],
    "fallback_intent": "refuse", "deadline_ms": 1500}
SECTIONS = ("【角色与目标】", "【开场白】", "【主流程】", "【分支应对】", "【合规要点】",
            "【需收集的槽位】", "【结束语】")


async def post_decide(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    r = await client.post(DECIDE, headers=SERVICE_HEADERS, json=body)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("overrides", [
    {},  # the tier's default: thinking off
    {"enable_thinking": True, "max_tokens": 1500},  # thinking, with room for the answer
])
async def test_readme_nlu_example_is_answered_like_a_model(
        make_settings: MakeSettings, pg_url: str, emulator: EmulatorHandle,
        overrides: dict[str, Any]) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        got = await post_decide(client, README_NODE | {"overrides": overrides})
    assert got["intent"] == "agree" and got["fallback"] is False and got["diagnostic"] is None
    assert got["confidence"] is not None and 0.6 <= got["confidence"] <= 0.95
    assert "明天下午三点" in got["slots"]["time"]
    [sent] = await emulator.requests(model)
    assert sent["body"]["chat_template_kwargs"] == {"enable_thinking": bool(overrides)}


async def test_english_node_through_the_app_fills_every_slot_type(
        make_settings: MakeSettings, pg_url: str, emulator: EmulatorHandle) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    node = {"utterance": "Yes please, two silver cards, call me tomorrow at 3pm",
            "intents": [{"name": "decline", "description": "customer says no"},
                        {"name": "accept", "description": "customer agrees to the offer"}],
            "slots": [{"name": "cards", "type": "integer"},
                      {"name": "plan", "type": "enum", "values": ["gold", "silver"]},
                      {"name": "member", "type": "boolean", "description": "wants to join"},
                      {"name": "when", "type": "string", "description": "callback time"}]}
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        got = await post_decide(client, node)
    assert got["intent"] == "accept" and 0.6 <= got["confidence"] <= 0.95
    assert got["slots"] == {"cards": 2, "plan": "silver", "member": True,
                            "when": "tomorrow at 3pm"}


async def test_generated_script_is_script_shaped_with_plausible_usage(
        make_settings: MakeSettings, pg_url: str, emulator: EmulatorHandle) -> None:
    # The shipped script model: a Qwen3.6 that thinks unless told not to.
    model = emulator.unique_model("qwen3.6-27b-fp8")
    async with script_app(make_settings, pg_url, emulator, model, persona="vllm") as c:
        r = await generate(c)
        assert r.status_code == 200, r.text
        body = r.json()
        draft = await get_draft(c, body["draft_id"])
    script = body["script"]
    assert body["complete"] is True and body["diagnostic"] is None
    assert [s for s in SECTIONS if s in script] == list(SECTIONS)
    assert "净水器" in script and "转接人工" in script and len(script) > 300
    # Usage is what was produced: the answer's tokens (one per CJK character) plus the
    # reasoning the model spent (kept beside the draft, never in the script).
    assert draft["reasoning"].startswith("需求是：" + BRIEF)
    reasoning_tokens = len(pieces(draft["reasoning"]))
    assert body["usage"]["completion_tokens"] == len(pieces(script)) + reasoning_tokens
    prompt = "\n".join(m["content"] for m in build_messages(BRIEF))
    assert body["usage"]["prompt_tokens"] == prompt_tokens(prompt)


async def test_script_without_reasoning_counts_only_its_text_and_streams_the_same(
        make_settings: MakeSettings, pg_url: str, emulator: EmulatorHandle) -> None:
    model = emulator.unique_model("deepseek-chat")  # never reasons
    async with script_app(make_settings, pg_url, emulator, model) as c:
        body = (await generate(c, save=False)).json()
        events = await stream_events(c, save=False)
    script, usage = body["script"], body["usage"]
    assert usage["reasoning_tokens"] in (0, None)
    assert 0.8 * len(script) <= usage["completion_tokens"] <= len(script)  # mostly CJK
    assert streamed_text(events) == script

    english = emulator.unique_model("deepseek-chat")
    async with script_app(make_settings, pg_url, emulator, english) as c:
        body = (await generate(c, save=False, brief=(
            "Remind members that their card expires next month and offer a renewal "
            "discount"))).json()
    script, usage = body["script"], body["usage"]
    assert "[Opening]" in script and "your card expires next month" in script
    assert len(script) / 6 <= usage["completion_tokens"] <= len(script) / 3  # ~4 chars/token
