"""Every sentence the server says to a caller, in Chinese and English, by a stable key:
the one catalogue (its model-call diagnostics section is catalogue_diagnostics.py).

An error raised anywhere carries a `Msg` (key + values), never finished text; the error
handlers render it in the caller's language (`locale.current()`). Values are filled with
`str.format` fields (`{config_id}`); a field that is not given shows as `?`; a value that is
itself a `Msg` (a role's name, what a rule forbids) is rendered in the same language.

Rules the tests hold for every entry: both languages, the same fields in both, no
full-width punctuation or Chinese in English, no English words in Chinese (identifiers such
as `max_tokens`, `api_key` or `HTTP` are names, not words, and stay as they are).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from callout_server.i18n.catalogue_canary import CANARY_MESSAGES
from callout_server.i18n.catalogue_diagnostics import DIAGNOSTIC_MESSAGES
from callout_server.i18n.catalogue_keys import KEY_MESSAGES
from callout_server.i18n.locale import Locale

# key -> (zh, en); model-call diagnostics are their own section (catalogue_diagnostics.py)
MESSAGES: dict[str, tuple[str, str]] = {
    # -- the envelope ---------------------------------------------------------------------
    "internal_error": ("服务器内部错误，详情见服务器日志",
                       "internal server error; the server log has the details"),
    "invalid_request": ("请求无效：{summary}", "invalid request: {summary}"),
    "not_found": ("没有这个资源", "not found"),
    "method_not_allowed": ("此地址不支持该请求方法", "method not allowed"),
    "invalid_body": ("无法解析请求体（不是 UTF-8 编码的 JSON）",
                     "there was an error parsing the body (not UTF-8 encoded JSON)"),
    "payload_too_large": ("请求体超过 {limit} 字节（见 docs/configuration.md 中的 [server] {setting}）",
                          "request body larger than {limit} bytes "
                          "(see [server] {setting} in docs/configuration.md)"),
    "content_type_json": ("请求体须以 JSON 发送，并带 Content-Type: application/json（收到：{got}）",
                          "send the body as JSON with Content-Type: application/json "
                          "(received: {got})"),
    "content_type_none": ("无", "none"),
    "json_invalid_at": ("JSON 无效：第 {line} 行第 {column} 列，{reason}",
                        "invalid JSON at line {line} column {column}: {reason}"),
    # -- who is calling -------------------------------------------------------------------
    "bearer_expected": ("认证头格式应为 'Authorization: Bearer <token>'",
                        "expected 'Authorization: Bearer <token>'"),
    "invalid_token": ("Bearer token 无效", "invalid bearer token"),
    "auth_required": ("需要认证：Bearer token 或控制台会话",
                      "authentication required: a bearer token or a console session"),
    "session_expired": ("控制台会话已过期或已退出登录",
                        "the console session has expired or was signed out"),
    "csrf_failed": ("缺少 {header} 请求头或其值不对（从 GET /api/auth/me 获取）",
                    "missing or wrong {header} header (get it from GET /api/auth/me)"),
    "admin_required": ("此接口需要管理员凭据，服务 token 不够",
                       "this route needs admin credentials; a service token is not enough"),
    "invalid_credentials": ("用户名或密码错误", "invalid username or password"),
    "too_many_logins": ("登录失败次数过多，请稍后再试", "too many failed logins; try again later"),
    "too_many_passwords": ("密码输错次数过多，请稍后再试", "too many wrong passwords; try again later"),
    "wrong_password": ("current_password：不是你当前的密码", "current_password: not your current password"),
    "wrong_password_field": ("不是你当前的密码", "not your current password"),
    "password_unchanged": ("new_password：新密码必须与当前密码不同",
                           "new_password: must differ from the current password"),
    "password_unchanged_field": ("必须与当前密码不同", "must differ from the current password"),
    "too_many_connections": ("此工作进程的连接数已达上限，请稍后重试",
                             "this worker has reached its connection limit; try again shortly"),
    "request_headers_timeout": ("请求头没有在 {seconds} 秒内传完", "the request headers did not "
                                "arrive within {seconds}s"),
    "request_body_timeout": ("请求体没有在 {seconds} 秒内传完", "the request body did not arrive "
                             "within {seconds}s"),
    "database_unavailable": ("数据库暂时不可用，请稍后重试",
                             "the database is unavailable; try again shortly"),
    # -- model configurations -------------------------------------------------------------
    "config_not_found": ("模型配置 {config_id} 不存在", "model configuration {config_id} not found"),
    "endpoint_not_found": ("配置 {config} 的端点中没有 {base_url}",
                           "configuration {config} has no endpoint {base_url}"),
    "version_conflict": (
        "模型配置 {config_id} 已被他人修改（你提交的版本是 {sent}，当前版本是 {current}），"
        "请重新加载后再修改",
        "model configuration {config_id} was changed by someone else (you sent version "
        "{sent}, it is now {current}); reload it and apply your change again"),
    "global_intents_version_conflict": (
        "全局意图已被他人修改（你提交的版本是 {sent}，当前版本是 {current}），请重新加载后再修改",
        "the global intents were changed by someone else (you sent version {sent}, it is now "
        "{current}); reload them and apply your change again"),
    "name_conflict": ("{tier} 层级已有名为「{name}」的配置",
                      "a {tier} configuration named '{name}' already exists"),
    "name_taken": ("该层级已有同名配置", "already used in this tier"),
    "config_conflict": ("此修改与另一个配置冲突，请重新加载后重试",
                        "the change conflicts with another configuration; reload and retry"),
    "config_db_unavailable": (
        "配置数据库无法连接，暂时不能保存修改。调用仍按最后加载的配置继续服务，请稍后重试。",
        "the configuration database is unreachable; changes cannot be saved right now. "
        "Calls keep being served with the last loaded configuration; retry shortly."),
    "config_unusable": (
        "模型配置 {config_id} 存储的 API Key 无法解密：加密它的密钥不在 CALLOUT_SECRET_KEY 中，"
        "或该行已损坏。此配置不会被使用；请恢复旧密钥（用逗号分隔放在新密钥之后），或重新保存 API Key。",
        "the stored API key of model configuration {config_id} cannot be decrypted; it was "
        "encrypted with a key that is not in CALLOUT_SECRET_KEY, or the row is corrupt. The "
        "configuration is not used; restore the old key (comma-separated after the new one) "
        "or save the API key again."),
    "api_key_required": (
        "api_key：base_url 或某个端点改到了另一个源（协议、主机或端口），而此配置存有 API Key；"
        "已存储的 Key 不会发往新主机。请在同一请求的 api_key 中填写新主机的 Key（或填 \"\" 清除）。",
        "api_key: base_url or an endpoint now points to another origin (scheme, host or port) and this "
        "configuration holds an API key; the stored key is never sent to a new host. Send "
        "the key for the new host in api_key in the same request (or \"\" to clear it)."),
    "api_key_required_field": ("base_url 换了主机，必须重新填写",
                               "required when base_url moves to another host"),
    # -- the call log ---------------------------------------------------------------------
    "window_invalid": ("window：应为时长，例如 15m、1h 或 7d",
                       "window: expected a duration such as 15m, 1h or 7d"),
    "window_invalid_field": ("时长无效", "invalid duration"),
    "window_too_long": ("window：最长 90d", "window: at most 90d"),
    "window_too_long_field": ("最长 90d", "at most 90d"),
    # -- chat -----------------------------------------------------------------------------
    "session_not_found": (
        "本工作进程上没有 call_id 为「{call_id}」的对话会话（已过期、已删除，或请求到了另一个工作进程）",
        "no chat session for call_id '{call_id}' on this worker "
        "(expired, deleted, or the request reached another worker)"),
    "session_exists": ("call_id 为「{call_id}」的对话会话已存在，要重新开始请先 DELETE 它",
                       "a chat session for call_id '{call_id}' already exists; "
                       "DELETE it first to start over"),
    "stale_turn": ("轮次「{turn_id}」已不是最新的一轮", "turn '{turn_id}' is no longer the newest turn"),
    "stale_revision": ("轮次「{turn_id}」的修订号 {revision} 不比已有的 {known} 新",
                       "turn '{turn_id}' revision {revision} is not newer than revision {known}"),
    "unknown_tool_call": ("没有 call_id 为「{call_id}」的待处理工具调用",
                          "no pending tool call with call_id '{call_id}'"),
    "too_many_sessions": (
        "本工作进程已有 {limit} 个对话会话（[chat] max_sessions）；请用 DELETE 结束已完成的通话，或增加工作进程",
        "this worker already holds {limit} chat sessions ([chat] max_sessions); "
        "end finished calls with DELETE, or add workers"),
    "session_store_unavailable": (
        "对话会话保存在共享存储中，而共享存储暂时无法访问；请稍后重试",
        "chat sessions are kept in Redis, which cannot be reached right now; retry shortly"),
    "too_many_session_bytes": (
        "本工作进程的会话提示词和工具已占 {limit} 字节（[chat] max_sessions_bytes）；"
        "请用 DELETE 结束已完成的通话，或增加工作进程",
        "this worker already holds {limit} bytes of session prompts and tools "
        "([chat] max_sessions_bytes); end finished calls with DELETE, or add workers"),
    "chat_internal_error": ("对话服务内部错误，本轮回复已结束", "internal error in the chat service"),
    "script_internal_error": ("话术生成服务内部错误，本次生成已结束",
                              "internal error in the script service; the generation ended"),
    "chat_slow_consumer": ("客户端读取太慢，本轮回复已结束（未读内容超过 [chat] max_unread_bytes）",
                           "the client read too slowly: this turn was ended (unread text "
                           "passed [chat] max_unread_bytes)"),
    # -- scripts --------------------------------------------------------------------------
    "draft_not_saved": ("草稿未能保存", "the draft could not be saved"),
    "draft_not_found": ("话术草稿 {draft_id} 不存在", "script draft {draft_id} not found"),
    "draft_version_conflict": (
        "话术草稿 {draft_id} 已被他人修改（当前版本 {current}，你提交的是 {sent}）",
        "script draft {draft_id} was changed by someone else (version {current}, you sent {sent})"),
    # -- speech guard lexicons -------------------------------------------------------------
    "lexicon_not_found": ("没有词库 {name}", "no lexicon {name}"),
    "lexicon_version_conflict": (
        "词库 {name} 已被他人修改（你提交的版本是 {sent}，当前版本是 {current}），请重新加载后再修改",
        "lexicon {name} was changed by someone else (you sent version {sent}, it is now "
        "{current}); reload it and apply your change again"),
    "too_many_lexicons": ("词库最多 {limit} 个", "at most {limit} lexicons"),
    "lexicon_term_empty": ("第 {index} 项为空（或只有标点和空格）",
                           "entry {index} is empty (or only punctuation and spaces)"),
    "lexicon_terms_too_many": ("最多 {limit} 项", "at most {limit} entries"),
    "lexicon_replacement_required": ("动作为“替换”时必须给出替换句",
                                     "required when action is replace"),
    "lexicon_replacement_unused": ("只有动作为“替换”时才用替换句",
                                   "only used when action is replace"),
    "unknown_lexicons": ("没有词库 {names}", "no lexicon {names}"),
    "pii_last4": ("尾号{last4}", "ending in {last4}"),
    # -- request values (validators raise these codes; `invalid()` builds the error) ------
    "nul_character": ("不能包含 NUL 字符", "must not contain NUL characters"),
    "lone_surrogate": ("必须是有效的 Unicode（不能含 \\ud800 这样的孤立代理项）",
                       "must be valid Unicode (a lone surrogate such as \\ud800 is not)"),
    "int_too_big": ("整数必须在 64 位范围内", "integers must fit in 64 bits"),
    "not_finite": ("NaN 和 Infinity 不是 JSON 数字", "NaN and Infinity are not JSON numbers"),
    "json_too_deep": ("嵌套超过 {max_depth} 层", "nested deeper than {max_depth} levels"),
    "json_key_not_string": ("对象的键必须是字符串", "object keys must be strings"),
    "not_json_value": ("不是 JSON 值（{kind}）", "not a JSON value ({kind})"),
    "json_too_large": ("编码后超过 {kb} KB", "larger than {kb} KB once encoded"),
    "date_out_of_range": ("日期超出范围", "date out of range"),
    "url_scheme_host": ("必须是带主机名的 http:// 或 https:// 地址",
                        "must be an http:// or https:// URL with a host"),
    "url_query_fragment": ("不能带查询串或片段（? 或 #）",
                           "must not carry a query string or fragment"),
    "url_credentials": ("不能带凭据（user:password@），Key 请填在 api_key",
                        "must not carry credentials (user:password@); put the key in api_key"),
    "api_key_chars": (
        "只能是不含空格和控制字符的可打印 ASCII（检查是否有换行，或粘贴进了 'Bearer '）",
        "must be printable ASCII without spaces or control characters "
        "(check for a line break or a pasted 'Bearer ')"),
    # -- upstream pools (endpoints, fallbacks) ---------------------------------------------
    "field_invalid": ("{field}：{reason}", "{field}: {reason}"),
    "endpoint_repeats_base_url": ("与 base_url 重复，base_url 已是第一个端点",
                                  "repeats base_url, which is already the first endpoint"),
    "endpoint_repeated": ("端点 {index} 与另一个端点的地址重复",
                          "endpoint {index} repeats the base URL of another endpoint"),
    "fallback_ids_in_file": ("fallback_ids 指向已存储的配置：请在控制台（或管理接口）的配置上设置",
                             "fallback_ids name stored configurations: set them on a "
                             "configuration in the console (or the admin API)"),
    "logger_level_pair": ("应写作 名称=级别，用逗号分隔（例如 `sqlalchemy.engine=info`）",
                          "expected name=level pairs, comma-separated "
                          "(e.g. sqlalchemy.engine=info)"),
    "url_blocked_target": ("指向云元数据或链路本地地址（{address}），不能作为模型服务地址（实验环境确需访问时设置 "
                           "[server] allow_metadata_upstreams）",
                           "points at a cloud-metadata or link-local address ({address}), which "
                           "is never a model server (a lab that needs it sets [server] "
                           "allow_metadata_upstreams)"),
    "url_blocked_target_in_file": ("{key} 指向云元数据或链路本地地址（{address}），不能作为模型服务地址（实验环境确需访问时设置 "
                                   "[server] allow_metadata_upstreams）",
                                   "{key} points at a cloud-metadata or link-local address "
                                   "({address}), which is never a model server (a lab that "
                                   "needs it sets [server] allow_metadata_upstreams)"),
    "fallback_twice": ("同一个配置出现了两次", "names a configuration twice"),
    "fallback_self": ("配置不能回退到自己", "a configuration cannot fall back to itself"),
    "fallback_unknown": ("没有模型配置 {config_id}", "no model configuration {config_id}"),
    "fallback_other_tier": ("配置 {config_id} 属于 {other} 层级，不是 {tier}",
                            "configuration {config_id} serves the {other} tier, not {tier}"),
    "in_use_delete": ("模型配置 {config_id} 是配置 {names} 的回退；先从它们的 fallback_ids 中移除再删除",
                      "model configuration {config_id} is a fallback of configuration(s) {names}; "
                      "remove it from their fallback_ids before you delete it"),
    "in_use_move": ("模型配置 {config_id} 是配置 {names} 的回退；先从它们的 fallback_ids 中移除再换层级",
                    "model configuration {config_id} is a fallback of configuration(s) {names}; "
                    "remove it from their fallback_ids before you move it to another tier"),
    # -- shadow evaluation -----------------------------------------------------------------
    "evaluation_not_found": ("评估 {evaluation_id} 不存在", "evaluation {evaluation_id} not found"),
    "evaluation_running": ("评估 {evaluation_id} 正在本工作进程上运行；每个工作进程一次只跑一个评估（等它结束或取消后再开始）",
                           "evaluation {evaluation_id} is running on this worker; one runs at a "
                           "time per worker (wait for it, or cancel it, then start the next)"),
    "evaluation_in_use_delete": ("模型配置 {config_id} 是正在运行的评估 {evaluation_id} 的候选；先取消评估再删除",
                                 "model configuration {config_id} is the candidate of running "
                                 "evaluation {evaluation_id}; cancel it before you delete it"),
    "evaluation_in_use_move": ("模型配置 {config_id} 是正在运行的评估 {evaluation_id} 的候选；先取消评估再换层级",
                               "model configuration {config_id} is the candidate of running "
                               "evaluation {evaluation_id}; cancel it before you move it to "
                               "another tier"),
    "evaluation_not_running": ("评估 {evaluation_id} 没有在运行（状态：{status}）",
                               "evaluation {evaluation_id} is not running (it is {status})"),
    "unknown_candidate": ("没有模型配置 {candidate_id}", "no model configuration {candidate_id}"),
    "playground_wrong_tier": ("配置 {config_id} 属于 {tier} 层级，不能在 {wanted} 试用台中使用",
                              "configuration {config_id} is a {tier} configuration, not one "
                              "for the {wanted} playground"),
    "candidate_wrong_tier": ("配置 {candidate_id} 属于 {tier} 层级；只有意图识别配置可以用意图识别流量评估",
                             "configuration {candidate_id} is a {tier} configuration; only nlu "
                             "configurations can be evaluated against NLU traffic"),
    "candidate_is_active": ("配置 {candidate_id} 就是当前生效的意图识别配置；请评估另一个配置",
                            "configuration {candidate_id} is the active nlu configuration; "
                            "evaluate another one against it"),
    "evaluation_limit": ("最多 {max_calls} 个通话（[evaluation] max_calls）",
                         "at most {max_calls} calls ([evaluation] max_calls)"),
    "no_traffic": ("没有符合条件（{filters}）的已记录意图识别通话可回放；输入按 [calllog] nlu_inputs_days 保留（0 表示不保留）",
                   "no recorded NLU calls match the filter ({filters}): nothing to replay. "
                   "Inputs are kept [calllog] nlu_inputs_days (0 keeps none)."),
    "no_traffic_field": ("没有符合条件的已记录通话", "no recorded calls match"),
    "protected_keys": ("不能覆盖 {keys}", "may not override {keys}"),
    "unknown_vendor": ("未知的厂商「{value}」，可选：{names}", "unknown vendor '{value}'; one of: {names}"),
    "enum_needs_values": ("槽位「{slot}」：enum 类型需要非空的 values 列表",
                          "slot '{slot}': type enum needs a non-empty `values` list"),
    "intents_or_slots": ("intents 和 slots 至少要给一个",
                         "at least one of `intents` / `slots` is required"),
    "names_unique": ("{kind}：名称不能重复", "{kind}: names must be unique"),
    "global_intents_rows": ("有误：{detail}", "invalid: {detail}"),
    "phrase_matches_nothing": ("意图 {intent} 的短语「{phrase}」去掉标点和空格后什么都不剩，永远匹配不到",
                               "phrase '{phrase}' of intent {intent} is nothing but punctuation "
                               "and spaces: it can never match"),
    "fallback_not_offered": ("fallback_intent 必须是提供的意图之一",
                             "fallback_intent must be one of the offered intents"),
    "tool_parameters_object": ("parameters 必须是类型为 'object' 的 JSON Schema",
                               "parameters must be a JSON schema of type 'object'"),
    "utterance_blank": ("为空：客户没有说话，请走拨号流程自己的无应答分支，不必调用 /api/nlu/decide",
                        "is blank: the customer said nothing; take the call flow's own "
                        "no-input branch instead of calling /api/nlu/decide"),
    "tool_nested_shape": ("这是 /v1/chat/completions 的嵌套写法（工具定义套在 function 里）："
                          "请把 name、description、parameters 移到外层，与 type 并列",
                          "this is the /v1/chat/completions nesting (the tool inside "
                          "function): move name, description and parameters up, beside type"),
    "duplicate_functions": ("函数名重复：{names}", "duplicate function names {names}"),
    "output_too_long": ("output 超过 {limit} 个字符", "output longer than {limit} characters"),
    # -- people, roles and the audit trail ---------------------------------------------------
    "role_viewer": ("只读", "viewer"),
    "role_operator": ("操作员", "operator"),
    "role_admin": ("管理员", "admin"),
    "need_role": ("{role}角色", "the {role} role"),
    "need_console_user": ("控制台用户身份", "a console user"),
    "forbidden_role": ("此操作需要{need}，你的角色是{role}",
                       "this route needs {need}; your role is {role}"),
    "forbidden_service": ("服务 token 不能调用此接口，它需要{need}",
                          "this route is not open to the service token; it needs {need}"),
    "forbidden_session_only": ("只有用会话登录的控制台用户才能这样做，token 不行",
                               "only a console user signed in with a session can do this"),
    "call_not_found": ("没有这通电话的任何记录", "nothing is stored for this call"),
    "user_not_found": ("没有名为「{username}」的用户", "no user named '{username}'"),
    "user_exists": ("已有名为「{username}」的用户", "a user named '{username}' already exists"),
    "last_admin_demote": ("「{username}」是最后一个启用的管理员，不能降级；请先让另一个人成为管理员",
                          "'{username}' is the last enabled admin and cannot be demoted; "
                          "make someone else an admin first"),
    "last_admin_disable": ("「{username}」是最后一个启用的管理员，不能停用；请先让另一个人成为管理员",
                           "'{username}' is the last enabled admin and cannot be disabled; "
                           "make someone else an admin first"),
    "last_admin_delete": ("「{username}」是最后一个启用的管理员，不能删除；请先让另一个人成为管理员",
                          "'{username}' is the last enabled admin and cannot be deleted; "
                          "make someone else an admin first"),
    "env_managed_account": (
        "「{username}」由 CALLOUT_ADMIN_USER / CALLOUT_ADMIN_PASSWORD 在每次启动时设定，不能在这里删除",
        "'{username}' is set by CALLOUT_ADMIN_USER / CALLOUT_ADMIN_PASSWORD at every start "
        "and cannot be deleted here"),
    "env_managed_role": (
        "「{username}」的角色和状态由 CALLOUT_ADMIN_USER / CALLOUT_ADMIN_PASSWORD 在每次启动时设定，请在那里修改",
        "the role and state of '{username}' are set by CALLOUT_ADMIN_USER / "
        "CALLOUT_ADMIN_PASSWORD at every start; change them there"),
    "env_managed_password": (
        "「{username}」的密码由 CALLOUT_ADMIN_PASSWORD 在每次启动时设定，请在那里修改",
        "the password of '{username}' is set by CALLOUT_ADMIN_PASSWORD at every start; "
        "change it there"),
    "username_invalid": ("应为 3 到 64 个字符，每个字符是小写字母、数字、'.'、'_' 或 '-'",
                         "3 to 64 characters, each a lowercase letter, a digit, '.', '_' or '-'"),
    "weak_password": ("密码太弱：至少 {min_length} 个字符", "too weak: at least {min_length} characters"),
    "password_too_long": ("最多 {max_length} 个字符", "at most {max_length} characters"),
    "password_blank": ("不能只有空格", "must not be only spaces"),
    # -- config.toml (read at start-up) ----------------------------------------------------
    "privacy_kinds_unknown": ("未知的个人信息类别 {unknown}；可选：{known}",
                              "unknown kinds {unknown}; known: {known}"),
    "privacy_key_short": ("至少需要 {min_bytes} 个字节", "needs at least {min_bytes} bytes"),
    "llm_section_missing": ("缺少 [llm.{tier}] 段", "missing [llm.{tier}] section"),
}
MESSAGES |= DIAGNOSTIC_MESSAGES  # its keys are prefixed: diagnostic., advice., reason.
MESSAGES |= CANARY_MESSAGES  # canary rollout (callout_server/canary/)
MESSAGES |= KEY_MESSAGES  # service keys, limits, usage and cost (catalogue_keys.py)

# Separators that join rendered pieces (a field and its message, several messages).
COLON: dict[Locale, str] = {"zh": "：", "en": ": "}
SEMICOLON: dict[Locale, str] = {"zh": "；", "en": "; "}


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def text(key: str, locale: Locale, /, **values: Any) -> str:
    """The message `key` in `locale`, its fields filled from `values`."""
    zh, en = MESSAGES[key]
    return (en if locale == "en" else zh).format_map(_Blank(values))


class Renderable(Protocol):
    """Text rendered per caller: a `Msg`, or another value that words itself (a diagnostic)."""

    def render(self, locale: Locale) -> str: ...


@dataclass(frozen=True, slots=True)
class Msg:
    """A message not rendered yet: rendered per caller by `render(locale)`.

    `str(msg)` is English, for logs and exception text.
    """

    key: str
    values: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.key not in MESSAGES:
            raise KeyError(f"no message {self.key!r} in the catalogue")

    def render(self, locale: Locale) -> str:
        return text(self.key, locale, **render_value(self.values, locale))

    def __str__(self) -> str:
        return self.render("en")


def msg(key: str, /, **values: Any) -> Msg:
    return Msg(key, values)


def render_value(value: Any, locale: Locale) -> Any:
    """`value` with every `Msg` inside it (lists, dicts) rendered in `locale`."""
    if isinstance(value, Msg):
        return value.render(locale)
    if isinstance(value, list):
        return [render_value(v, locale) for v in value]
    if isinstance(value, dict):
        return {k: render_value(v, locale) for k, v in value.items()}
    return value
