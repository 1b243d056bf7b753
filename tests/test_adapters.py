"""Adapters: real response shapes from each vendor's docs → the closed event vocabulary."""

from __future__ import annotations

from typing import Any

import pytest

from callout_server.llm.adapters import (
    ChatCompletionsAdapter,
    InBandError,
    ResponsesAdapter,
    make_adapter,
    split_think,
    tool_call_arguments_valid,
)
from callout_server.llm.adapters.common import parse_usage
from callout_server.llm.adapters.think import ThinkSplitter
from callout_server.llm.events import Event, Finish, ReasoningDelta, TextDelta, ToolCall, Usage


def texts(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def reasoning(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def stream(adapter: Any, chunks: list[dict[str, Any]]) -> list[Event]:
    out: list[Event] = []
    for chunk in chunks:
        out.extend(adapter.feed(chunk))
    out.extend(adapter.close())
    return out


def delta(finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": fields, "finish_reason": finish}],
    }


def content_chunks(text: str, size: int) -> list[dict[str, Any]]:
    return [delta(content=text[i : i + size]) for i in range(0, len(text), size)]


# -- Chat Completions, non-streamed -------------------------------------------------------


def test_deepseek_reasoning_content_non_streamed() -> None:
    body = {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": '{"intent": "agree"}',
                    "reasoning_content": "用户同意了。",
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 20,
            "completion_tokens": 30,
            "completion_tokens_details": {"reasoning_tokens": 12},
        },
    }
    events = ChatCompletionsAdapter().parse(body)
    assert texts(events) == '{"intent": "agree"}'
    assert reasoning(events) == "用户同意了。"
    assert Usage(20, 30, 12) in events
    assert events[-1] == Finish("stop")


def test_vllm_reasoning_field_and_content_null() -> None:
    # vLLM wrong-parser case: the answer lands in `reasoning`, content null, finish stop.
    body = {
        "choices": [
            {
                "message": {"role": "assistant", "content": None, "reasoning": '{"a": 1}'},
                "finish_reason": "stop",
                "stop_reason": None,
            }
        ]
    }
    events = ChatCompletionsAdapter().parse(body)
    assert texts(events) == "" and reasoning(events) == '{"a": 1}'


def test_both_reasoning_fields_are_not_doubled() -> None:
    # During vLLM's rename both fields carried the same text.
    body = {"choices": [{"message": {"content": "ok", "reasoning": "r", "reasoning_content": "r"}}]}
    assert reasoning(ChatCompletionsAdapter().parse(body)) == "r"


def test_openrouter_reasoning_and_native_finish_reason() -> None:
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "好的",
                    "reasoning": "思考",
                    "reasoning_details": [{"type": "reasoning.text", "text": "思考"}],
                },
                "finish_reason": "length",
                "native_finish_reason": "MAX_TOKENS",
            }
        ]
    }
    events = ChatCompletionsAdapter().parse(body)
    assert reasoning(events) == "思考" and texts(events) == "好的"
    assert events[-1] == Finish("length", extra={"native_finish_reason": "MAX_TOKENS"})


@pytest.mark.parametrize(
    ("content", "expected_reasoning", "expected_answer"),
    [
        ("<think>\n想一想\n</think>\n\n你好", "\n想一想\n", "你好"),  # Qwen3 hybrid
        ("想一想\n</think>\n\n你好", "想一想\n", "你好"),  # R1 / Thinking-2507: no opening tag
        ("<think>\n\n</think>\n\n你好", "\n\n", "你好"),  # pre-closed empty block
        ("◁think▷想◁/think▷你好", "想", "你好"),  # Kimi
        ("<think>\nOkay, the user", "\nOkay, the user", ""),  # unclosed: all reasoning
        ("就是这样", "", "就是这样"),
    ],
)
def test_inline_think_shapes(content: str, expected_reasoning: str, expected_answer: str) -> None:
    body = {"choices": [{"message": {"content": content}, "finish_reason": "stop"}]}
    events = ChatCompletionsAdapter().parse(body)
    assert reasoning(events) == expected_reasoning
    assert texts(events) == expected_answer
    # The same text streamed in pieces of any size splits identically. A closing tag with
    # no opening one can only be honoured in a stream for families known to pre-open it.
    preopened = "</" in content and "<think>" not in content
    for size in (1, 2, 3, 7):
        adapter = ChatCompletionsAdapter(preopened_think=preopened)
        events = stream(adapter, [*content_chunks(content, size), delta("stop")])
        assert texts(events) == expected_answer.lstrip(), size
        if expected_answer or "<think>" in content:
            assert reasoning(events) == expected_reasoning, size


