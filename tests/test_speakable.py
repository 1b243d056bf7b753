"""speakable(): what a TTS voice should read out of a model's answer."""

from __future__ import annotations

import pytest

from callout_server.llm.speech import speakable

CASES: list[tuple[str, str]] = [
    # markdown
    ("**重要**：请按时还款。", "重要：请按时还款。"),
    ("__bold__ and *em* and ~~gone~~", "bold and em and gone"),
    ("# 标题", "标题"),
    ("### Heading three", "Heading three"),
    ("> quoted text", "quoted text"),
    ("- item one", "item one"),
    ("* item two", "item two"),
    ("  + nested item", "nested item"),
    ("• bullet", "bullet"),
    ("1. 第一项", "1. 第一项"),
    ("`code` here", "code here"),
    ("```python", ""),
    ("| 项目 | 金额 |", "项目 金额"),
    ("|---|---|", ""),
    ("---", ""),
    ("See [the docs](https://x.com/a_(b)). Thanks", "See the docs. Thanks"),
    ("![图片说明](https://x.com/a.png)", "图片说明"),
    ("<b>hi</b> there<br/>", "hi there"),
    # URLs
    ("Visit https://example.com/path?x=1. Then", "Visit. Then"),
    ("网址是https://a.cn/x，请查收。", "网址是，请查收。"),
    ("go to www.abc.com now", "go to now"),
    ("(https://x.com)", ""),
    ("详见（https://x.com/a）。", "详见。"),
    ("<https://x.com>", ""),
    ("Call me at a.b@c.com", "Call me at a.b@c.com"),
    ("example.com is fine", "example.com is fine"),
    # emoji and symbols
    ("好的😊！", "好的！"),
    ("Great 👍🏽 job", "Great job"),
    ("👨\u200d👩\u200d👧 family", "family"),
    ("🇨🇳 flag", "flag"),
    ("press 1️⃣ now", "press 1 now"),
    ("✅ 已完成 ❌ 未完成", "已完成 未完成"),
    ("→ next ★", "next"),
    ("©2024 ACME™", "2024 ACME"),
    ("back\\slash", "backslash"),
    # kept
    ("请按#号键。", "请按#号键。"),
    ("价格 $3.50, ¥20, €5, £1", "价格 $3.50, ¥20, €5, £1"),
    ("50% off, 3‰", "50% off, 3‰"),
    ("温度25℃，湿度60%。25°C", "温度25℃，湿度60%。25°C"),
    ("3 × 4 = 12, 5 + 1 > 4, 5~10", "3 × 4 = 12, 5 + 1 > 4, 5~10"),
    ("第①条，½ cup", "第①条，½ cup"),
    ("会议3:30开始；地点A-1。", "会议3:30开始；地点A-1。"),
    ("「你好」、《三体》、【注意】……", "「你好」、《三体》、【注意】……"),
    ("24/7 & more @home", "24/7 & more @home"),
    # scripts
    ("مرحبا بكم", "مرحبا بكم"),
    ("Привет, мир!", "Привет, мир!"),
    ("नमस्ते दुनिया", "नमस्ते दुनिया"),
    ("こんにちは、カタカナ。", "こんにちは、カタカナ。"),
    ("안녕하세요.", "안녕하세요."),
    ("Ελληνικά, עברית, ไทย", "Ελληνικά, עברית, ไทย"),
    ("café naïve", "café naïve"),
    # quotes and spaces
    ("“你好”，他说。‘ok’", "\"你好\"，他说。'ok'"),
    ("It’s “fine”.", 'It\'s "fine".'),
    ("a   b\n\nc\td", "a b c d"),
    ("user_name", "user name"),
    ("", ""),
    ("🙂🙂", ""),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:24] or "empty" for c in CASES])
def test_speakable(text: str, expected: str) -> None:
    assert speakable(text) == expected


def test_idempotent() -> None:
    for text, _ in CASES:
        once = speakable(text)
        assert speakable(once) == once


def test_marker_split_across_sentences_is_still_removed() -> None:
    # The batcher cleans whole sentences; a bold span crossing a boundary loses both halves.
    assert speakable("**注意。") == "注意。"
    assert speakable("这很重要**。") == "这很重要。"


def test_link_split_across_sentences_leaves_no_symbols() -> None:
    assert speakable("[Mr. Smith.") == "Mr. Smith."
    assert speakable("Details](https://x.com/a)") == "Details"
