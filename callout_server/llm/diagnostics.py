"""Diagnostics: what went wrong with one LLM call, in words ops can act on.

A `Diagnostic` is a value, not an exception: the tiers return it to callers, the recorder
stores it, the console shows it. It holds a code and the numbers behind it (max_tokens,
token counts, HTTP status), what exactly happened as a `reason` code with its numbers
(`args`: the seconds a stream stalled, ...), and `detail`: words from outside (a vendor's
error message, a network library's), kept verbatim. Nothing in it is finished text: the
message and the advice are rendered from those fields, in Chinese or English, when they
are read (`message_in(locale)`, `to_dict(locale)`), so one stored diagnostic reads in the
language of whoever asks. `message` / `advice` render in the diagnostic's own `locale`
(the client's default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
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

# Vendor finish reasons that the shared table words differently (see classify.py).
CONTEXT_EXCEEDED = frozenset({"model_context_window_exceeded"})
FILTERED = frozenset({"content_filter", "sensitive"})
UPSTREAM_FAILED = frozenset({"insufficient_system_resource", "load", "network_error"})

# code (or a variant of it) -> (zh message, zh advice, en message, en advice). `{…}` fields
# are filled from the diagnostic's numbers; what exactly happened follows after a colon.
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
        "模型输出无法解析为唯一的 JSON 对象",
        "收紧提示词要求只输出一个 JSON 对象，开启 JSON 模式，并确认 max_tokens 足够",
        "The output could not be read as exactly one JSON object",
        "Ask for a single JSON object only, enable JSON mode, and make sure max_tokens is enough",
    ),
    "schema_mismatch": (
        "模型输出不符合节点要求",
        "检查意图/槽位描述是否清晰，或为该节点设置兜底意图",
        "The output does not match the node's schema",
        "Make intent and slot descriptions clearer, or give the node a fallback intent",
    ),
    "timeout": (
        "模型请求超时",
        "检查推理服务负载，或调大超时时间",
        "The model request timed out",
        "Check the inference server's load, or raise the timeout",
    ),
    "deadline_exceeded": (
        "调用超过业务截止时间",
        "缩短提示词、换用更快的模型，或放宽 deadline_ms",
        "The call exceeded its deadline",
        "Shorten the prompt, use a faster model, or allow a larger deadline_ms",
    ),
    "upstream_error": (
        "推理服务返回错误 (HTTP {status})",
        "查看厂商错误信息；检查模型名、API Key 与请求参数",
        "The inference server answered an error (HTTP {status})",
        "Read the vendor's message; check the model name, API key and request parameters",
    ),
    "upstream_error/no_status": (
        "推理服务出错",
        "查看厂商错误信息；检查推理服务是否正常",
        "The inference server failed",
        "Read the vendor's message; check that the inference server is healthy",
    ),
    "upstream_error/failed": (
        "推理服务未完成生成：资源不足或服务异常 (finish_reason={finish_reason})",
        "稍后重试；持续出现时检查推理服务负载或联系厂商",
        "The inference server gave up generating: overloaded or failing "
        "(finish_reason={finish_reason})",
        "Retry shortly; if it persists, check the server's load or contact the vendor",
    ),
    "connect_error": (
        "无法连接推理服务",
        "检查 base_url、网络与推理服务是否在运行",
        "Could not connect to the inference server",
        "Check base_url, the network, and that the inference server is running",
    ),
    "cancelled": (
        "调用已被取消",
        "无需处理：客户插话或会话结束",
        "The call was cancelled",
        "Nothing to do: the customer barged in or the session ended",
    ),
    "truncated/context": (
        "输入超出模型上下文窗口，输出被截断 (finish_reason={finish_reason})",
        "缩短提示词或对话历史，或换用上下文更长的模型",
        "The input exceeded the model's context window and the output was cut "
        "(finish_reason={finish_reason})",
        "Shorten the prompt or the history, or use a model with a longer context",
    ),
    "truncated/filtered": (
        "模型输出被厂商内容审核中断，内容不完整 (finish_reason={finish_reason})",
        "检查提示词与对话内容是否触发厂商审核",
        "The vendor's content filter cut the output short (finish_reason={finish_reason})",
        "Check whether the prompt or conversation trips the vendor's filter",
    ),
    "empty_output/filtered": (
        "模型输出被厂商内容审核拦截，返回内容为空 (finish_reason={finish_reason})",
        "检查提示词与对话内容是否触发厂商审核；必要时联系厂商",
        "The vendor's content filter blocked the output; nothing came back "
        "(finish_reason={finish_reason})",
        "Check whether the prompt or conversation trips the vendor's filter; ask the vendor if needed",
    ),
}

# reason -> (zh, en): what exactly happened, filled from `args`.
REASONS: dict[str, tuple[str, str]] = {
    # timeouts
    "total_timeout": ("{seconds} 秒内没有完整响应", "no complete response within {seconds}s"),
    "ttft": ("{seconds} 秒内没有收到第一个 token", "no token within {seconds}s (time to first token)"),
    "stalled": ("流停滞：{seconds} 秒没有数据", "stream stalled: no data for {seconds}s"),
    "stalled_keepalive": ("流停滞：{seconds} 秒没有数据，只收到 {comments} 条保活注释",
                          "stream stalled: no data for {seconds}s ({comments} keep-alive comments only)"),
    "stream_total": ("流在 {seconds} 秒内没有结束", "stream not finished within {seconds}s"),
    "read_timeout": ("在读超时时间内没有数据", "no data for the read timeout"),
    "deadline": ("deadline_ms={deadline_ms}", "deadline_ms={deadline_ms}"),
    # upstream pools
    "pool_busy": ("所有端点都已满载（max_in_flight={limit}）或在冷却中",
                  "every endpoint is busy (max_in_flight={limit}) or cooling down"),
    "cut_deadline": ("调用方的截止时间内没有应答（{seconds} 秒）",
                     "no answer within the caller's deadline ({seconds}s)"),
    "cut_hedge": ("对冲请求已在别处应答，本请求未应答（{seconds} 秒）",
                  "no answer before its hedge answered elsewhere ({seconds}s)"),
    "probe_timeout": ("探测请求 {seconds} 秒内没有应答", "probe not answered within {seconds}s"),
    # the connection and the response
    "server_closed": ("连接被服务端关闭", "connection closed by the server"),
    "connection_lost": ("连接中断", "connection lost"),
    "closed_before_end": ("流结束前连接被服务端关闭",
                          "connection closed by the server before the stream finished"),
    "malformed_body": ("响应体格式错误（{bytes} 字节，不是 JSON 对象）",
                       "malformed response body ({bytes} bytes, not a JSON object)"),
    "malformed_chunk": ("第 {index} 个流数据块格式错误（{chars} 个字符，事件 '{event}'）",
                        "malformed stream chunk #{index} ({chars} chars, event '{event}')"),
    "http_library_refused": ("HTTP 库拒绝发送请求（{error}）",
                             "the HTTP library refused the request ({error})"),
    "key_unsendable": ("配置的 API Key 无法放进 HTTP 请求头：含有空格、控制字符或非 ASCII 字符，请重新保存 Key",
                       "the configured API key cannot be sent in an HTTP header: it holds a "
                       "space, a control or a non-ASCII character; save the key again"),
    "url_credentials": ("base_url 带有凭据（user:password@），凭据不会被发送；请去掉它们，把 Key 填在 api_key",
                        "base_url carries credentials (user:password@), which are never sent; "
                        "remove them and put the key in api_key"),
    # reading the answer (llm/json_extract.py reasons, tiers/nlu/validate.py mismatches)
    "json_truncated": ("JSON 还没写完，模型输出就被截断了",
                       "the model output was cut off before the JSON was complete"),
    "json_in_reasoning": ("模型输出停在未闭合的 <think> 块里，没有给出答案",
                          "the model output ended inside an unclosed <think> block, before any answer"),
    "json_ambiguous_multiple": ("答案里有多个不同的 JSON 值，无法确定取哪一个",
                                "the answer contains several different JSON values; refusing to pick one"),
    "json_not_object": ("答案的 JSON 值不是对象", "the answer's JSON value is not an object"),
    "json_unrepairable": ("答案里的 JSON 不猜测就无法读取",
                          "the JSON in the answer cannot be read without guessing"),
    "json_empty": ("答案里没有 JSON 对象", "the answer contains no JSON object"),
    "intent_missing": ("没有 intent，或 intent 不是字符串：{value}",
                       "intent missing or not a string: {value}"),
    "intent_not_offered": ("intent「{value}」不在提供的意图（{names}）之中",
                           "intent '{value}' is not one of the offered intents ({names})"),
    "slots_not_object": ("slots 是 {kind}，不是对象", "slots is a {kind}, not an object"),
}


def text_key(code: str, finish_reason: str | None, status: int | None) -> str:
    """Which row of the table words this diagnostic: its code, or a variant of it."""
    if code == "upstream_error":
        if finish_reason in UPSTREAM_FAILED:
            return "upstream_error/failed"
        return code if status is not None else "upstream_error/no_status"
    if code == "truncated" and finish_reason in CONTEXT_EXCEEDED:
        return "truncated/context"
    if code in ("truncated", "empty_output") and finish_reason in FILTERED:
        return f"{code}/filtered"
    return code


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def _number(value: Any) -> Any:
    return f"{value:g}" if isinstance(value, float) else value


_COLON = {"zh": "：", "en": ": "}
_NUMBERS = ("finish_reason", "max_tokens", "prompt_tokens", "completion_tokens",
            "reasoning_tokens", "status")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One failed (or suspicious) LLM call, with the numbers that explain it."""

    code: str
    finish_reason: str | None = None
    max_tokens: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    status: int | None = None
    detail: str | None = None  # words from outside (vendor, library), verbatim
    reason: str | None = None  # what exactly happened (a key of REASONS)
    args: Mapping[str, Any] | None = None  # the numbers `reason` names
    id: int | None = None
    locale: Locale = "zh"  # the language of `message` / `advice`

    @classmethod
    def make(cls, code: str, locale: Locale = "zh", **fields: Any) -> Diagnostic:
        """A diagnostic whose `message` and `advice` read in `locale` unless asked otherwise."""
        if code not in _TEXT:
            raise KeyError(f"unknown diagnostic code {code!r}")
        return cls(code=code, locale=locale, **fields)

    def with_id(self, record_id: int) -> Diagnostic:
        return replace(self, id=record_id)

    # -- rendering ---------------------------------------------------------------------

    def message_in(self, locale: Locale) -> str:
        zh, _, en, _ = _TEXT[text_key(self.code, self.finish_reason, self.status)]
        head = (en if locale == "en" else zh).format_map(self._numbers())
        tail = self.detail_in(locale)
        return f"{head}{_COLON[locale]}{tail}" if tail else head

    def advice_in(self, locale: Locale) -> str:
        _, zh, _, en = _TEXT[text_key(self.code, self.finish_reason, self.status)]
        return en if locale == "en" else zh

    def detail_in(self, locale: Locale) -> str | None:
        """What exactly happened: the reason in `locale`, then the outside words verbatim."""
        phrase = None
        if self.reason in REASONS:
            zh, en = REASONS[self.reason]
            values = _Blank({k: _number(v) for k, v in (self.args or {}).items()})
            phrase = (en if locale == "en" else zh).format_map(values)
        if phrase and self.detail:
            return f"{phrase} ({self.detail})"
        return phrase or self.detail

    @property
    def message(self) -> str:
        return self.message_in(self.locale)

    @property
    def advice(self) -> str:
        return self.advice_in(self.locale)

    def to_dict(self, locale: Locale | None = None) -> dict[str, Any]:
        """The contract's diagnostic object in `locale` (default: its own); empty numbers
        are left out, `id` and `code` are always there."""
        lang = locale or self.locale
        out: dict[str, Any] = {"id": self.id, "code": self.code,
                               "message": self.message_in(lang), "advice": self.advice_in(lang)}
        out.update({k: getattr(self, k) for k in _NUMBERS if getattr(self, k) is not None})
        detail = self.detail_in(lang)
        if detail is not None:
            out["detail"] = detail
        return out

    def _numbers(self) -> _Blank:
        return _Blank({f.name: getattr(self, f.name) for f in fields(self)
                       if f.name in _NUMBERS and getattr(self, f.name) is not None})
