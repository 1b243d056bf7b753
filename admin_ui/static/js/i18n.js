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
  tier: "层级", tier_nlu: "NLU 意图识别", tier_chat: "对话", tier_script: "话术生成",
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
  apply: "查询", reset: "重置", export_csv: "导出 CSV", export_csv_hint: "按当前筛选导出（最多 10000 条，最新在前）", records: "记录", time: "时间", node_id: "节点",
  tokens: "Token 数", older: "加载更早的记录", no_records: "没有符合条件的记录。",
  end_of_records: "已到最早的记录。", record_detail: "记录详情 #{id}",
  truncation_badge: "截断", finish_reason: "finish_reason", completion_tokens: "completion_tokens",
  reasoning_tokens: "reasoning_tokens", prompt_tokens: "prompt_tokens", ttft_ms: "首字延迟",
  config_id: "配置 ID", status: "状态", truncation_explain: "输出触顶 max_tokens：输出 {completion} / 上限 {max}，其中思考 {reasoning}。",
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
  // test connection: what was checked (codes from connectivity/checks.py)
  test_ok_notes: "连接正常，{n} 项需注意",
  chk_reachable: "接口可达", chk_auth: "API Key", chk_model: "模型名", chk_thinking: "思考抑制", chk_answer: "模型回答",
  chk_status_ok: "通过", chk_status_warn: "注意", chk_status_fail: "失败", chk_status_info: "说明", chk_status_skipped: "未检查",
  chk_see_diagnostic: "{code}：见下方诊断",
  chk_reachable_answered: "接口有应答",
  chk_reachable_connect_error: "无法连接：检查接口地址、网络，以及推理服务是否在运行",
  chk_reachable_timeout: "超时仍无应答：检查推理服务负载，或调大超时",
  chk_reachable_not_found: "接口地址返回 404：检查路径（通常以 /v1 结尾）",
  chk_auth_accepted: "Key 已被接受", chk_auth_not_required: "未设置 Key，服务也不要求",
  chk_auth_rejected: "Key 被拒绝（HTTP {status}）：检查或更换 Key",
  chk_auth_missing: "服务要求 Key（HTTP {status}）：请填写 API Key",
  chk_model_served: "模型 {served} 可用", chk_model_served_as: "服务以 {served} 应答（配置为 {configured}）",
  chk_model_accepted: "模型名已被接受", chk_model_not_found: "服务上没有模型 {configured}：检查模型名",
  chk_thinking_suppressed: "已抑制：没有返回思考内容",
  chk_thinking_not_suppressed: "已请求关闭思考，但仍返回了思考内容：检查厂商方言或思考模式设置",
  chk_thinking_allowed: "配置允许思考", chk_thinking_vendor_default: "思考交给厂商默认设置",
  chk_answer_answered: "返回了回答",
  chk_answer_cut_at_test_cap: "返回了回答；测试只读 {test_max_tokens} 个 token，在此截断属正常（配置为 {max_tokens}）",
  chk_answer_reasoning_used_test_cap: "思考用满了测试的 {test_max_tokens} token，尚未作答；配置的 {max_tokens} 留有余地",
  chk_skipped_not_run: "未检查：前一项未通过",
  // console details (issue 12 item 8)
  key_hint_new: "Key 只写不读：保存后只显示脱敏值。本地推理服务不需要 Key 时留空即可。",
  key_hint_none: "还没有 Key：本地推理服务通常不需要；需要时点「设置 Key」。",
  key_set: "设置 Key", key_skip: "不设置 Key",
  since_invalid: "请按「年-月-日 时:分」填写，例如 2026-12-01 09:30",
  rev_value: "值", key_set_on_create: "（已设置 Key）",
  nlu_result_empty: "填好意图、槽位和客户话语后点「识别」：决策 JSON 与延迟显示在这里。",
  // one language at a time: labels, statuses and sample data that used to stay in one language
  colon: "：", role_admin: "管理员", role_service: "服务", role_operator: "操作员", role_viewer: "只读",
  tier_short_nlu: "NLU", tier_short_chat: "对话", tier_short_script: "话术",
  code_ok: "成功", code_truncated_by_reasoning: "思考耗尽预算", code_truncated: "输出被截断",
  code_empty_output: "输出为空", code_invalid_json: "JSON 无效", code_schema_mismatch: "不符合节点要求",
  code_timeout: "超时", code_deadline_exceeded: "超过截止时间", code_upstream_error: "上游服务出错",
  code_connect_error: "连接失败", code_response_too_large: "响应过大", code_cancelled: "已取消",
  http_status: "HTTP 状态", reasoning_short: "思考 {n}", n_records: "共 {n} 条记录",
  output_mode: "输出方式", output_audio: "语音（逐句）", output_text: "文本（逐字）",
  end_completed: "已完成", end_cancelled: "已取消", end_superseded: "已被新一轮取代", end_timeout: "超时",
  end_error: "出错", end_closed: "连接已关闭", end_aborted: "已中止", end_truncated: "已截断",
  usage_line: "用量：输入 {prompt} · 输出 {completion} · 思考 {reasoning}", tool_call_named: "工具调用：{name}",
  sample_intent_agree: "客户同意并给出时间", sample_intent_refuse: "客户拒绝", sample_slot_time: "客户方便的时间",
  sample_utterance: "明天下午三点以后都可以", sample_system_prompt: "你是一名礼貌的电话回访坐席，回答简短、口语化。",
  sample_brief: "给一家宽带运营商写一段回访话术：确认安装满意度，询问是否需要加装路由器。",
  // people, roles, audit, own password
  nav_admin: "管理", nav_people: "人员与角色", nav_audit: "审计日志",
  role: "角色",
  role_viewer_hint: "查看配置（密钥脱敏）、诊断与话术草稿，不能修改，不能调用模型",
  role_operator_hint: "另可修改、启用模型配置，测试连接，使用调试台，编辑话术草稿",
  role_admin_hint: "另可管理人员、查看审计日志",
  not_allowed: "无权访问", not_allowed_body: "你的角色（{role}）不能打开此页面，需要 {need}。",
  people_title: "人员与角色", people_intro: "谁能做什么：只读看、操作员改模型、管理员管人。停用、删除、降级或重置密码会立即结束该用户的所有会话。",
  new_user: "新建用户", user_created: "已创建用户「{name}」。", user_status: "状态", enabled: "启用", disabled: "已停用",
  created_at: "创建时间", last_login: "最近登录", never: "从未", change_role: "修改角色", role_changed: "「{name}」现在是{role}。",
  disable: "停用", enable: "启用", confirm_disable: "停用「{name}」？其所有会话将立即结束。", user_disabled: "已停用「{name}」。",
  user_enabled: "已启用「{name}」。", reset_password: "重置密码", confirm_reset: "为「{name}」生成新密码？其所有会话将立即结束。",
  confirm_delete_user: "删除用户「{name}」？其所有会话将立即结束，此操作不可撤销。", user_deleted: "已删除「{name}」。",
  password_once_title: "「{name}」的新密码", password_once_body: "这个密码只显示这一次，请现在交给对方。关闭后无法再查看。",
  copy: "复制", copied: "已复制", generate_password: "生成密码", password_hint: "至少 12 个字符。",
  username_hint: "3–64 个字符：小写字母、数字、. _ -", source_env: "环境变量", source_generated: "首次启动生成", source_console: "控制台",
  bootstrap_user: "由环境变量管理", you_marker: "（你）", last_admin: "这是最后一个启用的管理员，不能降级、停用或删除。",
  user_exists: "用户名已存在。", managed_by_environment: "此账号由环境变量 CALLOUT_ADMIN_USER / CALLOUT_ADMIN_PASSWORD 管理。",
  change_password: "修改密码", current_password: "当前密码", new_password: "新密码", confirm_password: "确认新密码",
  passwords_differ: "两次输入的新密码不一致。", wrong_password: "当前密码不正确。",
  password_changed: "密码已修改，你在其他地方的登录已退出。",
  audit_title: "审计日志", audit_intro: "谁在何时、从哪里改了什么：配置、人员、话术草稿，以及每次登录、失败登录和退出。最新的在前。",
  actor: "操作人", action: "动作", target: "对象", via: "方式", ip: "地址", via_session: "会话", via_token: "令牌",
  action_all: "全部动作", action_family_config: "模型配置", action_family_user: "人员", action_family_auth: "登录与密码",
  action_family_draft: "话术草稿", no_events: "没有符合条件的记录。", older_events: "加载更早的记录",
  end_of_events: "已到最早的记录。", event_detail: "记录详情 #{id}", until: "截止时间",
  // upstream pools
  pool: "副本、备用与对冲", pool_hint: "副本与接口地址使用同一模型、Key 与方言；备用配置在所有副本不可用时按顺序接替。",
  endpoints: "更多副本", endpoint: "端点", weight: "权重", remove: "移除",
  endpoints_none: "只有接口地址这一个端点。", add_endpoint: "添加副本",
  fallback_ids: "备用配置（按顺序）", fallback_choose: "选择同层级的配置…", add_fallback: "添加备用", move_up: "上移",
  fallbacks_none: "没有备用配置（{tier}）。",
  hedge_after_ms: "对冲等待（毫秒）", hedge_hint: "非流式调用超过这么久没有回答，就把同一请求再发给另一副本（或第一个备用），先到先用。留空 = 不对冲。",
  off: "不对冲", max_in_flight: "每端点并发上限", max_in_flight_hint: "每个工作进程对每个端点的并发请求上限。留空 = 不限。",
  unbounded: "不限", weight_positive: "权重必须大于 0",
  upstreams_title: "上游端点健康", upstreams_intro: "本工作进程看到的各端点状态：冷却中的端点不接流量，冷却结束后先用一次真实调用探测。",
  upstreams_none: "还没有端点。", configuration: "配置", state: "状态", in_flight: "进行中",
  error_rate: "近期失败率", last_error: "最近错误", role_fallback: "备用",
  state_healthy: "健康", state_cooling_down: "冷却中", state_probing: "待探测", cooldown_until: "至 {time}",
  pool_replicas: "{n} 个副本", pool_fallbacks: "备用 {names}", pool_hedge: "对冲 {ms} ms", pool_cap: "并发 ≤ {n}",
  // the audit trail's actions and details, the people page's refusals (roles i18n)
  act_config_create: "新建模型配置", act_config_update: "修改模型配置", act_config_activate: "启用模型配置",
  act_config_delete: "删除模型配置", act_user_create: "新建用户", act_user_update: "修改用户", act_user_delete: "删除用户",
  act_auth_login: "登录", act_auth_login_failed: "登录失败", act_auth_logout: "退出登录",
  act_auth_password_change: "修改自己的密码", act_auth_password_change_failed: "修改密码失败",
  act_draft_create: "新建话术草稿", act_draft_update: "修改话术草稿", act_draft_delete: "删除话术草稿",
  act_evaluation_start: "开始影子评估", act_evaluation_cancel: "取消影子评估", action_family_evaluation: "影子评估",
  detail_candidate_id: "候选配置", detail_calls: "通话数",
  action_family_all: "{family}（全部）", actor_unknown: "（未知用户）", list_sep: "、", detail_sep: "；",
  detail_role: "角色", detail_disabled: "停用", detail_password: "密码", detail_sessions_ended: "结束的会话",
  detail_other_sessions_ended: "结束的其他会话", detail_reason: "原因", detail_title: "标题", detail_status: "状态",
  detail_fields: "修改的字段", detail_deactivated: "停用的配置", detail_script: "话术", detail_brief: "需求",
  reason_unknown_user: "没有这个用户", reason_disabled: "账号已停用", reason_wrong_password: "密码错误",
  reason_wrong_current_password: "当前密码错误",
  marker_set: "已设置", marker_replaced: "已更换", marker_cleared: "已清除", marker_reset: "已重置",
  marker_changed: "已修改", marker_unchanged: "未修改",
  draft_status_complete: "完整", draft_status_truncated: "被截断",
  // shadow evaluation
  nav_evaluations: "影子评估", eval_title: "影子评估",
  eval_intro: "切换 NLU 模型之前，用最近的真实通话回放候选配置，对比决策与速度。当前生效配置不受影响。",
  eval_action: "用近期流量评估", eval_short: "评估", eval_dialog_title: "用近期流量评估",
  eval_dialog_intro: "把最近记录的 NLU 调用按原样发给「{name}」（{model}），与当时的决策逐条对比。",
  eval_node: "节点", eval_node_hint: "留空：所有节点", eval_limit: "通话数", eval_limit_hint: "取最近的这么多条（默认 500）",
  eval_limit_invalid: "请输入正整数", eval_since_hint: "可选：只取此时间之后的通话",
  eval_start: "开始评估", eval_starting: "正在开始…", eval_started: "评估 #{id} 已开始。",
  eval_no_traffic: "没有符合条件的已记录通话可回放（输入保留天数见配置项 nlu_inputs_days）。",
  eval_running_here: "此工作进程上已有评估 #{id} 在运行：等它结束或取消后再开始。", eval_open: "查看",
  eval_past: "历史评估", eval_none: "还没有评估。在「模型配置」里从一个未生效的 NLU 配置开始。",
  eval_candidate: "候选", eval_recorded: "当时记录", eval_progress: "进度",
  eval_intent_agreement: "意图一致率", eval_slot_agreement: "槽位一致率", eval_started_at: "开始时间", eval_by: "发起人",
  eval_heading: "评估 #{id}：{name}", eval_cancel: "取消评估", eval_cancelling: "正在取消…", eval_cancelled_toast: "已取消。",
  eval_progress_line: "已回放 {done} / {total}（{pct}%）",
  eval_status_running: "运行中", eval_status_done: "已完成", eval_status_cancelled: "已取消", eval_status_failed: "失败",
  eval_agreeing: "{n} / {calls} 通完全一致", eval_skipped: "跳过 {n} 通（输入已清除或无效）",
  eval_sides: "并排对比", eval_p95: "P95", eval_fallbacks: "兜底次数", eval_fallback: "兜底",
  eval_latency_chart: "延迟分布：当时记录与候选对比", eval_latency_axis: "整次决策延迟（毫秒，含重试）",
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
  apply: "Search", reset: "Reset", export_csv: "Export CSV", export_csv_hint: "The records of the current filter (up to 10,000, newest first)", records: "Records", time: "Time", node_id: "Node",
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
  end_reason: "Ended: {reason}", tool_call: "Tool call", usage: "Usage", chat_empty: "Start a session, then type what the customer says.",
  brief: "Brief", generate: "Generate script", stop: "Stop", generating: "Generating…",
  chars_received: "{n} chars received", elapsed: "{s} s elapsed", script_result: "Generated script",
  script_done: "Done: {n} chars in {s} s.",
  // test connection: what was checked (codes from connectivity/checks.py)
  test_ok_notes: "Connection OK, {n} to look at",
  chk_reachable: "Endpoint", chk_auth: "API key", chk_model: "Model name", chk_thinking: "Thinking suppression", chk_answer: "Answer",
  chk_status_ok: "passed", chk_status_warn: "look at", chk_status_fail: "failed", chk_status_info: "note", chk_status_skipped: "not run",
  chk_see_diagnostic: "{code}: see the diagnostic below",
  chk_reachable_answered: "The base URL answered",
  chk_reachable_connect_error: "Could not connect: check the base URL, the network, and that the server is running",
  chk_reachable_timeout: "No answer within the timeout: check the server's load, or raise the timeout",
  chk_reachable_not_found: "The base URL answered 404: check the path (usually ending in /v1)",
  chk_auth_accepted: "The key was accepted", chk_auth_not_required: "No key set, and none required",
  chk_auth_rejected: "The key was refused (HTTP {status}): check or replace it",
  chk_auth_missing: "The server wants a key (HTTP {status}): enter the API key",
  chk_model_served: "Model {served} is served", chk_model_served_as: "Answered as {served} (configured: {configured})",
  chk_model_accepted: "The model name was accepted", chk_model_not_found: "The server has no model {configured}: check the model name",
  chk_thinking_suppressed: "Suppressed: no reasoning came back",
  chk_thinking_not_suppressed: "Thinking was switched off but reasoning came back: check the vendor dialect or the thinking setting",
  chk_thinking_allowed: "Thinking is allowed by the configuration", chk_thinking_vendor_default: "Thinking is left to the vendor's default",
  chk_answer_answered: "An answer came back",
  chk_answer_cut_at_test_cap: "An answer came back; the test reads only {test_max_tokens} tokens, so a cut there is expected (configured: {max_tokens})",
  chk_answer_reasoning_used_test_cap: "Reasoning filled the test's {test_max_tokens} tokens before an answer; the configured {max_tokens} leaves more room",
  chk_skipped_not_run: "Not run: an earlier check did not pass",
  // console details (issue 12 item 8)
  key_hint_new: "Keys are write-only: after saving only the masked value is shown. Leave it empty for a local server that needs none.",
  key_hint_none: "No key yet: local servers usually need none; use “Set key” when yours does.",
  key_set: "Set key", key_skip: "Don't set a key",
  since_invalid: "Use YYYY-MM-DD HH:mm, e.g. 2026-12-01 09:30",
  rev_value: "Value", key_set_on_create: "(key set)",
  nlu_result_empty: "Fill in intents, slots and the utterance, then press Decide: the decision JSON and latency appear here.",
  max_tokens: "max_tokens", temperature: "temperature", reasoning_effort: "reasoning_effort",
  p50: "P50", p90: "P90", p99: "P99", tokens: "Tokens", finish_reason: "finish_reason",
  completion_tokens: "completion_tokens", reasoning_tokens: "reasoning_tokens", prompt_tokens: "prompt_tokens",
  colon: ": ", role_admin: "admin", role_service: "service", role_operator: "operator", role_viewer: "viewer",
  tier_short_nlu: "NLU", tier_short_chat: "Chat", tier_short_script: "Script",
  code_ok: "OK", code_truncated_by_reasoning: "Reasoning used the budget", code_truncated: "Truncated",
  code_empty_output: "Empty output", code_invalid_json: "Invalid JSON", code_schema_mismatch: "Schema mismatch",
  code_timeout: "Timeout", code_deadline_exceeded: "Deadline exceeded", code_upstream_error: "Upstream error",
  code_connect_error: "Connection failed", code_response_too_large: "Answer too large", code_cancelled: "Cancelled",
  http_status: "HTTP status", reasoning_short: "reasoning {n}", n_records: "{n} records",
  output_mode: "Output", output_audio: "Audio (sentences)", output_text: "Text (deltas)",
  end_completed: "completed", end_cancelled: "cancelled", end_superseded: "superseded", end_timeout: "timed out",
  end_error: "error", end_closed: "connection closed", end_aborted: "aborted", end_truncated: "truncated",
  usage_line: "Usage: prompt {prompt} · completion {completion} · reasoning {reasoning}", tool_call_named: "Tool call: {name}",
  sample_intent_agree: "The customer agrees and gives a time", sample_intent_refuse: "The customer refuses",
  sample_slot_time: "When the customer is available", sample_utterance: "Tomorrow after 3 pm works for me",
  sample_system_prompt: "You are a polite call-center agent on a follow-up call; answer briefly and conversationally.",
  sample_brief: "A follow-up call script for a broadband provider: confirm the customer is happy with the installation and ask whether they need an extra router.",
  nav_admin: "Administration", nav_people: "People & roles", nav_audit: "Audit trail",
  role: "Role",
  role_viewer_hint: "Reads configurations (keys masked), diagnostics and drafts; changes nothing, calls no model",
  role_operator_hint: "Also edits and activates model configurations, tests connections, uses the playground, edits drafts",
  role_admin_hint: "Also manages people and reads the audit trail",
  not_allowed: "Not allowed", not_allowed_body: "Your role ({role}) cannot open this page; it needs {need}.",
  people_title: "People & roles", people_intro: "Who may do what: viewers read, operators change models, admins manage people. Disabling, deleting, demoting or resetting a password ends that user's sessions at once.",
  new_user: "New user", user_created: "Created user “{name}”.", user_status: "Status", enabled: "Enabled", disabled: "Disabled",
  created_at: "Created", last_login: "Last login", never: "never", change_role: "Change role", role_changed: "“{name}” is now {role}.",
  disable: "Disable", enable: "Enable", confirm_disable: "Disable “{name}”? Their sessions end at once.", user_disabled: "Disabled “{name}”.",
  user_enabled: "Enabled “{name}”.", reset_password: "Reset password", confirm_reset: "Generate a new password for “{name}”? Their sessions end at once.",
  confirm_delete_user: "Delete user “{name}”? Their sessions end at once. This cannot be undone.", user_deleted: "Deleted “{name}”.",
  password_once_title: "New password for “{name}”", password_once_body: "This password is shown only this once: hand it over now. It cannot be shown again after you close this.",
  copy: "Copy", copied: "Copied", generate_password: "Generate", password_hint: "At least 12 characters.",
  username_hint: "3–64 characters: lowercase letters, digits, . _ -", source_env: "environment", source_generated: "first start", source_console: "console",
  bootstrap_user: "managed by the environment", you_marker: "(you)", last_admin: "This is the last enabled admin: it cannot be demoted, disabled or deleted.",
  user_exists: "That username is taken.", managed_by_environment: "This account is managed by CALLOUT_ADMIN_USER / CALLOUT_ADMIN_PASSWORD.",
  change_password: "Change password", current_password: "Current password", new_password: "New password", confirm_password: "Confirm new password",
  passwords_differ: "The two new passwords differ.", wrong_password: "The current password is wrong.",
  password_changed: "Password changed; your other sessions were signed out.",
  audit_title: "Audit trail", audit_intro: "Who changed what, when and from where: configurations, people, script drafts, and every login, failed login and logout. Newest first.",
  actor: "Actor", action: "Action", target: "Target", via: "Via", ip: "Address", via_session: "session", via_token: "token",
  action_all: "All actions", action_family_config: "Model configs", action_family_user: "People", action_family_auth: "Logins & passwords",
  action_family_draft: "Script drafts", no_events: "No matching events.", older_events: "Load older events",
  end_of_events: "That is the oldest event.", event_detail: "Event #{id}", until: "Until",
  // upstream pools
  pool: "Replicas, fallbacks and hedging", pool_hint: "Replicas serve the same model with the same key and dialect as the base URL; fallback configurations take over, in order, when no replica can.",
  endpoints: "More replicas (endpoints)", endpoint: "Endpoint", weight: "Weight", remove: "Remove",
  endpoints_none: "The base URL is the only endpoint.", add_endpoint: "Add replica",
  fallback_ids: "Fallback configurations (in order)", fallback_choose: "Choose a configuration of this tier…", add_fallback: "Add fallback", move_up: "Move up",
  fallbacks_none: "No fallback configuration ({tier}).",
  hedge_after_ms: "Hedge after (ms)", hedge_hint: "A non-streamed call with no answer after this long is sent again to another replica (or the first fallback); the first answer wins. Empty = no hedging.",
  off: "no hedging", max_in_flight: "Max in flight per endpoint", max_in_flight_hint: "Requests at once per endpoint, per worker. Empty = unbounded.",
  unbounded: "unbounded", weight_positive: "Weights must be above 0",
  upstreams_title: "Upstream endpoint health", upstreams_intro: "This worker's view of each endpoint: one cooling down takes no traffic; when its cool-down ends one real call probes it first.",
  upstreams_none: "No endpoints yet.", configuration: "Configuration", state: "State", in_flight: "In flight",
  error_rate: "Recent failures", last_error: "Last error", role_fallback: "fallback",
  state_healthy: "healthy", state_cooling_down: "cooling down", state_probing: "probing", cooldown_until: "until {time}",
  pool_replicas: "{n} replicas", pool_fallbacks: "fallback {names}", pool_hedge: "hedge {ms} ms", pool_cap: "≤ {n} in flight",
  // the audit trail's actions and details, the people page's refusals (roles i18n)
  act_config_create: "Model config created", act_config_update: "Model config changed", act_config_activate: "Model config activated",
  act_config_delete: "Model config deleted", act_user_create: "User created", act_user_update: "User changed", act_user_delete: "User deleted",
  act_auth_login: "Logged in", act_auth_login_failed: "Login failed", act_auth_logout: "Logged out",
  act_auth_password_change: "Own password changed", act_auth_password_change_failed: "Password change failed",
  act_draft_create: "Script draft created", act_draft_update: "Script draft changed", act_draft_delete: "Script draft deleted",
  act_evaluation_start: "Shadow evaluation started", act_evaluation_cancel: "Shadow evaluation cancelled", action_family_evaluation: "Shadow evaluations",
  detail_candidate_id: "Candidate configuration", detail_calls: "Calls",
  action_family_all: "{family} (all)", actor_unknown: "(unknown user)", list_sep: ", ", detail_sep: "; ",
  detail_role: "Role", detail_disabled: "Disabled", detail_password: "Password", detail_sessions_ended: "Sessions ended",
  detail_other_sessions_ended: "Other sessions ended", detail_reason: "Reason", detail_title: "Title", detail_status: "Status",
  detail_fields: "Fields changed", detail_deactivated: "Deactivated", detail_script: "Script", detail_brief: "Brief",
  reason_unknown_user: "no such user", reason_disabled: "account disabled", reason_wrong_password: "wrong password",
  reason_wrong_current_password: "wrong current password",
  marker_set: "set", marker_replaced: "replaced", marker_cleared: "cleared", marker_reset: "reset",
  marker_changed: "changed", marker_unchanged: "unchanged",
  draft_status_complete: "complete", draft_status_truncated: "truncated",
  nav_evaluations: "Shadow evaluation", eval_title: "Shadow evaluation",
  eval_intro: "Before switching the NLU model, replay recent real calls against a candidate and compare decisions and speed. The active configuration is not touched.",
  eval_action: "Evaluate against recent traffic", eval_short: "Evaluate", eval_dialog_title: "Evaluate against recent traffic",
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

/** Whether the dictionaries have `key` (labels fall back to the raw name otherwise). */
export function has(key) { return Object.prototype.hasOwnProperty.call(zh, key); }

/** A label for a wire name (a field, a code, a role) under `prefix`, else the name itself. */
export function labelOf(prefix, name) { return has(`${prefix}${name}`) ? t(`${prefix}${name}`) : String(name ?? "—"); }

/** The Accept-Language the server is asked to answer in (error messages, diagnostics). */
export function acceptLanguage() { return lang === "zh" ? "zh-CN,zh;q=0.9" : "en"; }

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
