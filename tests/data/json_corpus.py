"""Messy model outputs for JSON extraction, with what a correct extractor must do.

Assembled from the failure shapes users report against json_repair, instructor, LangChain's
parse_json_markdown and partial-json-parser, plus our own dialer NLU traffic shapes (Chinese
and English). Each case expects either the exact dict or a failure reason from
`callout_server.llm.json_extract.REASONS`. Policy: /work/shared/spec/json-extraction.md.

Used by tests/test_json_extract.py and bench/bench_json_extract.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    text: str
    expect: dict[str, Any] | None  # the exact object, or None when a failure is expected
    reason: str | None  # the expected failure reason when `expect` is None
    note: str  # the shape this case stands for
    typical: bool = False  # a common, healthy answer: used for the hot-path timing


def ok(id: str, text: str, expect: dict[str, Any], note: str, typical: bool = False) -> Case:
    return Case(id, text, expect, None, note, typical)


def fail(id: str, text: str, reason: str, note: str) -> Case:
    return Case(id, text, None, reason, note)


AGREE = {"intent": "agree", "slots": {"time": "明天下午三点以后"}}
AGREE_TEXT = '{"intent":"agree","slots":{"time":"明天下午三点以后"}}'

CASES: tuple[Case, ...] = (
    # -- clean and wrapped ------------------------------------------------------------------
    ok("clean_zh_slots", AGREE_TEXT, AGREE, "clean object, Chinese slot value", typical=True),
    ok(
        "clean_pretty",
        '{\n  "intent": "refuse",\n  "confidence": 0.92,\n  "reason": "用户表示没有时间"\n}',
        {"intent": "refuse", "confidence": 0.92, "reason": "用户表示没有时间"},
        "pretty-printed",
        typical=True,
    ),
    ok(
        "fence_json",
        "```json\n" + AGREE_TEXT + "\n```",
        AGREE,
        "```json fence",
        typical=True,
    ),
    ok(
        "fence_bare",
        '```\n{"intent": "callback"}\n```',
        {"intent": "callback"},
        "bare fence",
        typical=True,
    ),
    ok(
        "prose_around_en",
        'Sure! Here is the classification:\n{"intent": "agree", "confidence": 0.9}\n'
        "Let me know if you need anything else.",
        {"intent": "agree", "confidence": 0.9},
        "prose before and after",
        typical=True,
    ),
    ok(
        "prose_around_zh",
        '好的，根据用户的回答，分类结果如下：\n```json\n{"intent": "busy", "slots": {}}\n```\n'
        "用户当前不方便。",
        {"intent": "busy", "slots": {}},
        "Chinese prose and fence",
        typical=True,
    ),
    ok(
        "prose_colon_zh",
        '答案：{"intent":"wrong_number"}',
        {"intent": "wrong_number"},
        "full-width colon in prose right before the object",
    ),
    ok(
        "nlu_full_zh",
        '{"intent": "reschedule", "confidence": 0.87, "slots": {"date": "下周三", '
        '"time": "下午两点到四点之间", "contact": "打我老婆的电话"}, '
        '"reason": "用户表示今天在外地出差，希望改到下周三下午再联系，并说明换一个号码"}',
        {
            "intent": "reschedule",
            "confidence": 0.87,
            "slots": {"date": "下周三", "time": "下午两点到四点之间", "contact": "打我老婆的电话"},
            "reason": "用户表示今天在外地出差，希望改到下周三下午再联系，并说明换一个号码",
        },
        "a full NLU answer, Chinese, ~150 chars",
        typical=True,
    ),
    ok(
        "nlu_fenced_en",
        '```json\n{\n  "intent": "not_interested",\n  "confidence": 0.95,\n'
        '  "slots": {"competitor": "already has a plan with another provider"},\n'
        '  "reason": "The customer said they are not interested and asked not to be called '
        'again.",\n  "dnc": true\n}\n```',
        {
            "intent": "not_interested",
            "confidence": 0.95,
            "slots": {"competitor": "already has a plan with another provider"},
            "reason": "The customer said they are not interested and asked not to be called again.",
            "dnc": True,
        },
        "a full NLU answer, English, fenced and pretty-printed, ~250 chars",
        typical=True,
    ),
    ok(
        "nlu_prose_zh",
        "根据对话内容，客户明确表示同意参加活动，但希望在周末进行。输出如下：\n"
        '{"intent":"agree","confidence":0.9,"slots":{"time":"周六上午十点","place":"门店"},'
        '"next":"confirm_appointment"}\n以上为分类结果。',
        {
            "intent": "agree",
            "confidence": 0.9,
            "slots": {"time": "周六上午十点", "place": "门店"},
            "next": "confirm_appointment",
        },
        "Chinese prose around a compact answer, ~150 chars",
        typical=True,
    ),
    ok("empty_object", "{}", {}, "`{}` is a valid result"),
    ok(
        "inline_code",
        'The answer is `{"intent": "agree"}`.',
        {"intent": "agree"},
        "inline backticks",
    ),
    ok(
        "nested",
        '{"intent":"reschedule","slots":{"date":{"day":"周五","part":"上午"},"people":[1,2]}}',
        {
            "intent": "reschedule",
            "slots": {"date": {"day": "周五", "part": "上午"}, "people": [1, 2]},
        },
        "nested objects and arrays",
        typical=True,
    ),
    ok(
        "name_arguments_kept",
        '{"name": "classify", "arguments": {"intent": "agree"}}',
        {"name": "classify", "arguments": {"intent": "agree"}},
        "tool-call shape is not unwrapped",
    ),
    ok(
        "unicode_escapes",
        '{"reply": "\\u597d\\u7684 \\ud83d\\ude00"}',
        {"reply": "好的 😀"},
        "\\u escapes including a surrogate pair",
    ),
    # -- reasoning --------------------------------------------------------------------------
    ok(
        "think_closed",
        '<think>\n用户说明天下午可以，意图应为 agree。草稿：{"intent":"refuse"}\n</think>\n\n'
        + AGREE_TEXT,
        AGREE,
        "closed <think> with a draft object inside",
    ),
    ok(
        "think_only_closing",
        'The user wants a callback, so {"intent":"callback"} fits.\n</think>\n{"intent":"agree"}',
        {"intent": "agree"},
        "only a closing tag (template opened it)",
    ),
    ok(
        "think_upper",
        '<THINK>thinking {"intent":"x"}</THINK>{"intent":"agree"}',
        {"intent": "agree"},
        "tags in upper case",
    ),
    ok(
        "think_kimi",
        '◁think▷用户同意了◁/think▷{"intent":"agree"}',
        {"intent": "agree"},
        "Kimi ◁think▷ markers",
    ),
    ok(
        "think_twice",
        '<think>a</think>{"intent":"x"}<think>b</think>{"intent":"agree"}',
        {"intent": "agree"},
        "answer is after the last closing tag",
    ),
    fail(
        "think_unclosed_with_draft",
        '<think>\n用户同意了，输出 {"intent":"agree","slots":{}}\n再检查一下槽位',
        "in_reasoning",
        "unclosed <think> with a complete-looking draft",
    ),
    fail(
        "think_reopened",
        '<think>a</think>{"intent":"agree"}<think>wait',
        "in_reasoning",
        "a new <think> opened after the last closing tag",
    ),
    fail("think_closed_no_answer", "<think>用户同意</think>\n\n", "empty", "no answer after it"),
    # -- lossless repairs -------------------------------------------------------------------
    ok(
        "comments",
        '{\n  // classification\n  "intent": "agree", /* sure */\n  "score": 1 # high\n}',
        {"intent": "agree", "score": 1},
        "//, /* */ and # comments",
    ),
    ok(
        "trailing_commas",
        '{"intent": "agree", "tags": ["a", "b",],}',
        {"intent": "agree", "tags": ["a", "b"]},
        "trailing commas",
    ),
    ok(
        "python_dict",
        "{'intent': 'agree', 'confirmed': True, 'note': None, 'ok': False}",
        {"intent": "agree", "confirmed": True, "note": None, "ok": False},
        "Python repr of a dict",
    ),
    ok(
        "python_quote_inside",
        "{'reply': 'he said \"fine\"', 'x': 'it\\'s'}",
        {"reply": 'he said "fine"', "x": "it's"},
        "Python quotes with a double quote and an escaped apostrophe inside",
    ),
    ok(
        "bom_zwsp_nbsp",
        '\ufeff{\u200b"intent"\xa0:\u3000"agree"\u200b}',
        {"intent": "agree"},
        "BOM, ZWSP, NBSP and U+3000 between tokens",
    ),
    ok(
        "fullwidth_structure",
        '{"intent"："agree"，"slots"：{"time"："明天，下午三点"}}',
        {"intent": "agree", "slots": {"time": "明天，下午三点"}},
        "full-width ：and ，as structure; the one inside the string stays",
    ),
    ok(
        "curly_delimiters",
        "{“intent”: “agree”, “slots”: {“time”: “晚上八点”}}",
        {"intent": "agree", "slots": {"time": "晚上八点"}},
        "curly quotes as delimiters, no ASCII quotes",
    ),
    ok(
        "curly_inside_string",
        '{"reply": "他说“好的”，‘没问题’"}',
        {"reply": "他说“好的”，‘没问题’"},
        "curly quotes inside an ASCII string are content",
    ),
    ok(
        "unquoted_keys",
        '{intent: "agree", slots: {time: "3pm"}}',
        {"intent": "agree", "slots": {"time": "3pm"}},
        "unquoted identifier keys",
    ),
    ok(
        "missing_comma",
        '{\n  "intent": "agree"\n  "confidence": 0.8\n}',
        {"intent": "agree", "confidence": 0.8},
        "missing comma before a quoted key",
    ),
    ok(
        "bold_outside",
        '**{"intent": "agree"}**',
        {"intent": "agree"},
        "** bold around the object",
    ),
    ok(
        "bold_inside_tokens",
        '{**"intent"**: **"agree"**, "note": "**重要**"}',
        {"intent": "agree", "note": "**重要**"},
        "** between tokens stripped, ** inside a string kept",
    ),
    ok(
        "literal_backslash_n",
        '{\\n  "intent": "agree",\\n  "slots": {}\\n}',
        {"intent": "agree", "slots": {}},
        "literal \\n between tokens",
    ),
    ok(
        "string_escaped_bare",
        '{\\"intent\\": \\"agree\\", \\"slots\\": {\\"time\\": \\"明天\\"}}',
        {"intent": "agree", "slots": {"time": "明天"}},
        "document string-escaped once, no outer quotes",
    ),
    ok(
        "string_escaped_quoted",
        '"{\\"intent\\": \\"agree\\", \\"reply\\": \\"line1\\\\nline2\\"}"',
        {"intent": "agree", "reply": "line1\nline2"},
        "document as a JSON string literal",
    ),
    ok(
        "string_escaped_newlines",
        '```json\n{\\n  \\"intent\\": \\"callback\\"\\n}\n```',
        {"intent": "callback"},
        "escaped document with literal \\n, in a fence",
    ),
    ok(
        "raw_newline_in_string",
        '{"reply": "第一行\n第二行\t缩进"}',
        {"reply": "第一行\n第二行\t缩进"},
        "raw newline and tab inside a string",
    ),
    ok(
        "stray_closing_brace",
        '{"intent": "agree", "slots": {"time": "3pm"}}}',
        {"intent": "agree", "slots": {"time": "3pm"}},
        "one extra } at the end",
    ),
    ok(
        "stray_brace_then_fence",
        '```json\n{"intent": "agree"}}\n```',
        {"intent": "agree"},
        "one extra } then the closing fence",
    ),
    ok(
        "combined_repairs",
        "```json\n{\n  intent: 'agree',  // 用户同意\n  'slots': {'time': '明天下午'},\n}\n```",
        {"intent": "agree", "slots": {"time": "明天下午"}},
        "several repairs at once",
    ),
    # -- string contents never change -------------------------------------------------------
    ok(
        "braces_in_string",
        '{"reply": "格式为 {name}，示例 [1,2]", "intent": "ask"}',
        {"reply": "格式为 {name}，示例 [1,2]", "intent": "ask"},
        "braces and brackets inside a string",
    ),
    ok(
        "fence_inside_value",
        '```json\n{"reply": "use ```json\\n{}\\n``` blocks"}\n```',
        {"reply": "use ```json\n{}\n``` blocks"},
        "``` inside a value",
    ),
    ok(
        "zero_width_in_string",
        '{"name": "张\u200b三\u3000", "x": "a：b，c"}',
        {"name": "张\u200b三\u3000", "x": "a：b，c"},
        "zero-width, ideographic space and full-width punctuation inside strings kept",
    ),
    ok(
        "braces_in_quoted_prose",
        'The template says "reply with {intent}" so: {"intent": "agree"}',
        {"intent": "agree"},
        "braces inside quoted prose do not count",
    ),
    ok(
        "prose_placeholder_braces",
        '请把 {name} 替换成客户姓名。结果：{"intent": "ask_name"}',
        {"intent": "ask_name"},
        "prose braces that are not JSON",
    ),
    ok(
        "duplicate_identical_objects",
        '{"intent": "agree"}\n\n```json\n{"intent": "agree"}\n```',
        {"intent": "agree"},
        "the same object twice",
    ),
    ok(
        "duplicate_key_same_value",
        '{"intent": "agree", "intent": "agree"}',
        {"intent": "agree"},
        "duplicate key with the same value",
    ),
    ok(
        "big_numbers_and_negatives",
        '{"n": -12, "x": 1.5e3, "z": 0, "f": -0.25}',
        {"n": -12, "x": 1500.0, "z": 0, "f": -0.25},
        "number forms",
    ),
    ok(
        "prose_after_with_colon",
        '{"intent": "agree"}\n\nExplanation: the user said yes.',
        {"intent": "agree"},
        "prose after the object that has a colon",
    ),
    # -- truncation -------------------------------------------------------------------------
    fail("trunc_open_only", "```json\n{", "truncated", "only the opening brace"),
    fail("trunc_in_key", '{"inte', "truncated", "inside a key"),
    fail("trunc_after_key", '{"intent"', "truncated", "after a key"),
    fail("trunc_after_colon", '{"intent":', "truncated", "after the colon"),
    fail("trunc_in_value", '{"intent": "agr', "truncated", "inside a string value"),
    fail("trunc_after_value", '{"intent": "agree"', "truncated", "after a value"),
    fail("trunc_after_comma", '{"intent": "agree",', "truncated", "after a comma"),
    fail("trunc_number", '{"intent": "agree", "confidence": 0.9', "truncated", "0.9 at end"),
    fail("trunc_number_dot", '{"confidence": 0.', "truncated", "number cut at the dot"),
    fail("trunc_literal", '{"confirmed": tr', "truncated", "literal cut"),
    fail("trunc_in_array", '{"tags": ["a", "b"', "truncated", "inside an array"),
    fail("trunc_escape", '{"reply": "a\\', "truncated", "cut after a backslash"),
    fail("trunc_last_brace", AGREE_TEXT[:-1], "truncated", "only the last } missing"),
    fail(
        "trunc_before_fence",
        '```json\n{"intent": "agree",\n"slots": {}\n```',
        "truncated",
        "closing brace missing, then the fence",
    ),
    fail(
        "trunc_second_object",
        '{"intent": "agree"}\n或者：{"intent": "ref',
        "truncated",
        "an alternative object cut off",
    ),
    fail("trunc_comment", '{"intent": "agree" /* note', "truncated", "inside a comment"),
    fail(
        "trunc_prose_first",
        '好的，结果是：{"intent": "agree", "slots": {"time": "明天',
        "truncated",
        "prose then truncated Chinese value",
    ),
    # -- needs a guess ----------------------------------------------------------------------
    fail("placeholder_member", '{"intent": "agree", ...}', "unrepairable", "... placeholder"),
    fail("placeholder_array", '{"tags": ["a", "b", …]}', "unrepairable", "… placeholder"),
    fail("unquoted_value", '{"intent": agree}', "unrepairable", "unquoted value"),
    fail("invalid_escape", '{"reply": "snake\\_case"}', "unrepairable", "invalid escape \\_"),
    fail("leading_zero", '{"code": 007}', "unrepairable", "leading-zero number"),
    fail("nan", '{"confidence": NaN}', "unrepairable", "NaN"),
    fail("infinity", '{"confidence": Infinity}', "unrepairable", "Infinity"),
    fail("undefined", '{"slot": undefined}', "unrepairable", "undefined"),
    fail(
        "duplicate_key_diff",
        '{"intent": "agree", "intent": "refuse"}',
        "unrepairable",
        "duplicate key, different values",
    ),
    fail(
        "duplicate_key_diff_loose",
        "{'intent': 'agree', intent: 'refuse',}",
        "unrepairable",
        "duplicate key on the tolerant path",
    ),
    fail("mismatched_brackets", '{"tags": ["a", "b"}', "unrepairable", "] missing, } instead"),
    fail(
        "member_without_value",
        '{"intent": "agree", "slots"}',
        "unrepairable",
        "member without value",
    ),
    fail("empty_value", '{"intent": , "slots": {}}', "unrepairable", "value missing"),
    fail(
        "continues_after_close",
        '{"intent": "agree"}, "confidence": 0.9}',
        "unrepairable",
        "member syntax after the object closed",
    ),
    fail(
        "continues_no_comma",
        '{"intent": "agree"}\n"slots": {}',
        "unrepairable",
        "a member written after the close",
    ),
    fail(
        "missing_open_brace",
        '"intent": "agree", "slots": {"time": "3pm"}}',
        "unrepairable",
        "fragment missing its opening {",
    ),
    fail(
        "missing_open_brace_flat",
        '"intent": "agree"}',
        "unrepairable",
        "flat fragment missing its opening {",
    ),
    fail("two_stray_braces", '{"intent": "agree"}}}', "unrepairable", "more than one extra }"),
    fail(
        "stray_brace_then_text",
        '{"intent": "agree"}} 好的',
        "unrepairable",
        "extra } with text after",
    ),
    fail(
        "missing_comma_unquoted",
        '{"intent": "agree" slots: {}}',
        "unrepairable",
        "missing comma before an unquoted key",
    ),
    fail("single_star", '{"intent": *"agree"}', "unrepairable", "a lone * is not bold"),
    fail("double_escaped", '{\\\\\\"intent\\\\\\": 1}', "unrepairable", "escaped twice"),
    fail("unquoted_key_colon_zh", "{意图：同意}", "unrepairable", "unquoted Chinese value"),
    # -- one answer -------------------------------------------------------------------------
    fail(
        "example_then_answer",
        '例如：{"intent": "refuse"}\n实际输出：{"intent": "agree"}',
        "ambiguous_multiple",
        "example → answer",
    ),
    fail(
        "answer_then_alternative",
        '```json\n{"intent": "agree"}\n```\nAlternatively, if unsure:\n```json\n'
        '{"intent": "unclear"}\n```',
        "ambiguous_multiple",
        "answer → alternative, both fenced",
    ),
    fail(
        "same_intent_different_slots",
        '{"intent":"agree","slots":{"time":"明天"}}\n{"intent":"agree","slots":{}}',
        "ambiguous_multiple",
        "two objects differing only in slots",
    ),
    fail("int_vs_float", '{"n": 1} {"n": 1.0}', "ambiguous_multiple", "1 and 1.0 differ"),
    fail(
        "object_and_array",
        '{"intent": "agree"} [1]',
        "ambiguous_multiple",
        "an object and an array",
    ),
    fail("top_array", '[{"intent": "agree"}]', "not_object", "top-level array"),
    fail("top_array_fenced", '```json\n["agree", "refuse"]\n```', "not_object", "fenced array"),
    fail("scalar_string", '"agree"', "not_object", "a bare string"),
    fail("scalar_number", "```\n0.87\n```", "not_object", "a fenced bare number"),
    fail("scalar_literal", "true", "not_object", "a bare literal"),
    fail("empty_text", "", "empty", "empty output"),
    fail("whitespace_only", "  \n\t ", "empty", "whitespace only"),
    fail("prose_only", "抱歉，我无法判断用户的意图。", "empty", "prose without JSON"),
    fail("empty_fence", "```json\n```", "empty", "an empty fence"),
)
