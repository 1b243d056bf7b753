// Interface strings, Chinese first. t(key, vars) falls back zh -> key; {name} is replaced.
const STORE_KEY = "callout.console.lang";

const zh = {
  app_title: "外呼模型控制台", skip_to_content: "跳到主要内容", lang_toggle_hint: "切换界面语言",
  lang_other: "English", loading: "加载中…", logout: "退出登录", nav_label: "主导航",
  nav_ai: "AI 模型", nav_models: "模型配置", nav_diagnostics: "诊断记录", nav_playground: "调试台",
  page_not_found: "页面不存在", page_not_found_body: "没有这个页面。", back_home: "回到模型配置",
  network_error: "网络错误，无法连接服务器。", session_expired: "登录已过期，请重新登录。",
  error_generic: "操作失败", close: "关闭", cancel: "取消", confirm: "确认", save: "保存",
  reload: "重新加载", retry: "重试", yes: "是", no: "否", none: "—", all: "全部",
  // login
  login_title: "登录", login_subtitle: "使用控制台账号登录", username: "用户名", password: "密码",
  login_submit: "登录", login_busy: "正在登录…", login_failed: "用户名或密码错误。",
  login_missing: "请输入用户名和密码。", logged_out: "已退出登录。",
  // tiers & sources
  tier: "层级", tier_nlu: "NLU 意图识别", tier_chat: "对话 Chat", tier_script: "话术生成 Script",
  source_db: "数据库", source_file: "配置文件", source: "来源",
  // models
  models_title: "模型配置", models_intro: "每个层级同一时间只有一个生效配置；没有数据库配置时使用 config.toml。",
  active_configs: "当前生效配置", no_active: "未配置", configs_list: "全部配置",
  new_config: "新建配置", edit_config: "编辑配置", name: "名称", model: "模型", base_url: "接口地址",
  api_key: "API Key", api_style: "接口风格", vendor: "厂商方言", vendor_auto: "自动识别",
  timeout_s: "超时（秒）", max_tokens: "max_tokens", temperature: "temperature",
  enable_thinking: "思考模式", thinking_default: "层级默认", thinking_off: "关闭", thinking_on: "开启",
  reasoning_effort: "reasoning_effort", reasoning_default: "不设置", extra_params: "额外参数（JSON）",
  extra_params_hint: "最后合并进请求体；不能覆盖 model、messages/input、stream。",
  is_active: "创建后立即生效", active: "生效中", inactive: "未生效", version: "版本",
  updated: "更新", actions: "操作", edit: "编辑", activate: "设为生效", delete: "删除",
  test: "测试连接", test_short: "测试", history: "修改历史", no_configs: "还没有数据库配置。新建一个，或继续使用配置文件。",
  key_none: "未设置", key_replace: "更换 Key", key_clear: "清除 Key", key_keep: "保持原 Key",
  key_new: "新的 API Key", key_will_clear: "保存后将清除已存储的 Key。",
  key_hint: "Key 只写不读：这里只显示脱敏值，不修改即保留原 Key。",
  key_host_changed: "接口地址已改到另一个主机：已存储的 Key 不会发往新主机。请填写新主机的 API Key，或清除 Key。",
  key_required_host: "接口地址换了主机，必须重新填写 API Key",
  rollback_needs_key: "此回滚会把接口地址改到另一个主机，已存储的 Key 不会发往新主机。请用「编辑」修改地址并填写该主机的 API Key。",
  confirm_delete: "确定删除配置「{name}」？此操作不可撤销。",
  confirm_activate: "将「{name}」设为 {tier} 的生效配置？该层级的其他配置会被停用。",
  saved: "已保存「{name}」（版本 {version}）。", created: "已创建「{name}」。", deleted: "已删除「{name}」。",
  activated: "「{name}」已生效。", validation_failed: "请修正标出的字段。",
  version_conflict: "保存失败：有人在你之前修改了这个配置（版本已变化）。重新加载后再修改。",
  version_conflict_reload: "重新加载最新版本", invalid_json: "不是有效的 JSON 对象",
  required: "必填", testing: "正在测试…", test_result: "连接测试：{name}",
  test_ok: "连接正常", test_failed: "连接失败", latency: "延迟", thinking_suppressed: "思考已抑制",
  diagnostic: "诊断", advice: "建议", message: "说明", details: "详情",
  revisions_title: "修改历史：{name}", no_revisions: "没有修改记录。", revision_action: "动作",
  revision_actor: "操作人", revision_at: "时间", revision_changes: "变更", field: "字段",
  old_value: "旧值", new_value: "新值", rollback: "回滚此修改",
  confirm_rollback: "把「{name}」的 {fields} 恢复为版本 {version} 之前的值？（API Key 不会回滚）",
  rolled_back: "已回滚，当前版本 {version}。", rollback_nothing: "这个修改没有可以回滚的字段。",
  action_create: "创建", action_update: "修改", action_activate: "生效", action_deactivate: "停用",
  action_delete: "删除", action_rollback: "回滚", key_changed: "（Key 已变更）",
  // diagnostics
  diag_title: "诊断记录", diag_intro: "模型调用的失败与截断，以及它们背后的数字。",
  summary: "概览", window_1h: "最近 1 小时", window_24h: "最近 24 小时", calls: "调用数",
  p50: "P50", p90: "P90", p99: "P99", no_data: "暂无数据", codes_chart: "{tier} 各结果码数量",
  filters: "筛选", code: "结果码", call_id: "通话 ID", since: "起始时间", limit: "每页",
  apply: "查询", reset: "重置", records: "记录", time: "时间", node_id: "节点",
  tokens: "Tokens", older: "加载更早的记录", no_records: "没有符合条件的记录。",
  end_of_records: "已到最早的记录。", record_detail: "记录详情 #{id}",
  truncation_badge: "截断", finish_reason: "finish_reason", completion_tokens: "completion_tokens",
  reasoning_tokens: "reasoning_tokens", prompt_tokens: "prompt_tokens", ttft_ms: "首字延迟",
  config_id: "配置 ID", status: "状态", truncation_explain: "输出触顶 max_tokens：completion {completion} / max {max}，其中思考 {reasoning}。",
  // playground
  pg_title: "调试台", pg_intro: "用当前生效的配置试一试：NLU 决策、流式对话、话术生成。",
  tab_nlu: "NLU 决策", tab_chat: "流式对话", tab_script: "话术生成",
  intents: "意图", intent_name: "意图名", intent_desc: "描述", add_intent: "添加意图",
  slots: "槽位", slot_name: "槽位名", slot_type: "类型", slot_values: "枚举值（逗号分隔）",
  slot_desc: "描述", add_slot: "添加槽位", remove: "移除", utterance: "客户话语",
  fallback_intent: "兜底意图", fallback_none: "无（失败时返回错误）", decide: "识别",
  deciding: "识别中…", decision: "决策结果", client_latency: "往返 {ms} ms", server_latency: "模型 {ms} ms",
  fallback_used: "使用了兜底意图", need_intent_or_slot: "至少填写一个意图或槽位。",
  system_prompt: "系统提示词", start_session: "开始会话", new_session: "新会话",
  session_started: "会话 {id} 已创建。", your_message: "你的消息", send: "发送",
  barge_in: "打断（取消）", streaming: "生成中…", you: "客户", assistant: "坐席 AI",
  end_reason: "结束：{reason}", tool_call: "工具调用", usage: "用量", chat_empty: "开始会话后，在下面输入客户的话。",
  brief: "需求简述", generate: "生成话术", stop: "停止", generating: "生成中…",
  chars_received: "已接收 {n} 字", elapsed: "用时 {s} 秒", script_result: "生成的话术",
  script_done: "完成：{n} 字，{s} 秒。",
  // shadow evaluation
  nav_evaluations: "影子评估", eval_title: "影子评估",
  eval_intro: "切换 NLU 模型之前，用最近的真实通话回放候选配置，对比决策与速度。当前生效配置不受影响。",
  eval_action: "用近期流量评估", eval_dialog_title: "用近期流量评估",
  eval_dialog_intro: "把最近记录的 NLU 调用按原样发给「{name}」（{model}），与当时的决策逐条对比。",
  eval_node: "节点", eval_node_hint: "留空：所有节点", eval_limit: "通话数", eval_limit_hint: "取最近的这么多条（默认 500）",
  eval_limit_invalid: "请输入正整数", eval_since_hint: "可选：只取此时间之后的通话",
  eval_start: "开始评估", eval_starting: "正在开始…", eval_started: "评估 #{id} 已开始。",
  eval_no_traffic: "没有符合条件的已记录通话可回放（输入保留天数见 [calllog] nlu_inputs_days）。",
  eval_running_here: "此 worker 上已有评估 #{id} 在运行：等它结束或取消后再开始。", eval_open: "查看",
  eval_past: "历史评估", eval_none: "还没有评估。在「模型配置」里从一个未生效的 NLU 配置开始。",
  eval_candidate: "候选", eval_recorded: "当时记录", eval_progress: "进度",
  eval_intent_agreement: "意图一致率", eval_slot_agreement: "槽位一致率", eval_started_at: "开始时间", eval_by: "发起人",
  eval_heading: "评估 #{id}：{name}", eval_cancel: "取消评估", eval_cancelling: "正在取消…", eval_cancelled_toast: "已取消。",
  eval_progress_line: "已回放 {done} / {total}（{pct}%）",
  eval_status_running: "运行中", eval_status_done: "已完成", eval_status_cancelled: "已取消", eval_status_failed: "失败",
  eval_agreeing: "{n} / {calls} 通完全一致", eval_skipped: "跳过 {n} 通（输入已清除或无效）",
  eval_sides: "并排对比", eval_p95: "P95", eval_fallbacks: "兜底次数", eval_fallback: "兜底",
  eval_latency_chart: "延迟分布：当时记录 vs 候选", eval_latency_axis: "整次决策延迟（毫秒，含重试）",
  eval_by_node: "按节点", eval_disagreements: "不一致的通话", eval_more: "加载更多",
  eval_dis_count: "已显示 {n} 通不一致", eval_no_disagreements: "没有不一致的通话。",
  eval_nothing_replayed: "结束前没有回放完任何通话，没有可对比的结果。",
};

