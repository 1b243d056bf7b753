"""The catalogue's section for canary rollout (callout_server/canary/): key -> (zh, en)."""

from __future__ import annotations

CANARY_MESSAGES: dict[str, tuple[str, str]] = {
    "canary_not_found": ("灰度发布 {canary_id} 不存在", "canary {canary_id} not found"),
    "canary_running": ("{tier} 层已有灰度发布 {canary_id} 在运行；每层一次只能运行一个（先停止或推广它）",
                       "canary {canary_id} is already running on the {tier} tier; one runs at "
                       "a time per tier (stop or promote it first)"),
    "canary_ended": ("灰度发布 {canary_id} 已结束（{status}），不能再停止或推广",
                     "canary {canary_id} has ended ({status}); it can no longer be stopped or "
                     "promoted"),
    "canary_in_use_delete": ("模型配置 {config_id} 正在灰度发布 {canary_id} 中；先停止或推广它再删除",
                             "model configuration {config_id} is in canary {canary_id}; stop "
                             "or promote the canary before you delete it"),
    "canary_in_use_move": ("模型配置 {config_id} 正在灰度发布 {canary_id} 中；先停止或推广它再换层级",
                           "model configuration {config_id} is in canary {canary_id}; stop or "
                           "promote the canary before you move it to another tier"),
    "canary_in_use_activate": ("灰度发布 {canary_id} 正在运行；先停止它或用推广来切换生效配置（配置 {config_id}）",
                               "canary {canary_id} is running; stop it, or promote it, to change "
                               "which configuration serves (configuration {config_id})"),
    "canary_in_use_deactivate": ("灰度发布 {canary_id} 正在运行；先停止或推广它再停用配置 {config_id}",
                                 "canary {canary_id} is running; stop or promote it before you "
                                 "deactivate configuration {config_id}"),
    "canary_candidate_unknown": ("模型配置 {config_id} 不存在", "no model configuration {config_id}"),
    "canary_candidate_active": ("模型配置 {config_id} 已是 {tier} 层的生效配置；灰度发布的候选须是另一个配置",
                                "model configuration {config_id} already serves the {tier} "
                                "tier; a canary's candidate is another configuration"),
    "canary_tier_unsupported": ("{tier} 层不支持灰度发布：话术生成请求不属于某通电话，无法按 call_id 分流"
                                "（支持意图识别层和对话层）",
                                "no canary on the {tier} tier: a script request belongs to no "
                                "phone call to split by call_id (nlu and chat only)"),
    "canary_candidate_unusable": ("模型配置 {config_id} 的 API 密钥无法解密，不能用作候选",
                                  "the API key of model configuration {config_id} cannot be "
                                  "decrypted; it cannot be a candidate"),
    "canary_reason_fallback_rate": ("回退率 {value} 超过上限 {limit}（灰度侧 {calls} 次调用后）",
                                    "fallback rate {value} above the limit {limit} (after "
                                    "{calls} calls on the canary side)"),
    "canary_reason_error_rate": ("错误率 {value} 超过上限 {limit}（灰度侧 {calls} 次调用后）",
                                 "error rate {value} above the limit {limit} (after {calls} "
                                 "calls on the canary side)"),
    "canary_reason_p95_ms": ("p95 延迟 {value} 毫秒超过上限 {limit} 毫秒（灰度侧 {calls} 次调用后）",
                             "p95 latency {value} ms above the limit {limit} ms (after {calls} "
                             "calls on the canary side)"),
}
