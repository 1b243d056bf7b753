"""Call screening rules (phrases/screening.py) over the first-utterance corpus
(tests/data/screening_corpus.py)."""

from __future__ import annotations

import statistics
import time

import pytest

from callout_server.phrases import Screening, screen
from tests.data.screening_corpus import CASES, HELD_OUT

MACHINES = {"carrier", "voicemail", "ivr"}


def test_the_corpus_is_big_enough() -> None:
    assert len(CASES) >= 150
    assert {c.answered_by for c in CASES} == {"carrier", "voicemail", "ivr", "human", "unknown"}
    statuses = {c.carrier_status for c in CASES if c.answered_by == "carrier"}
    assert statuses == {"powered_off", "vacant", "suspended", "busy", "unreachable", None}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.text[:40] or "empty")
def test_corpus(case) -> None:  # type: ignore[no-untyped-def]
    got = screen(case.text)
    if case.kind in ("template", "empty"):
        assert got is not None
        assert (got.answered_by, got.carrier_status) == (case.answered_by, case.carrier_status)
    else:  # a person: human or undecided, never a machine
        assert got is None or got.answered_by == "human"


def test_no_held_out_person_is_taken_for_a_machine() -> None:
    for case in HELD_OUT:
        got = screen(case.text)
        if case.answered_by == "human":
            assert got is None or got.answered_by not in MACHINES, case.text


@pytest.mark.parametrize(("text", "rule", "anchor"), [
    ("您好，您拨打的电话已关机。", "carrier.announcement", "您拨打的电话已关机"),
    ("已关机，请稍后再拨", "carrier.status_tail", "已关机，请稍后再拨"),
    ("您拨打的用户……请稍后再拨", "carrier.lead_tail", "您拨打的用户……请稍后再拨"),
    ("对不起！您的电话已欠费，请您续交话费", "carrier.own_line", "您的电话已欠费"),
    ("您拨打的用户暂时无法接通，请在嘀声后留言", "voicemail.recording", "嘀声后"),
    ("您好，我是机主的来电助理", "voicemail.greeting", "机主的来电助理"),
    ("欢迎致电，查询请按1", "ivr.menu", "欢迎致电"),
    ("这不是空号我就是机主", "human.self_identified", "我就是机主"),
    ("喂，你好，哪位？", "human.greeting", "喂，你好，哪位？"),
])
def test_the_answer_says_which_rule_and_where(text: str, rule: str, anchor: str) -> None:
    got = screen(text)
    assert got is not None
    assert got.rule == rule
    assert text[got.start:got.end] == anchor


def test_the_brief_s_people_are_never_machines() -> None:
    for text in ("我手机快关机了你快说", "我现在正忙待会打", "这不是空号我就是机主"):
        got = screen(text)
        assert got is None or got.answered_by == "human", text


def test_a_negated_status_is_no_announcement() -> None:
    assert screen("您拨打的不是空号") is None
    assert screen("您拨打的电话是空号") == Screening("carrier", "vacant", "carrier.announcement",
                                                      "空号", 0, 9)


def test_a_machine_beside_a_self_identification_is_left_to_the_model() -> None:
    assert screen("你拨打的是空号吗？不是啊，我就是本人") is None


def test_nothing_heard_is_unknown() -> None:
    assert screen("。。。") == Screening("unknown", None, "unknown.empty", "", 0, 0)


def test_a_check_is_well_under_a_millisecond() -> None:
    texts = [c.text for c in CASES]
    for text in texts:
        screen(text)  # warm the character cache
    costs = []
    for _ in range(5):
        for text in texts:
            t = time.process_time()
            screen(text)
            costs.append(time.process_time() - t)
    assert statistics.median(costs) < 0.001  # measured ~20 µs (bench/README.md)