def test_stream_releases_text_before_tag_is_complete() -> None:
    splitter = ThinkSplitter()
    assert splitter.feed("你好 <") == [TextDelta("你好 ")]
    assert splitter.feed("b>") == [TextDelta("<b>")]


def test_preopened_model_holds_content_until_close_tag() -> None:
    adapter = make_adapter("chat-completions", "DeepSeek-R1-Distill-Qwen-7B")
    assert adapter.feed(delta(content="推理中")) == []
    assert adapter.feed(delta(content="</think>答案")) == [
        ReasoningDelta("推理中"),
        TextDelta("答案"),
    ]


def test_preopened_model_without_tags_answers_at_the_end() -> None:
    # DeepSeek API returns reasoning in its own field: no tag ever comes.
    events = stream(
        make_adapter("chat-completions", "deepseek-r1"), [delta(content="答案"), delta("stop")]
    )
    assert texts(events) == "答案"
    truncated = stream(
        make_adapter("chat-completions", "deepseek-r1"), [delta(content="Okay so"), delta("length")]
    )
    assert texts(truncated) == "" and reasoning(truncated) == "Okay so"


def test_late_bare_close_tag_is_recorded() -> None:
    splitter = ThinkSplitter()
    splitter.feed("maybe")
    assert splitter.feed("</think>ok") == [TextDelta("ok")]
    assert splitter.late_close


# -- Chat Completions, streamed ------------------------------------------------------------


def test_stream_deepseek_reasoning_then_content_with_usage_chunk() -> None:
    chunks = [
        delta(role="assistant", content=""),
        delta(reasoning_content="嗯", content=None),
        delta(reasoning_content="好", content=None),
        delta(content="你好"),
        delta("stop", content=""),
        {
            "id": "x",
            "choices": [],
            "usage": {
                "prompt_tokens": 5,
                "completion_tokens": 4,
                "completion_tokens_details": {"reasoning_tokens": 2},
            },
        },
    ]
    adapter = ChatCompletionsAdapter()
    events = stream(adapter, chunks)
    assert events == [
        ReasoningDelta("嗯"),
        ReasoningDelta("好"),
        TextDelta("你好"),
        Usage(5, 4, 2),
        Finish("stop"),
    ]
    assert adapter.saw_output and adapter.finished


def test_stream_tool_calls_over_chunks_and_indexes() -> None:
    chunks = [
        delta(
            role="assistant",
            content=None,
            tool_calls=[
                {
                    "index": 0,
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "transfer", "arguments": ""},
                }
            ],
        ),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '{"dept'}}]),
        delta(
            tool_calls=[
                {
                    "index": 1,
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "hangup", "arguments": "{}"},
                }
            ]
        ),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '": "售后"}'}}]),
        delta("tool_calls"),
    ]
    events = stream(ChatCompletionsAdapter(), chunks)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("transfer", {"dept": "售后"}),
        ("hangup", {}),
    ]
    assert all(
        c.call_id.startswith("call_") and c.call_id not in ("call_a", "call_b") for c in calls
    )
    assert len({c.call_id for c in calls}) == 2
    assert events[-1] == Finish("tool_calls")


