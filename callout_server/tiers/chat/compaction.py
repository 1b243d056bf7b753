"""The prompt for background history compaction: older turns -> a short factual summary.

`ChatHistory` decides when and what to compact and splices the result back; this module
only turns the Chat Completions messages it hands over into one summarisation request. The
transcript is rendered as plain text (not replayed as a conversation) so the model cannot
mistake it for a dialogue to continue, and tool calls appear with their results.
"""

from __future__ import annotations

import json
from typing import Any

from callout_server.llm import Locale

SUMMARY_MAX_TOKENS = 300

_PROMPT: dict[str, str] = {
    "zh": (
        "你负责为外呼电话中的对话做记忆压缩。下面是本通电话较早部分的记录。"
        "请用简洁的中文写一段摘要（不超过 150 字），保留：客户的身份信息与诉求、"
        "已确认的事实、时间、数字、承诺和约定、工具调用的结果，以及尚未解决的问题。"
        "只写事实，不要编造，不要加入开场白或解释。"
    ),
    "en": (
        "You compress the memory of an outbound phone call. Below is the earlier part of "
        "the call. Write a concise summary (at most 100 words) keeping: who the customer is "
        "and what they want, confirmed facts, times, numbers, commitments, tool results and "
        "open questions. Facts only; invent nothing; no preamble."
    ),
}
_ROLES: dict[str, dict[str, str]] = {
    "zh": {"user": "客户", "assistant": "坐席", "tool": "工具结果", "system": "此前摘要",
           "call": "调用工具"},
    "en": {"user": "Customer", "assistant": "Agent", "tool": "Tool result",
           "system": "Earlier summary", "call": "Tool call"},
}


def render_transcript(messages: list[dict[str, Any]], locale: Locale = "zh") -> str:
    roles = _ROLES[locale]
    lines: list[str] = []
    for msg in messages:
        role = msg.get("role", "")
        content = msg.get("content")
        if isinstance(content, str) and content.strip():
            lines.append(f"{roles.get(role, role)}: {content.strip()}")
        for call in msg.get("tool_calls") or ():
            fn = call.get("function", {})
            args = fn.get("arguments", "")
            if not isinstance(args, str):
                args = json.dumps(args, ensure_ascii=False)
            lines.append(f"{roles['call']}: {fn.get('name', '?')}({args})")
    return "\n".join(lines)


def summary_messages(messages: list[dict[str, Any]], locale: Locale = "zh"
                     ) -> list[dict[str, Any]]:
    """The request messages for one compaction."""
    return [
        {"role": "system", "content": _PROMPT[locale]},
        {"role": "user", "content": render_transcript(messages, locale)},
    ]
