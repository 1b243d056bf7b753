"""Request validation messages in the caller's language, rendered from pydantic's error type.

pydantic reports each problem as a `type` (`string_too_long`, `missing`, ...) with its
numbers in `ctx` (`max_length`, ...). English is pydantic's own rendering of the two; Chinese
is rendered here from the same type and ctx, never by rewriting the English text. Our own
validators raise `invalid(code, ...)`: a pydantic error whose type is a catalogue key, so
it renders from the catalogue in both languages.

`ZH` has a template for every error type pydantic-core defines (a test holds that, so an
upgrade that adds a type fails loudly); ctx values that are English prose (a parser's
`error`) are left out of the Chinese text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticCustomError

from callout_server.i18n.catalogue import MESSAGES, text
from callout_server.i18n.locale import Locale

ZH: dict[str, str] = {
    "no_such_attribute": "没有属性 '{attribute}'",
    "json_invalid": "JSON 无效",
    "json_type": "JSON 输入应为字符串或字节串",
    "needs_python_object": "从 JSON 校验时无法检查 `{method_name}`",
    "recursion_loop": "检测到循环引用",
    "recursion_depth_exceeded": "超过最大校验深度",
    "missing": "必填",
    "frozen_field": "此字段不可修改",
    "frozen_instance": "此对象不可修改",
    "extra_forbidden": "不允许的字段",
    "invalid_key": "键必须是字符串",
    "get_attribute_error": "读取属性出错",
    "model_type": "应为 JSON 对象",
    "model_attributes_type": "应为 JSON 对象",
    "dataclass_type": "应为 JSON 对象",
    "dataclass_exact_type": "应为 {class_name} 实例",
    "named_tuple_type": "应为数组或对象",
    "default_factory_not_called": "因其他字段校验失败，未计算默认值",
    "none_required": "应为 null",
    "greater_than": "应大于 {gt}",
    "greater_than_equal": "应大于或等于 {ge}",
    "less_than": "应小于 {lt}",
    "less_than_equal": "应小于或等于 {le}",
    "multiple_of": "应为 {multiple_of} 的倍数",
    "finite_number": "应为有限数值",
    "too_short": "至少需要 {min_length} 项，实际 {actual_length} 项",
    "too_long": "最多 {max_length} 项，实际 {actual_length} 项",
    "iterable_type": "应为可迭代的值",
    "iteration_error": "迭代出错",
    "string_type": "应为字符串",
    "string_unicode": "应为有效的 Unicode 字符串",
    "string_too_short": "至少 {min_length} 个字符",
    "string_too_long": "最多 {max_length} 个字符",
    "string_pattern_mismatch": "应符合格式 {pattern}",
    "string_not_ascii": "只能包含 ASCII 字符",
    "enum": "应为以下之一：{expected}",
    "dict_type": "应为 JSON 对象",
    "frozen_dict_type": "应为 JSON 对象",
    "ordered_dict_type": "应为 JSON 对象",
    "counter_type": "应为 JSON 对象",
    "mapping_type": "应为 JSON 对象",
    "list_type": "应为数组",
    "deque_type": "应为数组",
    "tuple_type": "应为数组",
    "set_type": "应为数组",
    "set_item_not_hashable": "集合中的元素必须可哈希",
    "bool_type": "应为布尔值",
    "bool_parsing": "应为布尔值，无法解析输入",
    "int_type": "应为整数",
    "int_parsing": "应为整数，无法解析字符串",
    "int_parsing_size": "无法解析为整数：位数过多",
    "int_from_float": "应为整数，不能有小数部分",
    "float_type": "应为数字",
    "float_parsing": "应为数字，无法解析字符串",
    "bytes_type": "应为字节串",
    "bytes_too_short": "至少 {min_length} 个字节",
    "bytes_too_long": "最多 {max_length} 个字节",
    "bytes_invalid_encoding": "应为有效的 {encoding} 编码",
    "value_error": "取值无效",
    "assertion_error": "断言失败",
    "literal_error": "应为以下之一：{expected}",
    "missing_sentinel_error": "应为 MISSING 标记",
    "ellipsis_error": "应为 Ellipsis 字面量",
    "date_type": "应为日期",
    "date_parsing": "应为 YYYY-MM-DD 格式的日期",
    "date_from_datetime_parsing": "应为日期或日期时间",
    "date_from_datetime_inexact": "传给日期的日期时间必须是零点整",
    "date_past": "应为过去的日期",
    "date_future": "应为将来的日期",
    "time_type": "应为时间",
    "time_parsing": "应为有效的时间格式",
    "datetime_type": "应为日期时间",
    "datetime_parsing": "应为有效的日期时间（ISO 8601）",
    "datetime_object_invalid": "日期时间对象无效",
    "datetime_from_date_parsing": "应为日期时间或日期（ISO 8601）",
    "datetime_past": "应为过去的时间",
    "datetime_future": "应为将来的时间",
    "timezone_naive": "不应带时区",
    "timezone_aware": "应带时区",
    "timezone_offset": "时区偏移应为 {tz_expected}，实际为 {tz_actual}",
    "time_delta_type": "应为时长",
    "time_delta_parsing": "应为有效的时长",
    "frozen_set_type": "应为数组",
    "is_instance_of": "类型不对",
    "is_subclass_of": "类型不对",
    "callable_type": "应为可调用对象",
    "union_tag_invalid": "标签 '{tag}'（由 {discriminator} 取得）不是可选值之一：{expected_tags}",
    "union_tag_not_found": "无法用 {discriminator} 取得标签",
    "arguments_type": "参数应为数组或对象",
    "missing_argument": "缺少必需的参数",
    "unexpected_keyword_argument": "多余的关键字参数",
    "missing_keyword_only_argument": "缺少必需的仅关键字参数",
    "unexpected_positional_argument": "多余的位置参数",
    "missing_positional_only_argument": "缺少必需的仅位置参数",
    "multiple_argument_values": "同一参数给了多个值",
    "url_type": "地址应为字符串",
    "url_parsing": "应为有效的 URL",
    "url_syntax_violation": "URL 不符合严格语法",
    "url_too_long": "URL 最多 {max_length} 个字符",
    "url_scheme": "URL 协议应为 {expected_schemes}",
    "uuid_type": "应为 UUID 字符串",
    "uuid_parsing": "应为有效的 UUID",
    "uuid_version": "应为第 {expected_version} 版 UUID",
    "decimal_type": "应为整数、小数或数字字符串",
    "decimal_parsing": "应为有效的小数",
    "decimal_max_digits": "总位数最多 {max_digits} 位",
    "decimal_max_places": "小数位最多 {decimal_places} 位",
    "decimal_whole_digits": "整数部分最多 {whole_digits} 位",
    "fraction_type": "应为整数、小数、字符串或分数",
    "fraction_parsing": "不是有效的分数",
    "complex_type": "应为复数",
    "complex_str_parsing": "应为有效的复数字符串",
}

# Python's json module's reasons (`JSONDecodeError.msg`, FastAPI's `json_invalid` ctx).
JSON_REASONS: dict[str, tuple[str, str]] = {
    "Expecting value": ("此处应有一个值", "expecting a value"),
    "Expecting ',' delimiter": ("此处应有逗号 ','", "expecting ',' delimiter"),
    "Expecting ':' delimiter": ("此处应有冒号 ':'", "expecting ':' delimiter"),
    "Expecting property name enclosed in double quotes": (
        "此处应有用双引号括起的属性名", "expecting a property name in double quotes"),
    "Unterminated string starting at": ("字符串没有结束", "unterminated string"),
    "Invalid control character at": ("字符串中有控制字符", "invalid control character"),
    "Invalid \\escape": ("转义序列无效", "invalid escape"),
    "Invalid \\uXXXX escape": ("\\uXXXX 转义无效", "invalid \\uXXXX escape"),
    "Extra data": ("JSON 值之后还有多余内容", "extra data after the JSON value"),
    "Illegal trailing comma before end of object": ("对象结尾多了逗号", "trailing comma in an object"),
    "Illegal trailing comma before end of array": ("数组结尾多了逗号", "trailing comma in an array"),
}


def invalid(code: str, /, **ctx: Any) -> PydanticCustomError:
    """The error a validator raises: its type is the catalogue key `code`.

    A `PydanticCustomError` is a `ValueError`, so plain callers of the same checks catch it
    as before; inside a model it renders in both languages from the catalogue.
    """
    if code not in MESSAGES:
        raise KeyError(f"no message {code!r} in the catalogue")
    # The English template, so pydantic's own `msg` (and str(exc)) reads right too.
    return PydanticCustomError(code, MESSAGES[code][1], ctx)


def json_reason(reason: str, locale: Locale) -> str:
    """A JSON decoder's reason in `locale` (an unknown one: a neutral phrase)."""
    known = JSON_REASONS.get(reason)
    if known is None:
        return "语法错误" if locale == "zh" else (reason or "syntax error")
    return known[0] if locale == "zh" else known[1]


def field_message(error: Mapping[str, Any], locale: Locale) -> str:
    """One pydantic error (`exc.errors()` item) as text in `locale`."""
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    if kind in MESSAGES:
        return text(kind, locale, **ctx)
    if locale == "en":
        # pydantic prefixes our validators' words with "Value error, ": noise to a reader.
        return str(error.get("msg", "")).removeprefix("Value error, ")
    template = ZH.get(kind, ZH["value_error"])
    return template.format_map(_ZhContext(ctx))


class _ZhContext(dict[str, Any]):
    """ctx values as the Chinese text shows them: lists joined with 、, unknown ones as ?."""

    def __init__(self, ctx: Mapping[str, Any]) -> None:
        super().__init__(ctx)

    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        if key in ("expected", "expected_tags", "expected_schemes") and isinstance(value, str):
            return "、".join(p for p in _ALTERNATIVES.split(value) if p)
        return value

    def __missing__(self, key: str) -> str:
        return "?"


# pydantic lists alternatives as "'a', 'b' or 'c'".
_ALTERNATIVES = re.compile(r", | or ")