const en = {
  app_title: "Callout Model Console", skip_to_content: "Skip to main content", lang_toggle_hint: "Switch interface language",
  lang_other: "中文", loading: "Loading…", logout: "Log out", nav_label: "Main navigation",
  nav_ai: "AI models", nav_models: "Model configs", nav_diagnostics: "Diagnostics", nav_playground: "Playground",
  page_not_found: "Page not found", page_not_found_body: "There is no such page.", back_home: "Back to model configs",
  network_error: "Network error: cannot reach the server.", session_expired: "Your session expired; please log in again.",
  error_generic: "Request failed", close: "Close", cancel: "Cancel", confirm: "Confirm", save: "Save",
  reload: "Reload", retry: "Retry", yes: "Yes", no: "No", none: "—", all: "All",
  login_title: "Log in", login_subtitle: "Sign in with your console account", username: "Username", password: "Password",
  login_submit: "Log in", login_busy: "Logging in…", login_failed: "Wrong username or password.",
  login_missing: "Enter a username and a password.", logged_out: "Logged out.",
  tier: "Tier", tier_nlu: "NLU", tier_chat: "Chat", tier_script: "Script",
  source_db: "database", source_file: "config file", source: "Source",
  models_title: "Model configurations", models_intro: "One configuration is active per tier; without one, config.toml is used.",
  active_configs: "Active configurations", no_active: "Not configured", configs_list: "All configurations",
  new_config: "New configuration", edit_config: "Edit configuration", name: "Name", model: "Model", base_url: "Base URL",
  api_key: "API key", api_style: "API style", vendor: "Vendor dialect", vendor_auto: "Auto-detect",
  timeout_s: "Timeout (s)", enable_thinking: "Thinking", thinking_default: "Tier default", thinking_off: "Off", thinking_on: "On",
  reasoning_default: "Not set", extra_params: "Extra params (JSON)",
  extra_params_hint: "Merged into the request body last; cannot override model, messages/input, stream.",
  is_active: "Activate on create", active: "Active", inactive: "Inactive", version: "Version",
  updated: "Updated", actions: "Actions", edit: "Edit", activate: "Activate", delete: "Delete",
  test: "Test connection", test_short: "Test", history: "History", no_configs: "No database configurations yet. Create one, or keep using the config file.",
  key_none: "not set", key_replace: "Replace key", key_clear: "Clear key", key_keep: "Keep current key",
  key_new: "New API key", key_will_clear: "Saving will clear the stored key.",
  key_hint: "Keys are write-only: only the masked value is shown; leave it alone to keep the key.",
  key_host_changed: "The base URL now points to another host: the stored key is never sent to a new host. Enter the API key for the new host, or clear the key.",
  key_required_host: "Required: the base URL moved to another host",
  rollback_needs_key: "This rollback moves the base URL to another host, and the stored key is never sent to a new host. Use Edit to change the URL and enter the key for that host.",
  confirm_delete: "Delete configuration “{name}”? This cannot be undone.",
  confirm_activate: "Make “{name}” the active {tier} configuration? The tier's other configuration is deactivated.",
  saved: "Saved “{name}” (version {version}).", created: "Created “{name}”.", deleted: "Deleted “{name}”.",
  activated: "“{name}” is now active.", validation_failed: "Please fix the marked fields.",
  version_conflict: "Not saved: someone else changed this configuration first. Reload it, then edit again.",
  version_conflict_reload: "Reload the latest version", invalid_json: "Not a valid JSON object",
  required: "Required", testing: "Testing…", test_result: "Connection test: {name}",
  test_ok: "Connection OK", test_failed: "Connection failed", latency: "Latency", thinking_suppressed: "Thinking suppressed",
  diagnostic: "Diagnostic", advice: "Advice", message: "Message", details: "Details",
  revisions_title: "History: {name}", no_revisions: "No changes recorded.", revision_action: "Action",
  revision_actor: "By", revision_at: "When", revision_changes: "Changes", field: "Field",
  old_value: "Old", new_value: "New", rollback: "Roll back this change",
  confirm_rollback: "Restore {fields} of “{name}” to the values before version {version}? (The API key is not rolled back.)",
  rolled_back: "Rolled back; now at version {version}.", rollback_nothing: "This change has no fields that can be rolled back.",
  action_create: "created", action_update: "updated", action_activate: "activated", action_deactivate: "deactivated",
  action_delete: "deleted", action_rollback: "rolled back", key_changed: "(key changed)",
  diag_title: "Diagnostics", diag_intro: "Failed and truncated model calls, with the numbers behind them.",
  summary: "Summary", window_1h: "Last hour", window_24h: "Last 24 hours", calls: "Calls",
  no_data: "No data", codes_chart: "{tier} calls per code",
  filters: "Filters", code: "Code", call_id: "Call ID", since: "Since", limit: "Page size",
  apply: "Search", reset: "Reset", records: "Records", time: "Time", node_id: "Node",
  older: "Load older records", no_records: "No matching records.",
  end_of_records: "That is the oldest record.", record_detail: "Record #{id}",
  truncation_badge: "truncated", ttft_ms: "Time to first token",
  config_id: "Config ID", status: "Status", truncation_explain: "Output hit max_tokens: completion {completion} / max {max}, reasoning {reasoning}.",
  pg_title: "Playground", pg_intro: "Try the active configurations: NLU decisions, streamed chat, script generation.",
  tab_nlu: "NLU decision", tab_chat: "Streamed chat", tab_script: "Script generation",
  intents: "Intents", intent_name: "Intent name", intent_desc: "Description", add_intent: "Add intent",
  slots: "Slots", slot_name: "Slot name", slot_type: "Type", slot_values: "Enum values (comma-separated)",
  slot_desc: "Description", add_slot: "Add slot", remove: "Remove", utterance: "Customer utterance",
  fallback_intent: "Fallback intent", fallback_none: "None (errors are returned)", decide: "Decide",
  deciding: "Deciding…", decision: "Decision", client_latency: "round trip {ms} ms", server_latency: "model {ms} ms",
  fallback_used: "Fallback intent used", need_intent_or_slot: "Give at least one intent or slot.",
  system_prompt: "System prompt", start_session: "Start session", new_session: "New session",
  session_started: "Session {id} created.", your_message: "Your message", send: "Send",
  barge_in: "Barge in (cancel)", streaming: "Streaming…", you: "Customer", assistant: "Agent AI",
  end_reason: "ended: {reason}", tool_call: "Tool call", usage: "Usage", chat_empty: "Start a session, then type what the customer says.",
  brief: "Brief", generate: "Generate script", stop: "Stop", generating: "Generating…",
  chars_received: "{n} chars received", elapsed: "{s} s elapsed", script_result: "Generated script",
  script_done: "Done: {n} chars in {s} s.",
  nav_evaluations: "Shadow evaluation", eval_title: "Shadow evaluation",
  eval_intro: "Before switching the NLU model, replay recent real calls against a candidate and compare decisions and speed. The active configuration is not touched.",
  eval_action: "Evaluate against recent traffic", eval_dialog_title: "Evaluate against recent traffic",
  eval_dialog_intro: "The most recent recorded NLU calls are sent as they were to “{name}” ({model}) and each answer is compared with the decision made then.",
  eval_node: "Node", eval_node_hint: "Empty: all nodes", eval_limit: "Calls", eval_limit_hint: "The most recent this many (default 500)",
  eval_limit_invalid: "Enter a positive whole number", eval_since_hint: "Optional: only calls after this time",
  eval_start: "Start evaluation", eval_starting: "Starting…", eval_started: "Evaluation #{id} started.",
  eval_no_traffic: "No recorded calls match to replay (inputs are kept [calllog] nlu_inputs_days).",
  eval_running_here: "Evaluation #{id} is running on this worker: wait for it or cancel it first.", eval_open: "Open",
  eval_past: "Past evaluations", eval_none: "No evaluations yet. Start one from an inactive NLU configuration under Model configs.",
  eval_candidate: "Candidate", eval_recorded: "Recorded", eval_progress: "Progress",
  eval_intent_agreement: "Intent agreement", eval_slot_agreement: "Slot agreement", eval_started_at: "Started", eval_by: "By",
  eval_heading: "Evaluation #{id}: {name}", eval_cancel: "Cancel evaluation", eval_cancelling: "Cancelling…", eval_cancelled_toast: "Cancelled.",
  eval_progress_line: "{done} / {total} replayed ({pct}%)",
  eval_status_running: "running", eval_status_done: "done", eval_status_cancelled: "cancelled", eval_status_failed: "failed",
  eval_agreeing: "{n} / {calls} calls agree entirely", eval_skipped: "{n} calls skipped (inputs purged or invalid)",
  eval_sides: "Side by side", eval_p95: "P95", eval_fallbacks: "Fallbacks", eval_fallback: "fallback",
  eval_latency_chart: "Latency: recorded vs candidate", eval_latency_axis: "whole decision latency (ms, retry included)",
  eval_by_node: "By node", eval_disagreements: "Disagreements", eval_more: "Load more",
  eval_dis_count: "{n} disagreements shown", eval_no_disagreements: "No disagreements.",
  eval_nothing_replayed: "No call was replayed before it ended: nothing to compare.",
};

