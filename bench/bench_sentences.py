"""Sentence batching for TTS: our incremental batcher vs the design document's algorithm.

    .venv/bin/python bench/bench_sentences.py [--repeat N]

(a) SentenceBatcher: first sentence out at its boundary, later sentences in batches of 3,
    O(new text) per token.
(b) the design document's loop: append the delta, re-split the whole unfinished buffer,
    take `sentences[:-1]` as complete, emit only when 3 are collected. The same splitting
    rules (`split_sentences`) stand in for NLTK `sent_tokenize`, so only the algorithm differs.

Reported per reply: characters and tokens fed until the first chunk is out, the median cost of
one `push` in µs (over all tokens and repeats), and the total cost of the whole reply incl.
flush (best of the repeats: the machine is shared, best-of is the stable figure), with ratios.
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from callout_server.llm.sentence_batcher import SentenceBatcher
from callout_server.llm.sentences import join_sentences, split_sentences

ZH = (
    "您好，我是某某银行信用卡中心的客服小王，想跟您确认一下最近的账单情况。"
    "您本期的账单金额是3,256.80元，最后还款日是本月25号。"
    "如果您已经还款，请忽略这条提醒！"
    "另外，我们现在有一个分期还款的优惠活动，手续费打八折。"
    "请问您需要我为您详细介绍一下吗？"
    "如果您现在不方便，我也可以稍后再给您打过来。"
    "感谢您的耐心，祝您生活愉快。"
)
EN = (
    "Hello, this is Anna calling from Acme Bank about your credit card statement. "
    "Your balance is $3,256.80 and the payment is due on the 25th. "
    "If you have already paid, please ignore this reminder! "
    "We also have an instalment plan, e.g. twelve months at a reduced fee. "
    "Would you like me to explain how it works? "
    "If now is not a good time, I can call you back later. "
    "Thank you for your time, Mr. Smith."
)


class DesignDocBatcher:
    """The loop from the design document (re-split the buffer on every token, batch of 3)."""

    def __init__(self, batch: int = 3) -> None:
        self.buffer = ""
        self.batch: list[str] = []
        self.size = batch

    def push(self, delta: str) -> list[str]:
        out: list[str] = []
        self.buffer += delta
        sentences = split_sentences(self.buffer)
        if len(sentences) > 1:
            for sentence in sentences[:-1]:
                self.batch.append(sentence)
                if len(self.batch) >= self.size:
                    out.append(join_sentences(self.batch))
                    self.batch = []
            # The unfinished tail (keeping what followed the last boundary, as the loop does)
            self.buffer = self.buffer[self.buffer.rindex(sentences[-1]) :]
        return out

    def flush(self) -> list[str]:
        if self.buffer.strip():
            self.batch.extend(split_sentences(self.buffer))
        out = [join_sentences(self.batch)] if self.batch else []
        self.batch, self.buffer = [], ""
        return out


def tokens_zh(text: str, rng: random.Random) -> list[str]:
    """1-2 characters per token, roughly what Qwen-style tokenizers give for Chinese."""
    out, i = [], 0
    while i < len(text):
        step = rng.choice((1, 1, 2))
        out.append(text[i : i + step])
        i += step
    return out


def tokens_en(text: str, rng: random.Random) -> list[str]:
    """A word with its leading space per token, long words in two pieces."""
    out: list[str] = []
    for word in re.findall(r"\s*\S+", text):
        if len(word) > 7 and rng.random() < 0.5:
            out += [word[:5], word[5:]]
        else:
            out.append(word)
    return out


def first_chunk_at(make: Callable[[], object], tokens: list[str]) -> tuple[int, int, str]:
    batcher = make()
    fed = 0
    for n, token in enumerate(tokens, start=1):
        fed += len(token)
        chunks = batcher.push(token)  # type: ignore[attr-defined]
        if chunks:
            return fed, n, chunks[0]
    chunks = batcher.flush()  # type: ignore[attr-defined]
    return fed, len(tokens), chunks[0] if chunks else ""


def timings(make: Callable[[], object], tokens: list[str], repeat: int) -> tuple[float, float]:
    per_token: list[int] = []
    totals: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(3):  # warm up
        batcher = make()
        for token in tokens:
            batcher.push(token)  # type: ignore[attr-defined]
    gc.collect()  # both contenders start from the same clean heap; later collections count
    for _ in range(repeat):
        batcher = make()
        push = batcher.push  # type: ignore[attr-defined]
        total = 0
        for token in tokens:
            t0 = clock()
            push(token)
            dt = clock() - t0
            per_token.append(dt)
            total += dt
        t0 = clock()
        batcher.flush()  # type: ignore[attr-defined]
        totals.append(total + clock() - t0)
    return statistics.median(per_token) / 1000, min(totals) / 1000


def report(name: str, text: str, tokens: list[str], repeat: int) -> None:
    rows = {
        "(a) SentenceBatcher": lambda: SentenceBatcher(),
        "(a') no clause cut": lambda: SentenceBatcher(first_clause_min_chars=None),
        "(b) design doc": lambda: DesignDocBatcher(),
    }
    print(f"\n== {name}: {len(text)} chars, {len(tokens)} tokens, {len(split_sentences(text))} "
          "sentences ==")  # fmt: skip
    print(
        f"{'':22}{'chars→1st':>10}{'tokens→1st':>11}{'µs/token':>10}{'best total µs':>14}  first chunk"
    )
    results = {}
    for label, make in rows.items():
        chars, ntok, chunk = first_chunk_at(make, tokens)
        med, total = timings(make, tokens, repeat)
        results[label] = (chars, med, total)
        preview = chunk if len(chunk) <= 40 else chunk[:39] + "…"
        print(f"{label:22}{chars:>10}{ntok:>11}{med:>10.2f}{total:>14.1f}  {preview}")
    a, b = results["(a) SentenceBatcher"], results["(b) design doc"]
    print(
        f"ratios (b)/(a): chars to first chunk {b[0] / a[0]:.1f}x, "
        f"per-token cost {b[1] / a[1]:.1f}x, total cost {b[2] / a[2]:.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    print(f"python {sys.version.split()[0]}, repeat={args.repeat}")
    report("Chinese reply", ZH, tokens_zh(ZH, rng), args.repeat)
    report("English reply", EN, tokens_en(EN, rng), args.repeat)
    long_zh = ZH * 8
    report("Chinese reply x8", long_zh, tokens_zh(long_zh, rng), max(10, args.repeat // 8))
    # One very long sentence: (b) re-splits a growing buffer on every token (quadratic).
    run_on = "好的" + "，我们这个月的活动内容比较多" * 40 + "。"
    report("one run-on Chinese sentence", run_on, tokens_zh(run_on, rng), 20)


if __name__ == "__main__":
    main()
