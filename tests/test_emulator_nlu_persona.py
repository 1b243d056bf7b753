"""The emulator's NLU persona as pure functions: reading the NLU tier's real prompt, picking
an offered intent, filling slots (zh and en). End to end through the app:
test_emulator_first_run.py.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from callout_server.emulator import textgen
from callout_server.emulator.cues import polarity
from callout_server.emulator.nlu_persona import NO_EVIDENCE_CONFIDENCE, decide, pick_intent
from callout_server.emulator.nlu_prompt import IntentSpec, NluTask, SlotSpec, parse
from callout_server.emulator.numerals import first_number
from callout_server.emulator.slot_fill import fill
from callout_server.emulator.timespans import find_time
from callout_server.tiers.nlu.prompt import build_messages
from callout_server.tiers.nlu.schemas import DecideRequest

AGREE_REFUSE = [{"name": "agree", "description": "客户同意并给出时间"},
                {"name": "refuse", "description": "客户拒绝"}]
TIME_SLOT = {"name": "time", "description": "客户方便的时间", "type": "string"}


def prompt_of(**fields: Any) -> str:
    """The prompt exactly as the NLU tier sends it, joined as the emulator reads it."""
    body = {"utterance": "明天下午三点以后都可以", "intents": AGREE_REFUSE, "slots": [TIME_SLOT]}
    messages = build_messages(DecideRequest.model_validate(body | fields))
    return "\n".join(m["content"] for m in messages)


def answer(**fields: Any) -> dict[str, Any]:
    """The emulator's unscripted reply to that prompt in JSON mode, parsed."""
    return orjson.loads(textgen.default_reply(prompt_of(**fields), ("json_object", None)).content)


# -- reading the tier's prompt ---------------------------------------------------------------

def test_the_tier_prompt_is_read_back_intents_slots_and_utterance() -> None:
    task = parse(prompt_of(
        context=[{"role": "assistant", "content": "请问您什么时候方便？"},
                 {"role": "user", "content": "客户最新的话：不行"}],
        slots=[TIME_SLOT, {"name": "plan", "type": "enum", "values": ["金卡", "银卡"],
                           "description": "套餐（年付）"},
               {"name": "n", "type": "integer"}, {"name": "ok", "type": "boolean"}],
        intents=[*AGREE_REFUSE, {"name": "ns:ask", "description": "第一行\n第二行"}],
        instructions="先确认身份"))
    assert task is not None
    assert task.utterance == "明天下午三点以后都可以"  # a context turn cannot shadow it
    assert task.intents == (IntentSpec("agree", "客户同意并给出时间"), IntentSpec("refuse", "客户拒绝"),
                            IntentSpec("ns:ask", "第一行 第二行"))
    assert task.slots == (SlotSpec("time", "string", "客户方便的时间"),
                          SlotSpec("plan", "enum", "套餐（年付）", ("金卡", "银卡")),
                          SlotSpec("n", "integer"), SlotSpec("ok", "boolean"))


def test_a_node_without_intents_answers_intent_null_and_fills_slots() -> None:
    got = answer(intents=[], utterance="我要三台")
    assert got == {"intent": None, "confidence": 0.5, "slots": {"time": None}}
    got = answer(intents=[], slots=[{"name": "count", "type": "integer"}], utterance="我要三台")
    assert got == {"intent": None, "confidence": 0.85, "slots": {"count": 3}}


@pytest.mark.parametrize("prompt", [
    "判断客户意图。可选意图：同意、拒绝、稍后再打\n好的",  # someone else's prompt
    "可选意图（intent 只能取以下名称之一）：\n- agree\n需要抽取的槽位：\n- time (字符串)",  # no utterance
])
def test_an_unrecognised_prompt_keeps_the_generic_answer(prompt: str) -> None:
    assert parse(prompt) is None
    assert orjson.loads(textgen.default_reply(prompt, ("json_object", None)).content) == {
        "intent": "同意" if "同意" in prompt else "agree"}
    assert textgen.default_reply("你好", None).content == textgen.DEFAULT_ANSWER


# -- intents ---------------------------------------------------------------------------------

def test_readme_example_agrees_with_the_time_and_a_real_confidence() -> None:
    got = answer()
    assert got["intent"] == "agree" and got["slots"] == {"time": "明天下午三点以后"}
    assert 0.6 <= got["confidence"] <= 0.95


RICH = [*AGREE_REFUSE,
        {"name": "busy", "description": "客户正在忙，不方便接听"},
        {"name": "ask_price", "description": "客户询问价格"},
        {"name": "transfer", "description": "客户要求转人工"}]


@pytest.mark.parametrize(("utterance", "intents", "expected"), [
    ("不用了，我没兴趣", AGREE_REFUSE, "refuse"),
    ("不可以", AGREE_REFUSE, "refuse"),  # 可以 negated is a no
    ("好的，但是我下周才有空", AGREE_REFUSE, "agree"),
    ("好的，但是我不需要", AGREE_REFUSE, "refuse"),  # after "但是" is the answer
    ("没问题，就这么定", AGREE_REFUSE, "agree"),  # 没问题 is a yes
    ("我在开会，正在忙", RICH, "busy"),
    ("这个多少钱？价格贵不贵", RICH, "ask_price"),
    ("你帮我转人工吧", RICH, "transfer"),
    ("Sure, tomorrow at 3pm works for me", [{"name": "agree", "description": "customer agrees"},
                                            {"name": "refuse", "description": "declines"}],
     "agree"),
    ("No thanks, I'm not interested", [{"name": "accept"}, {"name": "reject"}], "reject"),
    ("I'm driving, call me later", [{"name": "agree"}, {"name": "busy",
                                                        "description": "customer is driving"}],
     "busy"),
])
def test_the_offered_intent_the_utterance_points_to(utterance: str, intents: list[Any],
                                                    expected: str) -> None:
    got = answer(utterance=utterance, intents=intents)
    assert got["intent"] == expected
    assert 0.6 <= got["confidence"] <= 0.95


