"""Script generation over HTTP against the real emulator: streamed and not, reasoning kept
apart, the thinking switch, and every call in the call log (tier `script`).

Failures (truncation, upstream errors, timeouts, disconnects): test_scripts_faults.py.
Drafts, validation, auth and the prompt: test_scripts_drafts.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.emulator import EmulatorHandle
from tests.support.chat import chunks_of
from tests.support.scripts import (
    BRIEF,
    SCRIPT,
    MakeSettings,
    end_of,
    generate,
    get_draft,
    script_app,
    script_records,
    stream_events,
    streamed_text,
)

THOUGHT = "先想想：客户买了净水器，开场要说明身份和来意，再问安装是否满意。"


async def test_generate_non_streamed_saves_a_complete_draft(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")  # never reasons
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await generate(c, title="净水器回访")
        assert r.status_code == 200, r.text
        body = r.json()
        assert set(body) == {"script", "complete", "model", "usage", "diagnostic", "draft_id",
                             "draft_error"}
        assert body["draft_error"] is None
        assert body["script"] == SCRIPT and body["complete"] is True
        assert body["model"] == model and body["diagnostic"] is None
        assert body["usage"]["completion_tokens"] > 0 and body["usage"]["prompt_tokens"] > 0

        draft = await get_draft(c, body["draft_id"])
        assert (draft["title"], draft["brief"], draft["script"]) == ("净水器回访", BRIEF, SCRIPT)
        assert draft["status"] == "complete" and draft["reasoning"] is None
        assert draft["model"] == model and draft["version"] == 1
        assert draft["usage"] == body["usage"]
        assert draft["updated_by"] and draft["created_at"] and draft["updated_at"]

        (rec,) = await script_records(c)
        assert (rec["code"], rec["model"], rec["tier"]) == ("ok", model, "script")
        assert rec["vendor"] == "deepseek" and rec["latency_ms"] > 0
        assert rec["completion_tokens"] == body["usage"]["completion_tokens"]
    (sent,) = await emulator.requests(model)
    assert sent["stream"] is False and sent["body"]["max_tokens"] == 3000


async def test_generate_without_saving_and_default_title(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        r = await generate(c, save=False)
        assert r.status_code == 200 and r.json()["draft_id"] is None
        r = await generate(c)  # no title: the brief's first line, shortened
        assert (await get_draft(c, r.json()["draft_id"]))["title"] == BRIEF[:60]


async def test_stream_text_deltas_in_order_then_usage_and_one_end(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-chat")
    pieces = chunks_of(SCRIPT, 5)
    await emulator.script(model, {"chunks": pieces, "token_delay_ms": 5})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        events = await stream_events(c, title="流式")
        end = end_of(events)
        assert [e.data["text"] for e in events if e.name == "text_delta"] == pieces
        usage = events[-2].data
        assert usage["completion_tokens"] > 0 and "reasoning_tokens" in usage
        assert end == {"event": "end", "reason": "completed", "error": None, "diagnostic": None,
                       "draft_id": end["draft_id"]}
        draft = await get_draft(c, end["draft_id"])
        assert draft["script"] == SCRIPT and draft["status"] == "complete"
        assert draft["title"] == "流式" and draft["usage"]["completion_tokens"] == \
            usage["completion_tokens"]
        (rec,) = await script_records(c)
        assert rec["code"] == "ok" and rec["finish_reason"] == "stop"
        assert rec["vendor"] == "deepseek" and rec["ttft_ms"] > 0 and rec["max_tokens"] == 3000
    (sent,) = await emulator.requests(model)
    assert sent["stream"] is True


@pytest.mark.parametrize(("persona", "family"), [("deepseek", "deepseek-v4-flash"),
                                                 ("dashscope", "qwen3-32b")])
async def test_stream_keeps_reasoning_out_of_the_script(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle, persona: str, family: str,
) -> None:
    model = emulator.unique_model(family)  # hybrid, thinks by default: the vendor decides
    await emulator.script(model, {"content": SCRIPT, "reasoning": THOUGHT})
    async with script_app(make_settings, pg_url, emulator, model, persona=persona) as c:
        events = await stream_events(c)
        end = end_of(events)
        assert end["reason"] == "completed"
        assert streamed_text(events) == SCRIPT  # nothing of the reasoning reached the client
        assert all("先想想" not in e.data.get("text", "") for e in events)
        assert events[-2].data["reasoning_tokens"] > 0
        draft = await get_draft(c, end["draft_id"])
        assert draft["script"] == SCRIPT and draft["reasoning"] == THOUGHT
        assert draft["usage"]["reasoning_tokens"] > 0


async def test_non_streamed_keeps_reasoning_out_of_the_script(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-v4-flash")
    await emulator.script(model, {"content": SCRIPT, "reasoning": THOUGHT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        body = (await generate(c)).json()
        assert body["script"] == SCRIPT and body["complete"] is True
        assert body["usage"]["reasoning_tokens"] > 0
        draft = await get_draft(c, body["draft_id"])
        assert draft["script"] == SCRIPT and draft["reasoning"] == THOUGHT


async def test_inline_think_is_split_off_without_a_reasoning_parser(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    # A vLLM started without --reasoning-parser puts <think>…</think> inside `content`.
    model = emulator.unique_model("qwen3-32b")
    await emulator.script(model, {"content": SCRIPT, "reasoning": THOUGHT})
    async with script_app(make_settings, pg_url, emulator, model, persona="vllm-noparser") as c:
        body = (await generate(c)).json()
        assert body["script"] == SCRIPT and "<think>" not in body["script"]
        assert THOUGHT in (await get_draft(c, body["draft_id"]))["reasoning"]

        events = await stream_events(c)
        end = end_of(events)
        text = streamed_text(events)
        assert text == SCRIPT and "think>" not in text and "先想想" not in text
        assert THOUGHT in (await get_draft(c, end["draft_id"]))["reasoning"]


def _thinking(sent: dict[str, Any]) -> Any:
    return sent["body"].get("thinking")


async def test_thinking_is_left_to_the_vendor_unless_overridden(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-v4-flash")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model) as c:
        assert (await generate(c)).status_code == 200
        assert (await generate(c, overrides={"enable_thinking": False})).status_code == 200
        end_of(await stream_events(c, overrides={"enable_thinking": False}))
    default, off, off_streamed = await emulator.requests(model)
    assert "thinking" not in default["body"]  # no switch at all: DeepSeek's own default
    assert "enable_thinking" not in default["body"]
    assert _thinking(off) == {"type": "disabled"}  # DeepSeek's own dialect, not a generic key
    assert _thinking(off_streamed) == {"type": "disabled"}


async def test_active_script_config_can_force_thinking_either_way(
    pg_url: str, make_settings: MakeSettings, emulator: EmulatorHandle,
) -> None:
    model = emulator.unique_model("deepseek-v4-flash")
    await emulator.script(model, {"content": SCRIPT})
    async with script_app(make_settings, pg_url, emulator, model, enable_thinking=False) as c:
        assert (await generate(c)).status_code == 200
        # A per-request override beats the configuration.
        assert (await generate(c, overrides={"enable_thinking": True})).status_code == 200
    forced_off, allowed = await emulator.requests(model)
    assert _thinking(forced_off) == {"type": "disabled"}
    assert _thinking(allowed) == {"type": "enabled"}
