"""The NLU prompt: the node's intents and slots, the recent context, one JSON object asked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from callout_server.phrases import GlobalIntent
from callout_server.tiers.nlu.schemas import DecideRequest

_SYSTEM = (
    "你是电话外呼流程中的语义理解模块（NLU）。根据客户最新的一句话（可能是中文或英文）"
    "判断客户意图并抽取槽位。\n"
    "只输出一个 JSON 对象，不要输出解释、代码块或其他任何文字，格式：\n"
    '{"intent": <意图名>, "confidence": <0 到 1 之间的数字>, "slots": {<槽位名>: <值或 null>}}\n'
    "规则：intent 必须严格是下列意图名之一；槽位值按给定类型填写，客户没有提到的槽位填 null；"
    "不要编造客户没说的信息。"
)

_TYPE_HINT = {
    "string": "字符串",
    "number": "数字",
    "integer": "整数",
    "boolean": "true/false",
}


_GLOBAL = (
    "全局意图：客户在任何节点都可能表达以下意图，它们优先于节点流程。"
    '若客户明确表达了其中之一，在 JSON 中另加 "global_intent": <全局意图名>，否则 "global_intent": null；'
    "intent 仍照常按本节点意图填写。只是拒绝本次推荐、或约时间回电，都不是要求不再来电。"
)


def build_messages(req: DecideRequest,
                   global_intents: Sequence[GlobalIntent] = ()) -> list[dict[str, Any]]:
    """`global_intents`: the enabled ones offered beside the node's (none: as before)."""
    lines: list[str] = []
    if req.intents:
        lines.append("可选意图（intent 只能取以下名称之一）：")
        lines += [f"- {i.name}: {i.description}".rstrip(": ") for i in req.intents]
    else:
        lines.append('本节点不做意图判断，"intent" 填 null。')
    if req.slots:
        lines.append("需要抽取的槽位：")
        for s in req.slots:
            kind = f"枚举，取值 {' | '.join(s.values or [])}" if s.type == "enum" else _TYPE_HINT[s.type]
            lines.append(f"- {s.name} ({kind}): {s.description}".rstrip(": "))
    else:
        lines.append('本节点不抽取槽位，"slots" 填 {}。')
    if req.instructions:
        lines.append(f"节点说明：{req.instructions}")
    system = _SYSTEM + "\n\n" + "\n".join(lines)
    if global_intents:  # after a blank line: the node's sections end before it
        system += "\n\n" + "\n".join(
            [_GLOBAL, *(f"- {i.name}: {i.description}".rstrip(": ") for i in global_intents)])

    user_parts: list[str] = []
    if req.context:
        who = {"assistant": "坐席", "user": "客户"}
        user_parts.append("对话上文：")
        user_parts += [f"{who[t.role]}：{t.content}" for t in req.context]
        user_parts.append("")
    user_parts.append(f"客户最新的话：{req.utterance}")
    return [{"role": "system", "content": system},
            {"role": "user", "content": "\n".join(user_parts)}]
