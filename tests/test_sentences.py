"""Sentence splitting and the streaming TTS batcher (pure; no I/O)."""

from __future__ import annotations

import random
import time

import pytest

from callout_server.llm.sentence_batcher import SentenceBatcher
from callout_server.llm.sentences import SentenceSplitter, join_sentences, split_sentences
from callout_server.llm.speech import speakable

CORPUS: list[tuple[str, list[str]]] = [
    # --- Chinese -------------------------------------------------------------------------
    ("你好。我是小王。", ["你好。", "我是小王。"]),
    ("真的吗？太好了！", ["真的吗？", "太好了！"]),
    ("第一步；第二步；完成。", ["第一步；", "第二步；", "完成。"]),
    ("真的吗？！我不信。", ["真的吗？！", "我不信。"]),
    ("嗯……让我想想。好的。", ["嗯……", "让我想想。", "好的。"]),
    ("他说：“好的。”然后走了。", ["他说：“好的。”", "然后走了。"]),
    ("「你好！」她笑着说。", ["「你好！」", "她笑着说。"]),
    ("（备注：已处理。）下一步。", ["（备注：已处理。）", "下一步。"]),
    ("《三体》很好看！你看过吗？", ["《三体》很好看！", "你看过吗？"]),
    ("价格是3.5元。还有问题吗？", ["价格是3.5元。", "还有问题吗？"]),
    ("会议在3:30开始。请准时。", ["会议在3:30开始。", "请准时。"]),
    ("好的，没问题", ["好的，没问题"]),
    ("您好，我是XX银行的客服，请问您现在方便吗？", ["您好，我是XX银行的客服，请问您现在方便吗？"]),
    ("好的!我马上处理。", ["好的!", "我马上处理。"]),
    ("可以吗?可以。", ["可以吗?", "可以。"]),
    ("明白了…那就这样。", ["明白了…", "那就这样。"]),
    ("第一行\n第二行", ["第一行", "第二行"]),
    ("有三点：1. 快 2. 慢。", ["有三点：1. 快 2. 慢。"]),
    ("1. 第一项\n2. 第二项", ["1. 第一项", "2. 第二项"]),
    ("网址是https://a.cn/x?id=1。请查收。", ["网址是https://a.cn/x?id=1。", "请查收。"]),
    ("您的余额为1,234.56元。", ["您的余额为1,234.56元。"]),
    ("好。", ["好。"]),
    ("", []),
    ("   ", []),
    # --- English -------------------------------------------------------------------------
    ("Hello. How are you?", ["Hello.", "How are you?"]),
    ("Hi! I am here.", ["Hi!", "I am here."]),
    ("Mr. Smith is here. He is early.", ["Mr. Smith is here.", "He is early."]),
    ("Dr. Wu and Mrs. Lee met. They talked.", ["Dr. Wu and Mrs. Lee met.", "They talked."]),
    ("Use tools, e.g. a hammer. Then stop.", ["Use tools, e.g. a hammer.", "Then stop."]),
    ("That is, i.e. the rest. Fine.", ["That is, i.e. the rest.", "Fine."]),
    ("I live in the U.S. The weather is fine.", ["I live in the U.S.", "The weather is fine."]),
    ("The U.S. Army is big.", ["The U.S. Army is big."]),
    ("It costs 3.5 dollars. Okay?", ["It costs 3.5 dollars.", "Okay?"]),
    ("Pi is 3.14159 roughly.", ["Pi is 3.14159 roughly."]),
    ("1. Call us\n2. Wait", ["1. Call us", "2. Wait"]),
    ("1. Call us. 2. Wait.", ["1. Call us.", "2. Wait."]),
    ("We meet at 3:30 today. Bye.", ["We meet at 3:30 today.", "Bye."]),
    ("Come at 5 p.m. tomorrow.", ["Come at 5 p.m. tomorrow."]),
    ("Come at 5 p.m. Then we eat.", ["Come at 5 p.m.", "Then we eat."]),
    (
        "Visit https://example.com/a.b?x=1. Thanks!",
        ["Visit https://example.com/a.b?x=1.", "Thanks!"],
    ),
    ("Mail a.b@c.com now. Bye.", ["Mail a.b@c.com now.", "Bye."]),
    ("Go to example.com. It works.", ["Go to example.com.", "It works."]),
    ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ("(See above.) Next.", ["(See above.)", "Next."]),
    ("Wait... I think so.", ["Wait...", "I think so."]),
    ("Well... maybe not.", ["Well... maybe not."]),
    ("Really?! Yes.", ["Really?!", "Yes."]),
    ("Apples, pears, etc. are fruit.", ["Apples, pears, etc. are fruit."]),
    ("I bought apples etc. The end.", ["I bought apples etc.", "The end."]),
    ("J. Smith wrote it.", ["J. Smith wrote it."]),
    ("See No. 5 for details.", ["See No. 5 for details."]),
    ("It was 1999. 2000 was better.", ["It was 1999.", "2000 was better."]),
    ("Version 2.0.1 is out. Update now.", ["Version 2.0.1 is out.", "Update now."]),
    ("No punctuation at the end", ["No punctuation at the end"]),
    ("Done.", ["Done."]),
    # --- Mixed ---------------------------------------------------------------------------
    (
        "好的，我明白了。The price is 3.5 dollars. 还有问题吗？",
        ["好的，我明白了。", "The price is 3.5 dollars.", "还有问题吗？"],
    ),
    ("请联系Dr. Wang。他会帮您。", ["请联系Dr. Wang。", "他会帮您。"]),
    ("OK.好的。", ["OK.", "好的。"]),
    ("我用的是iPhone 15. 很好用。", ["我用的是iPhone 15.", "很好用。"]),
    ("Thanks! 谢谢！", ["Thanks!", "谢谢！"]),
    ("**重要**：请按#号键。谢谢。", ["**重要**：请按#号键。", "谢谢。"]),
]


