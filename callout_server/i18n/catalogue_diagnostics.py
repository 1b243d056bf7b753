"""The catalogue's section for model-call diagnostics: what a `Diagnostic` says, in words.

    diagnostic.<code>[/<variant>]   the message of a code (`{…}` from its numbers)
    advice.<code>[/<variant>]       what to do about it
    reason.<reason>                 what exactly happened (`{…}` from its `args`), after a colon

Merged into `catalogue.MESSAGES` (one catalogue, one lookup, the same rules for every entry);
`callout_server.llm.diagnostics` renders a diagnostic from these keys when it is read.
"""

from __future__ import annotations

# code (or a variant of it, `llm.diagnostics.text_key`) -> message and advice
DIAGNOSTIC_MESSAGES: dict[str, tuple[str, str]] = {
    "diagnostic.truncated_by_reasoning": (
        "模型输出触顶 max_tokens 限制 ({max_tokens}) 导致截断，未生成有效内容。模型思考链消耗了过多 token",
        "The output hit the max_tokens limit ({max_tokens}) before any answer was produced: "
        "the model's reasoning consumed the budget"),
    "advice.truncated_by_reasoning": (
        "调大 max_tokens 或关闭思考模式",
        "Raise max_tokens or turn thinking off"),
    "diagnostic.truncated": (
        "模型输出触顶 max_tokens 限制 ({max_tokens}) 导致截断，内容不完整",
        "The output hit the max_tokens limit ({max_tokens}) and is incomplete"),
    "advice.truncated": (
        "调大 max_tokens",
        "Raise max_tokens"),
    "diagnostic.empty_output": (
        "模型返回内容为空 (finish_reason={finish_reason})",
        "The model returned empty content (finish_reason={finish_reason})"),
    "advice.empty_output": (
        "检查模型与提示词；若使用 vLLM 推理解析器，它可能把整个答案放进了 reasoning 字段（finish_reason 为 stop），这不是 token 预算问题：请核对 --reasoning-parser 或关闭思考模式",
        "Check the model and prompt; a vLLM reasoning parser may have routed the whole answer"
        " into the reasoning field (finish_reason stop), which is not a budget problem: check"
        " --reasoning-parser or turn thinking off"),
    "diagnostic.invalid_json": (
        "模型输出无法解析为唯一的 JSON 对象",
        "The output could not be read as exactly one JSON object"),
    "advice.invalid_json": (
        "收紧提示词要求只输出一个 JSON 对象，开启 JSON 模式，并确认 max_tokens 足够",
        "Ask for a single JSON object only, enable JSON mode, and make sure max_tokens is "
        "enough"),
    "diagnostic.schema_mismatch": (
        "模型输出不符合节点要求",
        "The output does not match the node's schema"),
    "advice.schema_mismatch": (
        "检查意图/槽位描述是否清晰，或为该节点设置兜底意图",
        "Make intent and slot descriptions clearer, or give the node a fallback intent"),
    "diagnostic.timeout": (
        "模型请求超时",
        "The model request timed out"),
    "advice.timeout": (
        "检查推理服务负载，或调大超时时间",
        "Check the inference server's load, or raise the timeout"),
    "diagnostic.deadline_exceeded": (
        "调用超过业务截止时间",
        "The call exceeded its deadline"),
    "advice.deadline_exceeded": (
        "缩短提示词、换用更快的模型，或放宽 deadline_ms",
        "Shorten the prompt, use a faster model, or allow a larger deadline_ms"),
    "diagnostic.upstream_error": (
        "推理服务返回错误 (HTTP {status})",
        "The inference server answered an error (HTTP {status})"),
    "advice.upstream_error": (
        "查看厂商错误信息；检查模型名、API Key 与请求参数",
        "Read the vendor's message; check the model name, API key and request parameters"),
    "diagnostic.upstream_error/no_status": (
        "推理服务出错",
        "The inference server failed"),
    "advice.upstream_error/no_status": (
        "查看厂商错误信息；检查推理服务是否正常",
        "Read the vendor's message; check that the inference server is healthy"),
    "diagnostic.upstream_error/failed": (
        "推理服务未完成生成：资源不足或服务异常 (finish_reason={finish_reason})",
        "The inference server gave up generating: overloaded or failing "
        "(finish_reason={finish_reason})"),
    "advice.upstream_error/failed": (
        "稍后重试；持续出现时检查推理服务负载或联系厂商",
        "Retry shortly; if it persists, check the server's load or contact the vendor"),
    "diagnostic.connect_error": (
        "无法连接推理服务",
        "Could not connect to the inference server"),
    "advice.connect_error": (
        "检查 base_url、网络与推理服务是否在运行",
        "Check base_url, the network, and that the inference server is running"),
    "diagnostic.response_too_large": (
        "推理服务的响应超过大小上限，已停止读取并断开连接",
        "The inference server's answer passed the size limit: reading stopped and the "
        "connection was closed"),
    "advice.response_too_large": (
        "检查 max_tokens 与推理服务的输出是否失控；回答确实这么大时，调大该层级的 [limits] max_response_bytes",
        "Check max_tokens and whether the server's output runs away; if answers really are "
        "this large, raise the tier's [limits] max_response_bytes"),
    "diagnostic.cancelled": (
        "调用已被取消",
        "The call was cancelled"),
    "advice.cancelled": (
        "无需处理：客户插话或会话结束",
        "Nothing to do: the customer barged in or the session ended"),
    "diagnostic.internal_error": (
        "本服务内部错误，本次调用已结束",
        "An internal error of this service ended the call"),
    "advice.internal_error": (
        "这是本服务的缺陷，不是模型的：把这条记录的编号和同一时刻的服务日志交给开发团队",
        "A fault of this service, not the model's: give the developers this record's id and "
        "the service log of the same moment"),
    "diagnostic.truncated/context": (
        "输入超出模型上下文窗口，输出被截断 (finish_reason={finish_reason})",
        "The input exceeded the model's context window and the output was cut "
        "(finish_reason={finish_reason})"),
    "advice.truncated/context": (
        "缩短提示词或对话历史，或换用上下文更长的模型",
        "Shorten the prompt or the history, or use a model with a longer context"),
    "diagnostic.truncated/filtered": (
        "模型输出被厂商内容审核中断，内容不完整 (finish_reason={finish_reason})",
        "The vendor's content filter cut the output short (finish_reason={finish_reason})"),
    "advice.truncated/filtered": (
        "检查提示词与对话内容是否触发厂商审核",
        "Check whether the prompt or conversation trips the vendor's filter"),
    "diagnostic.empty_output/filtered": (
        "模型输出被厂商内容审核拦截，返回内容为空 (finish_reason={finish_reason})",
        "The vendor's content filter blocked the output; nothing came back "
        "(finish_reason={finish_reason})"),
    "advice.empty_output/filtered": (
        "检查提示词与对话内容是否触发厂商审核；必要时联系厂商",
        "Check whether the prompt or conversation trips the vendor's filter; ask the vendor "
        "if needed"),
    # reason -> what exactly happened, filled from the diagnostic's `args`
    "reason.total_timeout": ("{seconds} 秒内没有完整响应", "no complete response within {seconds}s"),
    "reason.ttft": (
        "{seconds} 秒内没有收到第一个 token",
        "no token within {seconds}s (time to first token)"),
    "reason.stalled": ("流停滞：{seconds} 秒没有数据", "stream stalled: no data for {seconds}s"),
    "reason.stalled_keepalive": (
        "流停滞：{seconds} 秒没有数据，只收到 {comments} 条保活注释",
        "stream stalled: no data for {seconds}s ({comments} keep-alive comments only)"),
    "reason.stream_total": ("流在 {seconds} 秒内没有结束", "stream not finished within {seconds}s"),
    "reason.read_timeout": ("在读超时时间内没有数据", "no data for the read timeout"),
    "reason.deadline": ("deadline_ms={deadline_ms}", "deadline_ms={deadline_ms}"),
    "reason.pool_busy": (
        "所有端点都已满载（max_in_flight={limit}）或在冷却中",
        "every endpoint is busy (max_in_flight={limit}) or cooling down"),
    "reason.cut_deadline": (
        "调用方的截止时间内没有应答（{seconds} 秒）",
        "no answer within the caller's deadline ({seconds}s)"),
    "reason.cut_hedge": (
        "对冲请求已在别处应答，本请求未应答（{seconds} 秒）",
        "no answer before its hedge answered elsewhere ({seconds}s)"),
    "reason.probe_timeout": ("探测请求 {seconds} 秒内没有应答", "probe not answered within {seconds}s"),
    "reason.server_closed": ("连接被服务端关闭", "connection closed by the server"),
    "reason.connection_lost": ("连接中断", "connection lost"),
    "reason.closed_before_end": (
        "流结束前连接被服务端关闭",
        "connection closed by the server before the stream finished"),
    "reason.response_limit": ("超过 {limit} 字节", "more than {limit} bytes"),
    "reason.line_limit": (
        "事件流的一行超过 {limit} 字节", "an event-stream line longer than {limit} bytes"),
    "reason.malformed_body": (
        "响应体格式错误（{bytes} 字节，不是 JSON 对象）",
        "malformed response body ({bytes} bytes, not a JSON object)"),
    "reason.malformed_chunk": (
        "第 {index} 个流数据块格式错误（{chars} 个字符，事件 '{event}'）",
        "malformed stream chunk #{index} ({chars} chars, event '{event}')"),
    "reason.http_library_refused": (
        "HTTP 库拒绝发送请求（{error}）",
        "the HTTP library refused the request ({error})"),
    "reason.key_unsendable": (
        "配置的 API Key 无法放进 HTTP 请求头：含有空格、控制字符或非 ASCII 字符，请重新保存 Key",
        "the configured API key cannot be sent in an HTTP header: it holds a space, a control"
        " or a non-ASCII character; save the key again"),
    "reason.redirect_not_followed": (
        "重定向不会被跟随：base_url 应直接指向推理服务",
        "a redirect, never followed: base_url must name the server itself"),
    "reason.blocked_target": (
        "{host} 指向云元数据或链路本地地址（{address}），不会连接；实验环境确需访问时设置 [server] allow_metadata_upstreams",
        "{host} points at a cloud-metadata or link-local address ({address}), which is never"
        " connected to; a lab that needs it sets [server] allow_metadata_upstreams"),
    "reason.url_credentials": (
        "base_url 带有凭据（user:password@），凭据不会被发送；请去掉它们，把 Key 填在 api_key",
        "base_url carries credentials (user:password@), which are never sent; remove them and"
        " put the key in api_key"),
    "reason.json_truncated": (
        "JSON 还没写完，模型输出就被截断了",
        "the model output was cut off before the JSON was complete"),
    "reason.json_in_reasoning": (
        "模型输出停在未闭合的 <think> 块里，没有给出答案",
        "the model output ended inside an unclosed <think> block, before any answer"),
    "reason.json_ambiguous_multiple": (
        "答案里有多个不同的 JSON 值，无法确定取哪一个",
        "the answer contains several different JSON values; refusing to pick one"),
    "reason.json_not_object": ("答案的 JSON 值不是对象", "the answer's JSON value is not an object"),
    "reason.json_unrepairable": (
        "答案里的 JSON 不猜测就无法读取",
        "the JSON in the answer cannot be read without guessing"),
    "reason.json_empty": ("答案里没有 JSON 对象", "the answer contains no JSON object"),
    "reason.intent_missing": (
        "没有 intent，或 intent 不是字符串：{value}",
        "intent missing or not a string: {value}"),
    "reason.intent_not_offered": (
        "intent「{value}」不在提供的意图（{names}）之中",
        "intent '{value}' is not one of the offered intents ({names})"),
    "reason.slots_not_object": ("slots 是 {kind}，不是对象", "slots is a {kind}, not an object"),
    "reason.answered_by_invalid": (
        "answered_by 是 {value}，不是 `human`、`voicemail`、`carrier`、`ivr`、`unknown` 之一",
        "answered_by is {value}, not one of human, voicemail, carrier, ivr, unknown"),
}