def test_no_evidence_gives_the_first_intent_at_low_confidence() -> None:
    intents = (IntentSpec("reschedule", "改约时间"), IntentSpec("complain", "投诉"))
    assert pick_intent(intents, "喂？喂？") == ("reschedule", NO_EVIDENCE_CONFIDENCE, ())
    assert pick_intent(intents, "hmm") == ("reschedule", NO_EVIDENCE_CONFIDENCE, ())


@pytest.mark.parametrize("utterance", [
    "可以", "不行", "我是来投诉的", "refund please", "转人工", "？", "同意同意同意", "agree",
    "",
])
def test_the_answer_never_names_an_intent_that_was_not_offered(utterance: str) -> None:
    # Not offered: "agree"/"refuse"/"transfer" the utterance talks about.
    intents = (IntentSpec("yes_later", "客户以后再说"), IntentSpec("other"))
    name, confidence, _ = pick_intent(intents, utterance)
    assert name in {"yes_later", "other"} and 0 < confidence <= 0.95


@pytest.mark.parametrize(("text", "expected"), [
    ("可以的", 1), ("好", 1), ("行吧", 1), ("是我", 1), ("同意", 1), ("yes", 1), ("OK", 1),
    ("不", -1), ("没空", -1), ("拒绝", -1), ("no", -1), ("not now", -1), ("不好意思", 0),
    ("不感兴趣", -1), ("don't call again", -1), ("明天", 0),
])
def test_yes_no_cues(text: str, expected: int) -> None:
    assert polarity(text) == expected


# -- slots -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("utterance", "expected"), [
    ("明天下午三点以后都可以", "明天下午三点以后"),
    ("那就下周三上午十点吧", "下周三上午十点"),
    ("后天晚上8:30到9点之间", "后天晚上8:30到9点"),
    ("tomorrow at 3pm works", "tomorrow at 3pm"),
    ("Call me after 5 pm on Friday", "after 5 pm on Friday"),
    ("我有一点问题", None),  # 一点 is "a little", not one o'clock
    ("No thanks", None),
])
def test_time_spans(utterance: str, expected: str | None) -> None:
    assert find_time(utterance) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我要三台", 3), ("一百零五个", 105), ("预算两千五", 2500), ("一万二", 12000),
    ("三点五公斤", 3.5), ("1,250.5 元", 1250.5), ("twenty-five people", 25),
    ("I have three gold cards", 3), ("我想一下", None), ("万一不行呢", None),
])
def test_numbers_digits_chinese_numerals_and_english_words(text: str, expected: Any) -> None:
    assert first_number(text) == expected


@pytest.mark.parametrize(("slot", "utterance", "expected"), [
    (SlotSpec("count", "integer", "台数"), "给我来两台吧", 2),
    (SlotSpec("amount", "number"), "预算大概三千五", 3500),
    (SlotSpec("vip", "boolean", "是否会员"), "是的，我是会员", True),
    (SlotSpec("has_car", "boolean", "是否有车"), "我没有车", False),
    (SlotSpec("vip", "boolean"), "yes", True),
    (SlotSpec("vip", "boolean"), "nope", False),
    (SlotSpec("vip", "boolean"), "明天再说", None),
    (SlotSpec("plan", "enum", "", ("金卡", "银卡")), "我要银卡", "银卡"),
    (SlotSpec("plan", "enum", "", ("gold", "silver")), "The Gold one, please", "gold"),
    (SlotSpec("plan", "enum", "", ("gold", "silver")), "whatever", None),
    (SlotSpec("ok", "enum", "", ("是", "否")), "不是", "否"),  # a yes/no pair of values
    (SlotSpec("name", "string", "客户姓名"), "我姓王，王先生", "王"),
    (SlotSpec("phone", "string", "联系电话"), "打我手机 138 1234 5678 就行", "138 1234 5678"),
    (SlotSpec("reason", "string", "拒绝原因"), "不要了，因为太贵了", "太贵了"),
    (SlotSpec("note", "string"), "嗯，安装师傅态度很好。", "安装师傅态度很好"),
    (SlotSpec("product", "string", "想要的产品型号"), "我想看看，就那个净水器型号A7吧", "就那个净水器型号A7吧"),
    (SlotSpec("time", "string", "客户方便的时间"), "好的", None),  # never invented
    (SlotSpec("missing", "string"), "No thanks, I already have three gold cards.", None),
])
def test_slot_filling(slot: SlotSpec, utterance: str, expected: Any) -> None:
    assert fill(slot, utterance) == expected


def test_english_node_decided_with_every_slot_type() -> None:
    task = NluTask(
        intents=(IntentSpec("agree", "customer agrees"), IntentSpec("refuse", "customer declines")),
        slots=(SlotSpec("count", "integer"), SlotSpec("vip", "boolean"),
               SlotSpec("plan", "enum", "", ("gold", "silver")),
               SlotSpec("when", "string", "when to call back")),
        utterance="No thanks, I already have three gold cards. Maybe call back next week.")
    d = decide(task)
    assert d.intent == "refuse" and 0.6 <= d.confidence <= 0.95
    assert d.slots == {"count": 3, "vip": False, "plan": "gold", "when": "next week"}
