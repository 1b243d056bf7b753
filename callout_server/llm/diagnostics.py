"""Diagnostics: what went wrong with one LLM call, in words ops can act on.

A `Diagnostic` is a value, not an exception: the tiers return it to callers, the recorder
stores it, the console shows it. Messages and advice come in Chinese (default) and English;
the numbers behind them (max_tokens, token counts, HTTP status) travel as fields.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

Code = Literal[
    "truncated_by_reasoning",
    "truncated",
    "empty_output",
    "invalid_json",
    "schema_mismatch",
    "timeout",
    "deadline_exceeded",
    "upstream_error",
    "connect_error",
    "cancelled",
]
CODES: tuple[str, ...] = Code.__args__  # type: ignore[attr-defined]

Locale = Literal["zh", "en"]

# code -> (zh message, zh advice, en message, en advice); `{…}` fields are filled from the diagnostic.
_TEXT: dict[str, tuple[str, str, str, str]] = {
    "truncated_by_reasoning": (
        "模型输出触顶 max_tokens 限制 ({max_tokens}) 导致截断，未生成有效内容。模型思考链消耗了过多 token",
        "调大 max_tokens 或关闭思考模式",
        "The output hit the max_tokens limit ({max_tokens}) before any answer was produced: "
        "the model's reasoning consumed the budget",
        "Raise max_tokens or turn thinking off",
    ),
    "truncated": (
        "模型输出触顶 max_tokens 限制 ({max_tokens}) 导致截断，内容不完整",
        "调大 max_tokens",
        "The output hit the max_tokens limit ({max_tokens}) and is incomplete",
        "Raise max_tokens",
    ),
    "empty_output": (
        "模型返回内容为空 (finish_reason={finish_reason})",
        "检查模型与提示词；若使用 vLLM 推理解析器，它可能把整个答案放进了 reasoning 字段"
        "（finish_reason 为 stop），这不是 token 预算问题：请核对 --reasoning-parser 或关闭思考模式",
        "The model returned empty content (finish_reason={finish_reason})",
        "Check the model and prompt; a vLLM reasoning parser may have routed the whole answer "
        "into the reasoning field (finish_reason stop), which is not a budget problem: check "
        "--reasoning-parser or turn thinking off",
    ),
    "invalid_json": (
        "模型输出无法解析为唯一的 JSON 对象：{detail}",
        "收紧提示词要求只输出一个 JSON 对象，开启 JSON 模式，并确认 max_tokens 足够",
        "The output could not be read as exactly one JSON object: {detail}",
        "Ask for a single JSON object only, enable JSON mode, and make sure max_tokens is enough",
    ),
    "schema_mismatch": (
        "模型输出不符合节点要求：{detail}",
        "检查意图/槽位描述是否清晰，或为该节点设置兜底意图",
        "The output does not match the node's schema: {detail}",
        "Make intent and slot descriptions clearer, or give the node a fallback intent",
    ),
    "timeout": (
        "模型请求超时 ({detail})",
        "检查推理服务负载，或调大超时时间",
        "The model request timed out ({detail})",
        "Check the inference server's load, or raise the timeout",
    ),
    "deadline_exceeded": (
        "调用超过业务截止时间 ({detail})",
        "缩短提示词、换用更快的模型，或放宽 deadline_ms",
        "The call exceeded its deadline ({detail})",
        "Shorten the prompt, use a faster model, or allow a larger deadline_ms",
    ),
    "upstream_error": (
        "推理服务返回错误 (HTTP {status})：{detail}",
        "查看厂商错误信息；检查模型名、API Key 与请求参数",
        "The inference server answered an error (HTTP {status}): {detail}",
        "Read the vendor's message; check the model name, API key and request parameters",
    ),
    "connect_error": (
        "无法连接推理服务：{detail}",
        "检查 base_url、网络与推理服务是否在运行",
        "Could not connect to the inference server: {detail}",
        "Check base_url, the network, and that the inference server is running",
    ),
    "cancelled": (
        "调用已被取消",
        "无需处理：客户插话或会话结束",
        "The call was cancelled",
        "Nothing to do: the customer barged in or the session ended",
    ),
}


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One failed (or suspicious) LLM call, with the numbers that explain it."""

    code: str
    message: str
    advice: str
    finish_reason: str | None = None
    max_tokens: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    status: int | None = None
    detail: str | None = None
    id: int | None = None

    @classmethod
    def make(cls, code: str, locale: Locale = "zh", **fields: Any) -> Diagnostic:
        """Build a diagnostic with its message and advice in `locale`."""
        zh_msg, zh_adv, en_msg, en_adv = _TEXT[code]
        msg, adv = (en_msg, en_adv) if locale == "en" else (zh_msg, zh_adv)
        values = _Blank({k: v for k, v in fields.items() if v is not None})
        return cls(code=code, message=msg.format_map(values), advice=adv, **fields)

    def with_id(self, record_id: int) -> Diagnostic:
        return replace(self, id=record_id)

    def to_dict(self) -> dict[str, Any]:
        """The contract's diagnostic object: empty numbers are left out, `code` always there."""
        return {k: v for k, v in asdict(self).items() if v is not None or k in ("id", "code")}