def test_stream_tool_calls_without_index() -> None:
    chunks = [
        delta(tool_calls=[{"id": "a", "function": {"name": "f", "arguments": '{"x"'}}]),
        delta(tool_calls=[{"function": {"arguments": ": 1}"}}]),
        delta(tool_calls=[{"id": "b", "function": {"name": "g", "arguments": "{}"}}]),
    ]
    calls = [e for e in stream(ChatCompletionsAdapter(), chunks) if isinstance(e, ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == [("f", {"x": 1}), ("g", {})]


def test_invalid_tool_arguments_are_kept_raw() -> None:
    body = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {
                            "id": "1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"x": 1'},
                        }
                    ]
                },
                "finish_reason": "length",
            }
        ]
    }
    (call,) = [e for e in ChatCompletionsAdapter().parse(body) if isinstance(e, ToolCall)]
    assert call.arguments == {} and call.raw_arguments == '{"x": 1'
    assert not tool_call_arguments_valid(call)


def test_no_choices_and_null_finish_reason_never_raise() -> None:
    adapter = ChatCompletionsAdapter()
    assert adapter.parse({"id": "x", "choices": []})[-1] == Finish(None)
    assert ChatCompletionsAdapter().parse({"id": "x"})[-1] == Finish(None)
    events = stream(ChatCompletionsAdapter(), [{"choices": []}, {}, delta(content="hi")])
    assert texts(events) == "hi" and events[-1] == Finish(None)


def test_vendor_finish_reasons_are_kept() -> None:
    for reason in ("sensitive", "network_error", "insufficient_system_resource", "load"):
        body = {"choices": [{"message": {"content": ""}, "finish_reason": reason}]}
        assert ChatCompletionsAdapter().parse(body)[-1] == Finish(reason)


def test_error_object_in_stream_is_in_band_error() -> None:
    with pytest.raises(InBandError) as info:
        ChatCompletionsAdapter().feed({"error": {"message": "Provider overloaded", "code": 502}})
    assert "overloaded" in info.value.detail
    assert "overloaded" not in str(info.value)  # chained into tracebacks: never vendor text


def test_refusal_counts_as_text() -> None:
    body = {
        "choices": [
            {"message": {"content": None, "refusal": "I can't help."}, "finish_reason": "stop"}
        ]
    }
    assert texts(ChatCompletionsAdapter().parse(body)) == "I can't help."


# -- Responses API ------------------------------------------------------------------------


RESPONSE_BODY = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "先想"}]},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "你好", "annotations": []}],
        },
    ],
    "usage": {
        "input_tokens": 10,
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 8},
    },
}


def test_responses_non_streamed() -> None:
    events = ResponsesAdapter().parse(RESPONSE_BODY)
    assert events == [
        ReasoningDelta("先想"),
        TextDelta("你好"),
        Usage(10, 20, 8),
        Finish("stop", extra={"status": "completed"}),
    ]


def test_responses_incomplete_max_output_tokens_is_length() -> None:
    body = {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "reasoning", "content": [{"type": "reasoning_text", "text": "…"}]}],
        "usage": {
            "input_tokens": 5,
            "output_tokens": 300,
            "output_tokens_details": {"reasoning_tokens": 300},
        },
    }
    events = ResponsesAdapter().parse(body)
    assert events[-1].reason == "length"  # type: ignore[union-attr]
    assert texts(events) == ""


def test_responses_function_call_and_refusal() -> None:
    body = {
        "status": "completed",
        "output": [
            {"type": "message", "content": [{"type": "refusal", "refusal": "不行"}]},
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_x",
                "name": "hangup",
                "arguments": '{"reason": "busy"}',
            },
        ],
    }
    events = ResponsesAdapter().parse(body)
    assert texts(events) == "不行"
    (call,) = [e for e in events if isinstance(e, ToolCall)]
    assert call.name == "hangup" and call.arguments == {"reason": "busy"}
    assert call.call_id != "call_x"
    assert events[-1].reason == "tool_calls"  # type: ignore[union-attr]


def test_responses_failed_raises() -> None:
    with pytest.raises(InBandError) as info:
        ResponsesAdapter().parse(
            {"status": "failed", "error": {"code": "server_error", "message": "boom"}}
        )
    assert "server_error" in info.value.detail