@pytest.mark.parametrize(("text", "expected"), CORPUS, ids=[c[0][:30] or "empty" for c in CORPUS])
def test_split_corpus(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 40


def _stream(text: str, pieces: list[str]) -> list[str]:
    """Feed pieces to a splitter, attaching late tails the way the batcher does."""
    splitter = SentenceSplitter()
    out: list[str] = []
    for piece in pieces:
        tail, sentences = splitter.push(piece)
        if tail:
            out[-1] += tail
        out.extend(sentences)
    return out + splitter.finish()


def _random_pieces(text: str, rng: random.Random) -> list[str]:
    pieces, i = [], 0
    while i < len(text):
        step = rng.randint(1, 4)
        pieces.append(text[i : i + step])
        i += step
    return pieces


@pytest.mark.parametrize(("text", "expected"), CORPUS, ids=[c[0][:30] or "empty" for c in CORPUS])
def test_char_by_char_equals_whole_text(text: str, expected: list[str]) -> None:
    assert _stream(text, list(text)) == expected
    rng = random.Random(text)
    for _ in range(5):
        assert _stream(text, _random_pieces(text, rng)) == expected


def test_cjk_mark_at_buffer_end_is_a_boundary_at_once() -> None:
    splitter = SentenceSplitter()
    assert splitter.push("你好").sentences == []
    assert splitter.push("。").sentences == ["你好。"]


def test_english_period_waits_for_the_next_character() -> None:
    splitter = SentenceSplitter()
    assert splitter.push("It costs 3.").sentences == []  # could be 3.5
    assert splitter.push("5 dollars.").sentences == []
    assert splitter.push(" Okay").sentences == ["It costs 3.5 dollars."]


def test_abbreviation_waits_for_the_next_word() -> None:
    splitter = SentenceSplitter()
    assert splitter.push("I live in the U.S. Th").sentences == []
    assert splitter.push("e weather").sentences == ["I live in the U.S."]


def test_closer_inside_open_quote_is_awaited() -> None:
    splitter = SentenceSplitter()
    assert splitter.push("他说：“好的。").sentences == []
    assert splitter.push("”").sentences == ["他说：“好的。”"]


def test_late_tail_after_eager_cut() -> None:
    splitter = SentenceSplitter()
    assert splitter.push("真的吗？").sentences == ["真的吗？"]
    assert splitter.push("！我") == ("！", [])


def test_join_sentences() -> None:
    assert join_sentences(["你好。", "我是小王。"]) == "你好。我是小王。"
    assert join_sentences(["Hello.", "How are you?"]) == "Hello. How are you?"
    assert join_sentences(["好的。", "The end.", "再见。"]) == "好的。The end.再见。"


# --- batcher -----------------------------------------------------------------------------

ZH_REPLY = (
    "您好，我是客服小王。请问您现在方便吗？我们有一个优惠活动。只需要一分钟。您看可以吗？好的。"
)


def _feed(batcher: SentenceBatcher, pieces: list[str]) -> list[tuple[int, str]]:
    """(index of the piece that released the chunk, chunk); flush gets index len(pieces)."""
    out = [(i, c) for i, p in enumerate(pieces) for c in batcher.push(p)]
    return out + [(len(pieces), c) for c in batcher.flush()]


def test_first_sentence_goes_out_at_its_boundary_token() -> None:
    pieces = list(ZH_REPLY)
    chunks = _feed(SentenceBatcher(first_clause_min_chars=None), pieces)
    first_end = ZH_REPLY.index("。")
    assert chunks[0] == (first_end, "您好，我是客服小王。")
    assert [c for _, c in chunks[1:]] == [
        "请问您现在方便吗？我们有一个优惠活动。只需要一分钟。",
        "您看可以吗？好的。",
    ]
    assert chunks[-1][0] == len(pieces)  # the partial batch waits for flush


def test_english_first_sentence_released_by_the_following_space() -> None:
    text = "Hello there. How are you today? I can help. Bye now."
    pieces = text.split(" ")
    pieces = [p + " " for p in pieces[:-1]] + [pieces[-1]]
    chunks = _feed(SentenceBatcher(), pieces)
    assert chunks[0] == (1, "Hello there.")  # boundary known once "there. " has arrived
    assert [c for _, c in chunks[1:]] == ["How are you today? I can help. Bye now."]


def test_long_chinese_opening_is_cut_at_a_clause_mark() -> None:
    text = "您好，我这边是某某银行信用卡中心的，想跟您确认一下账单信息。后面还有。"
    chunks = _feed(SentenceBatcher(first_clause_min_chars=10), list(text))
    first_clause_end = text.index("，", 3)
    assert chunks[0] == (first_clause_end, "您好，我这边是某某银行信用卡中心的，")
    # The rest of the first sentence leaves at its own boundary, not with a later batch.
    assert chunks[1] == (text.index("。"), "想跟您确认一下账单信息。")
    assert [c for _, c in chunks[2:]] == ["后面还有。"]


def test_short_opening_with_sentence_end_is_not_clause_cut() -> None:
    chunks = _feed(SentenceBatcher(first_clause_min_chars=10), ["好的，", "没问题。", "再见。"])
    assert [c for _, c in chunks] == ["好的，没问题。", "再见。"]


def test_later_sentences_batched() -> None:
    batcher = SentenceBatcher(batch_sentences=2, first_clause_min_chars=None)
    assert batcher.push("一。二。三。") == ["一。", "二。三。"]
    assert batcher.push("四。") == []
    assert batcher.flush() == ["四。"]


def test_flush_before_tool_call_sends_pending_text() -> None:
    batcher = SentenceBatcher()
    assert batcher.push("好的。我帮您查一下") == ["好的。"]
    assert batcher.flush() == ["我帮您查一下"]
    assert batcher.flush() == []


def test_flush_decides_a_waiting_period() -> None:
    batcher = SentenceBatcher()
    assert batcher.push("Sure.") == []
    assert batcher.flush() == ["Sure."]


def test_clean_applied_to_whole_sentences() -> None:
    batcher = SentenceBatcher(clean=speakable)
    pieces = ["**注", "意**：请访问 https://exa", "mple.com/x。", "😊\n", "谢谢", "。"]
    out = [c for p in pieces for c in batcher.push(p)] + batcher.flush()
    assert out == ["注意：请访问。", "谢谢。"]


def test_tail_appended_to_held_sentence() -> None:
    batcher = SentenceBatcher(first_clause_min_chars=None)
    assert batcher.push("好。") == ["好。"]
    assert batcher.push("真的吗？") == []
    assert batcher.push("！") == []
    assert batcher.flush() == ["真的吗？！"]


@pytest.mark.parametrize(("text", "expected"), CORPUS, ids=[c[0][:30] or "empty" for c in CORPUS])
def test_batcher_token_by_token_equals_whole_text(text: str, expected: list[str]) -> None:
    whole = _feed(SentenceBatcher(first_clause_min_chars=None), [text])
    by_char = _feed(SentenceBatcher(first_clause_min_chars=None), list(text))
    if text.startswith("真的吗？！"):  # tail after an already sent first chunk is dropped
        assert [c for _, c in by_char] == ["真的吗？", "我不信。"]
        return
    assert [c for _, c in by_char] == [c for _, c in whole]
    if expected:
        assert "".join(c for _, c in whole).replace(" ", "") == "".join(expected).replace(" ", "")


def test_incremental_cost_does_not_grow_with_text_length() -> None:
    """Per-token work is O(new text): 20x more text costs about 20x, not 400x.

    Timed in this thread's CPU time: wall time counts whatever else the machine runs
    (the ratio failed with both cores busy), CPU time only this work.
    """

    def cost(n_sentences: int) -> float:
        text = "这是一个用于测试的句子，里面有一些内容。" * n_sentences
        batcher = SentenceBatcher()
        start = time.thread_time()
        for ch in text:
            batcher.push(ch)
        batcher.flush()
        return (time.thread_time() - start) / len(text)

    cost(5)  # warm up
    small, large = min(cost(10) for _ in range(5)), min(cost(200) for _ in range(5))
    assert large < small * 3


def test_long_sentence_without_boundary_stays_linear() -> None:
    def cost(n: int) -> float:  # CPU time, as above
        splitter = SentenceSplitter()
        start = time.thread_time()
        for _ in range(n):
            splitter.push("字")
        return (time.thread_time() - start) / n

    cost(100)
    assert min(cost(20000) for _ in range(5)) < min(cost(1000) for _ in range(5)) * 3


def test_batch_sentences_validated() -> None:
    with pytest.raises(ValueError):
        SentenceBatcher(batch_sentences=0)


_FUZZ_WORDS = [
    "Mr.", "U.S.", "e.g.", "etc.", "The", "he", "I", "3.5", "1.", "a.m.", "Then", "好的",
    "。", "！", "？", "……", "“", "”", "，", "：", ".", "!", "?", "...", " ", " ", "\n",
    "https://x.com/a?b=1", "a.b@c.com", "No.", "5", "J.", "(", ")", '"', "**", "（", "）",
]  # fmt: skip


def test_fuzz_streaming_equals_whole_text_and_loses_nothing() -> None:
    rng = random.Random(2024)
    for _ in range(2000):
        text = "".join(rng.choice(_FUZZ_WORDS) for _ in range(rng.randint(0, 25)))
        whole = split_sentences(text)
        squash = str.maketrans("", "", " \n")
        assert "".join(whole).translate(squash) == text.translate(squash)
        assert _stream(text, _random_pieces(text, rng)) == whole, text
