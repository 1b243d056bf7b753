"""What a chat history holds, and how it reads to the model and to the API.

    UserMessage | AssistantMessage | FunctionCall | FunctionOutput    the items (`Item`)
    render(items)          -> Chat Completions messages (calls merged, no orphan shown)
    public_type(item)      -> the item's `type` in `GET /api/chat/sessions/{call_id}`
    next_turn_start(items, start)  -> index of the next user message (a turn's end)

Pure data and functions; `history.ChatHistory` keeps the items bounded and paired.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(eq=False, slots=True)
class UserMessage:
    turn_id: str
    text: str
    revision: int = 0


@dataclass(eq=False, slots=True)
class AssistantMessage:
    text: str
    interrupted: bool = False


@dataclass(eq=False, slots=True)
class FunctionCall:
    call_id: str
    name: str
    arguments: dict[str, Any] | str

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(eq=False, slots=True)
class FunctionOutput:
    call_id: str
    output: str


Item = UserMessage | AssistantMessage | FunctionCall | FunctionOutput
PUBLIC_TYPE: dict[type, str] = {
    UserMessage: "user",
    AssistantMessage: "assistant",
    FunctionCall: "function_call",
    FunctionOutput: "function_call_output",
}

def next_turn_start(items: list[Item], start: int) -> int:
    for index in range(start, len(items)):
        if isinstance(items[index], UserMessage):
            return index
    return len(items)


def render(items: list[Item]) -> list[dict[str, Any]]:
    """Items -> Chat Completions messages; each run of calls becomes one assistant message
    (merged with the assistant text right before it) followed by the outputs of its calls."""
    outputs = {item.call_id: item for item in items if isinstance(item, FunctionOutput)}
    out: list[dict[str, Any]] = []
    index, n = 0, len(items)
    while index < n:
        item = items[index]
        if isinstance(item, UserMessage):
            out.append({"role": "user", "content": item.text})
        elif isinstance(item, AssistantMessage):
            out.append({"role": "assistant", "content": item.text})
        elif isinstance(item, FunctionCall):
            run: list[FunctionCall] = []
            while index < n and isinstance(items[index], FunctionCall):
                call = items[index]
                assert isinstance(call, FunctionCall)
                if call.call_id in outputs:  # a pending call is not shown: it has no output
                    run.append(call)
                index += 1
            if run:
                _emit_calls(out, run, outputs)
            continue
        # A FunctionOutput is emitted with its call; one without a call is never shown.
        index += 1
    return out


def _emit_calls(
    out: list[dict[str, Any]], run: list[FunctionCall], outputs: dict[str, FunctionOutput]
) -> None:
    tool_calls = [
        {"id": c.call_id, "type": "function",
         "function": {"name": c.name, "arguments": c.arguments_json()}}
        for c in run
    ]  # fmt: skip
    last = out[-1] if out else None
    if last is not None and last["role"] == "assistant" and "tool_calls" not in last:
        last["tool_calls"] = tool_calls
    else:
        out.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
    for call in run:
        out.append(
            {"role": "tool", "tool_call_id": call.call_id, "content": outputs[call.call_id].output}
        )