def test_responses_stream() -> None:
    adapter = ResponsesAdapter()
    chunks = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs", "delta": "想"},
        {"type": "response.output_text.delta", "item_id": "m", "delta": "你"},
        {"type": "response.output_text.delta", "item_id": "m", "delta": "好"},
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "c",
                "name": "transfer",
                "arguments": "",
            },
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 2,
            "delta": '{"to":',
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 2,
            "delta": ' "人工"}',
        },
        {
            "type": "response.output_item.done",
            "output_index": 2,
            "item": {
                "type": "function_call",
                "id": "fc_1",
                "name": "transfer",
                "arguments": '{"to": "人工"}',
            },
        },
        {
            "type": "response.completed",
            "response": {
                "status": "completed",
                "usage": {
                    "input_tokens": 3,
                    "output_tokens": 9,
                    "output_tokens_details": {"reasoning_tokens": 1},
                },
            },
        },
    ]
    events = stream(adapter, chunks)
    assert reasoning(events) == "想" and texts(events) == "你好"
    (call,) = [e for e in events if isinstance(e, ToolCall)]
    assert call.arguments == {"to": "人工"}
    assert Usage(3, 9, 1) in events
    assert events[-1].reason == "tool_calls"  # type: ignore[union-attr]
    assert adapter.finished


def test_responses_stream_incomplete_and_errors() -> None:
    adapter = ResponsesAdapter()
    events = stream(
        adapter,
        [
            {
                "type": "response.incomplete",
                "response": {
                    "status": "incomplete",
                    "incomplete_details": {"reason": "max_output_tokens"},
                },
            }
        ],
    )
    assert events[-1].reason == "length"  # type: ignore[union-attr]
    with pytest.raises(InBandError) as info:
        ResponsesAdapter().feed({"type": "error", "code": "rate_limit", "message": "rate limited"})
    assert "rate" in info.value.detail
    with pytest.raises(InBandError) as info:
        ResponsesAdapter().feed(
            {
                "type": "response.failed",
                "response": {
                    "status": "failed",
                    "error": {"code": "server_error", "message": "boom"},
                },
            }
        )
    assert "boom" in info.value.detail


def test_responses_empty_output() -> None:
    events = ResponsesAdapter().parse({"status": "completed", "output": []})
    assert events == [Finish("stop", extra={"status": "completed"})]


def test_split_think_pure() -> None:
    assert split_think("a</think>b</think>c") == ("ab", "c")
    assert split_think("plain", preopened=True, truncated=True) == ("plain", "")


def test_a_token_count_no_vendor_can_mean_is_not_believed() -> None:
    """Believed, a negative count lowered a key's spent budget and its usage totals, and one
    past 64 bits made Redis refuse the budget's count for every key of the worker."""
    usage = parse_usage({"prompt_tokens": -2_000_000_000, "completion_tokens": 2**63,
                         "completion_tokens_details": {"reasoning_tokens": 2**31}})
    assert usage == Usage(prompt_tokens=None, completion_tokens=None, reasoning_tokens=None)
    kept = parse_usage({"prompt_tokens": 0, "completion_tokens": 2**31 - 1, "reasoning_tokens": 7})
    assert kept == Usage(prompt_tokens=0, completion_tokens=2**31 - 1, reasoning_tokens=7)


@pytest.mark.parametrize("reason", [{"why": 1}, ["a"], 7, "", None])
def test_an_incomplete_reason_that_is_no_string_is_incomplete(reason: Any) -> None:
    """A dict or a list reached the classification as the finish reason: a set lookup that
    raised TypeError, and a script stream that died without its `end`."""
    from callout_server.llm.classify import classify

    events = stream(ResponsesAdapter(), [{"type": "response.incomplete", "response": {
        "status": "incomplete", "incomplete_details": {"reason": reason}}}])
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "incomplete"
    body = {"status": "incomplete", "incomplete_details": {"reason": reason},
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "好"}]}]}
    assert ResponsesAdapter().parse(body)[-1].reason == "incomplete"  # type: ignore[union-attr]
    verdict = classify(text="好", reasoning_seen=False, finish_reason=finish.reason)
    assert verdict is None or verdict.code in ("upstream_error", "truncated")