const DICTS = { zh, en };

function initialLang() {
  try {
    const saved = localStorage.getItem(STORE_KEY);
    if (saved === "zh" || saved === "en") return saved;
  } catch { /* storage disabled */ }
  return "zh";
}

let lang = initialLang();
const listeners = new Set();

export function getLang() { return lang; }

export function setLang(next) {
  if (next !== "zh" && next !== "en") return;
  lang = next;
  try { localStorage.setItem(STORE_KEY, next); } catch { /* storage disabled */ }
  document.documentElement.lang = next === "zh" ? "zh-CN" : "en";
  listeners.forEach((fn) => fn(next));
}

export function onLangChange(fn) { listeners.add(fn); return () => listeners.delete(fn); }

export function t(key, vars) {
  let s = DICTS[lang][key] ?? zh[key] ?? key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (vars[k] ?? vars[k] === 0 ? String(vars[k]) : m));
  return s;
}

export function tierLabel(tier) { return zh[`tier_${tier}`] ? t(`tier_${tier}`) : String(tier ?? ""); }

/** Translate static markup: data-i18n (text) and data-i18n-aria-label / -placeholder. */
export function applyStatic(root = document) {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  root.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  root.querySelectorAll("[data-i18n-aria-label]").forEach((el) => {
    el.setAttribute("aria-label", t(el.dataset.i18nAriaLabel));
  });
  root.querySelectorAll("[data-i18n-placeholder]").forEach((el) => {
    el.setAttribute("placeholder", t(el.dataset.i18nPlaceholder));
  });
}

export function fmtTime(value) {
  if (!value) return "—";
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toLocaleString(lang === "zh" ? "zh-CN" : "en-GB", {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
    hour12: false,
  });
}

export function fmtNum(n, digits = 0) {
  if (n === null || n === undefined || n === "") return "—";
  const x = Number(n);
  if (!Number.isFinite(x)) return String(n);
  return x.toLocaleString(lang === "zh" ? "zh-CN" : "en-US", { maximumFractionDigits: digits });
}
