"""The emulator's script persona and token model as pure functions: a script-generation
prompt (the script tier's real one) gets a script-shaped answer in the brief's language;
usage is counted from the text produced. Through the app: test_emulator_first_run.py.
"""

from __future__ import annotations

import re

import pytest

from callout_server.emulator import textgen
from callout_server.emulator.script_brief import parse
from callout_server.emulator.tokens import count_tokens, pieces
from callout_server.tiers.script.prompt import build_messages

ZH_SECTIONS = ("【角色与目标】", "【开场白】", "【主流程】", "【分支应对】", "【合规要点】",
               "【需收集的槽位】", "【结束语】")
EN_SECTIONS = ("[Role and goal]", "[Opening]", "[Main flow]", "[Branches]", "[Compliance]",
               "[Slots to collect]", "[Closing]")


def script_for(brief: str) -> textgen.Default:
    prompt = "\n".join(m["content"] for m in build_messages(brief))
    return textgen.default_reply(prompt, None)


def section(script: str, heading: str) -> str:
    return script.split(heading, 1)[1].split("\n\n", 1)[0]


def test_chinese_brief_gets_a_chinese_script_with_every_section() -> None:
    got = script_for("回访上周购买净水器的客户，确认安装满意度，有问题转人工")
    script = got.content
    assert [h for h in ZH_SECTIONS if h in script] == list(ZH_SECTIONS)
    assert script.index("【开场白】") < script.index("【主流程】") < script.index("【结束语】")
    opening = section(script, "【开场白】")
    assert "我是" in opening and "本人吗" in opening  # who calls, and the identity check
    assert "净水器" in opening  # the purpose, taken from the brief
    assert "您对安装还满意吗？" in section(script, "【主流程】")
    branches = section(script, "【分支应对】")
    for case in ("同意", "拒绝", "顾虑", "正在忙", "非本人", "提出问题"):
        assert case in branches
    assert "有问题" in branches and "转接人工" in branches  # the hand-off the brief asked for
    assert "不再来电" in section(script, "【合规要点】")
    assert "satisfied（boolean）" in section(script, "【需收集的槽位】")
    assert "再见" in section(script, "【结束语】")
    assert not re.search(r"[*#`|]", script)  # no Markdown: it is read out on the phone
    assert got.reasoning_lead.startswith("需求是：回访上周购买净水器的客户")


def test_hand_off_is_promised_only_when_the_brief_asks_for_it() -> None:
    script = script_for("邀请老客户参加周六的新品体验会").content
    assert "邀请您参加周六的新品体验会" in script
    assert "马上为您转接" not in script and "need_human" not in script
    assert "will_attend（boolean）" in script


def test_english_brief_gets_an_english_script() -> None:
    script = script_for("Call customers who bought a water purifier last week to check "
                        "installation satisfaction; transfer to a human if there is a problem."
                        ).content
    assert [h for h in EN_SECTIONS if h in script] == list(EN_SECTIONS)
    assert not re.search(r"[\u4e00-\u9fff]", script)
    assert "since you bought a water purifier last week" in section(script, "[Opening]")
    assert "Are you happy with the installation?" in script
    assert "If there is a problem, transfer the call to a human agent." in script
    assert "put you through" in section(script, "[Branches]")


@pytest.mark.parametrize("prompt", [
    "需求：回访客户",  # no script-designer system prompt
    "你是话术设计师。【开场白】【结束语】",  # no brief
])
def test_other_prompts_keep_the_stock_reply(prompt: str) -> None:
    assert parse(prompt) is None
    assert textgen.default_reply(prompt, None).content == textgen.DEFAULT_ANSWER


@pytest.mark.parametrize(("text", "tokens"), [
    ("你好", 2), ("好的，明白。", 6),  # one per CJK character, full-width punctuation too
    ("hello world!", 3), ("tomorrow at 3pm", 4),  # ~4 Latin characters per token
    ("OK，好的", 4), ("", 0),
])
def test_token_model(text: str, tokens: int) -> None:
    assert len(pieces(text)) == tokens and count_tokens(text) == tokens
    assert "".join(pieces(text)) == text


def test_reasoning_opens_with_the_lead_and_spends_exactly_the_budget() -> None:
    text = textgen.reasoning_text("需求是：回访。plan it", 50)
    assert text.startswith("需求是：回访。plan it") and len(pieces(text)) == 50
    assert len(pieces(textgen.reasoning_text("很长" * 40, 10))) == 10
