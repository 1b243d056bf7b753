"""Service keys, limits, usage and cost: the catalogue's section for them (zh, en)."""

from __future__ import annotations

KEY_MESSAGES: dict[str, tuple[str, str]] = {
    "service_key_not_found": ("没有编号为 {key_id} 的服务密钥", "no service key {key_id}"),
    "service_key_version_conflict": (
        "服务密钥 {key_id} 已被他人修改（你的版本 {sent}，当前 {current}）；请刷新后重试",
        "service key {key_id} was changed by someone else (you sent version {sent}, "
        "current is {current}); reload and try again"),
    "service_key_expired": ("服务密钥已过期", "this service key has expired"),
    "service_key_disabled": ("服务密钥已停用", "this service key is disabled"),
    "service_key_tier": ("此服务密钥不能调用 {tier} 层（它的范围：{tiers}）",
                         "this service key may not call the {tier} tier (its tiers: {tiers})"),
    "unknown_tier": ("未知的层 {tier}；可用：{known}", "unknown tier {tier}; one of {known}"),
    "tiers_empty": ("至少需要一个层", "at least one tier is needed"),
    "expiry_past": ("过期时间必须在将来", "the expiry must be in the future"),
    "campaign_invalid": ("应为 1 到 64 个字符：字母、数字、'.'、'_'、':' 或 '-'",
                         "1 to 64 characters: letters, digits, '.', '_', ':' or '-'"),
    "rate_limited": ("此服务密钥每分钟最多 {limit} 次请求；请 {retry_after_s} 秒后重试",
                     "this service key allows {limit} requests a minute; retry in "
                     "{retry_after_s} s"),
    "too_many_in_flight": ("此服务密钥最多同时 {limit} 个请求；请 {retry_after_s} 秒后重试",
                           "this service key allows {limit} requests at once; retry in "
                           "{retry_after_s} s"),
    "budget_exhausted": ("此服务密钥今天（协调世界时）的 {limit} 个 token 已用完；请 {retry_after_s} 秒后重试",
                         "this service key has used its {limit} tokens for today (UTC); retry "
                         "in {retry_after_s} s"),
    "price_not_finite": ("价格必须是有限的非负数", "a price must be a finite number, not negative"),
    "currency_invalid": ("货币应为 3 个大写字母的代码",
                         "a currency is 3 capital letters (CNY, USD...)"),
    "until_before_since": ("结束时间早于开始时间", "until is before since"),
    "usage_window_too_long": ("最多 {days} 天", "at most {days} days"),
}
