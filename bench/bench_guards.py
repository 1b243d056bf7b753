"""Call screening, global intents and lexicon guards: how right the rules are, and what they cost.

    .venv/bin/python bench/bench_guards.py [--repeat N]

(1) Screening rules over tests/data/screening_corpus.py: precision and recall per class of
    what the rules answer (an undecided utterance goes to the model and counts as a miss
    here), carrier status accuracy, people taken for a machine; the tuned corpus and the
    held-out one apart.
(2) Global intent rules with the shipped defaults over tests/data/intent_corpus.py: the same
    per intent, look-alikes taken for an intent.
(3) µs per rule check, median and p99 of process CPU time over the corpus, beside a baseline
    in the same run: one compiled `re` alternation of the same literal phrases (what a
    keyword loop costs, with none of the shape, negation or fold).
(4) Lexicon guard: load time of a 10,000-term lexicon, and µs per sentence with it vs none
    (the same loop without a check) vs the same terms as one `re` alternation.
(5) Phrase matchers at 300 / 3,000 / 10,000 phrases: ahocorasick-rs (ours) vs a compiled
    `re` alternation, and pyahocorasick when it is installed (it is not a dependency).

CPU time per call (time.process_time) is steadier than wall time on a shared machine; read
medians and ratios, not single figures.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from callout_server.phrases import IntentRules, Lexicon, default_intents, fold, screen
from callout_server.phrases.announcements import GREETINGS, LEADS, STATUSES, TAILS, VOICEMAIL
from tests.data import intent_corpus, screening_corpus

MACHINES = ("carrier", "voicemail", "ivr")


def per_class(pairs: Sequence[tuple[str | None, str | None]], classes: Sequence[str]) -> None:
    """pairs: (expected, answered) with None for "no rule answer" / "no intent"."""
    print(f"  {'class':13s} {'cases':>5s} {'answered':>8s} {'right':>5s} {'precision':>9s} "
          f"{'recall':>7s}")
    for cls in classes:
        cases = sum(1 for want, _ in pairs if want == cls)
        answered = sum(1 for _, got in pairs if got == cls)
        right = sum(1 for want, got in pairs if want == got == cls)
        precision = f"{right / answered:.1%}" if answered else "-"
        recall = f"{right / cases:.1%}" if cases else "-"
        print(f"  {cls:13s} {cases:5d} {answered:8d} {right:5d} {precision:>9s} {recall:>7s}")


def screening(cases: Sequence[screening_corpus.FirstUtterance], title: str) -> None:
    print(f"\n(1) screening rules, {title}: {len(cases)} first utterances")
    pairs, status_right, status_cases, machine_people = [], 0, 0, []
    for c in cases:
        got = screen(c.text)
        pairs.append((c.answered_by, got.answered_by if got else None))
        if c.answered_by == "carrier":
            status_cases += 1
            status_right += bool(got and got.answered_by == "carrier"
                                 and got.carrier_status == c.carrier_status)
        if c.answered_by == "human" and got and got.answered_by in MACHINES:
            machine_people.append(c.text)
    per_class(pairs, (*MACHINES, "human", "unknown"))
    looks = [c for c in cases if c.kind == "lookalike"]
    print(f"  carrier status right: {status_right}/{status_cases}; people taken for a machine: "
          f"{len(machine_people)} (of {sum(c.answered_by == 'human' for c in cases)}, "
          f"{len(looks)} of them saying a carrier word)")
    for text in machine_people:
        print("    !", text)
    misses = [c.text for c, (want, got) in zip(cases, pairs, strict=True)
              if want in MACHINES and got != want]
    for text in misses:
        print("    missed:", text)


def intents(rules: IntentRules, cases: Sequence[intent_corpus.NodeUtterance], title: str) -> None:
    print(f"\n(2) global intent rules, {title}: {len(cases)} node utterances, "
          f"{sum(c.lookalike for c in cases)} look-alikes")
    pairs = []
    for c in cases:
        hit = rules.check(c.text).hit
        pairs.append((c.label or "none", hit.intent if hit else "none"))
    per_class(pairs, ("opt_out", "complaint", "human_agent", "none"))
    taken = Counter(got for c, (_, got) in zip(cases, pairs, strict=True)
                    if c.lookalike and got != "none")
    print(f"  look-alikes taken for an intent: {sum(taken.values())} {dict(taken) or ''}")
    for c, (want, got) in zip(cases, pairs, strict=True):
        if want != got:
            print(f"    {want} -> {got}: {c.text}")


def cpu_costs(fn: Callable[[str], object], texts: Sequence[str], repeat: int) -> list[float]:
    for text in texts:
        fn(text)  # warm caches
    costs = []
    for _ in range(repeat):
        for text in texts:
            t = time.process_time()
            fn(text)
            costs.append(time.process_time() - t)
    return costs


def line(label: str, costs: list[float], base: float | None = None) -> float:
    med = statistics.median(costs) * 1e6
    p99 = sorted(costs)[int(len(costs) * 0.99)] * 1e6
    ratio = f"{med / base:6.2f}x" if base else "  1.00x"
    print(f"  {label:44s} {med:8.2f} {p99:8.2f}  {ratio}")
    return med


def alternation(phrases: Sequence[str]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, sorted(set(phrases), key=len, reverse=True))))


def rule_costs(rules: IntentRules, repeat: int) -> None:
    print(f"\n(3) µs per rule check (process CPU, {repeat} rounds over each corpus)")
    print(f"  {'':44s} {'median':>8s} {'p99':>8s}  vs baseline")
    first = [c.text for c in screening_corpus.CASES]
    screen_words = [*LEADS, *TAILS, *VOICEMAIL, *GREETINGS,
                    *(p for ps in STATUSES.values() for p in ps)]
    rx = alternation([w for w in screen_words if "*" not in w])
    base = line("baseline: re alternation of the cue words", cpu_costs(rx.findall, first, repeat))
    line("screen(first utterance)", cpu_costs(screen, first, repeat), base)
    node = [c.text for c in intent_corpus.CASES]
    literal = [p.replace("*", "") for i in default_intents() for p in i.phrases]
    rx = alternation(literal)
    base = line("baseline: re alternation of the intent phrases",
                cpu_costs(rx.findall, node, repeat))
    line("IntentRules.check(node utterance)", cpu_costs(rules.check, node, repeat), base)
    line("fold() alone, node utterances", cpu_costs(fold, node, repeat), base)


REPLY = (
    "您好，这里是某某银行理财中心。", "这款产品的业绩比较基准是年化百分之三点五。",
    "过往业绩不代表未来表现，理财有风险，投资需谨慎。", "起购金额是一万元，期限一百八十天。",
    "我们会确保本月之内把合同寄到您手上。", "如果您有兴趣，我可以让客户经理联系您。",
    "这款产品稳赚不赔，完全保本。", "请问您现在方便吗？", "好的，那我先给您发一条短信。",
    "感谢您的接听，祝您生活愉快，再见！",
)


def han_terms(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    han = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    terms = {"".join(rng.choice(han) for _ in range(rng.randint(2, 5))) for _ in range(n * 2)}
    return sorted(terms)[:n]


def lexicon_costs(repeat: int) -> None:
    terms = [*han_terms(9_995), "保本", "稳赚", "零风险", "保证收益", "稳赚不赔"]
    print(f"\n(4) lexicon guard: {len(terms)} terms + 100 allowed look-alikes, "
          f"{len(REPLY)} reply sentences")
    loads = []
    for _ in range(5):
        t = time.process_time()
        lexicon = Lexicon(terms, allow=["确保本月", *terms[:99]])
        loads.append(time.process_time() - t)
    print(f"  load: median {statistics.median(loads) * 1e3:.1f} ms CPU (5 builds)")
    print(f"  {'per sentence':44s} {'median':>8s} {'p99':>8s}  vs none")
    none = cpu_costs(lambda s: None, REPLY, repeat * 20)
    base = statistics.median(none) * 1e6
    print(f"  {'none (the same loop, no check)':44s} {base:8.2f} "
          f"{sorted(none)[int(len(none) * 0.99)] * 1e6:8.2f}")
    base = max(base, 0.01)
    line("Lexicon(10,000 terms).check", cpu_costs(lexicon.check, REPLY, repeat * 20), base)
    rx = alternation(terms)
    line("re alternation of the same terms (raw text)", cpu_costs(rx.search, REPLY, repeat), base)
    hits = [lexicon.check(s) for s in REPLY]
    print(f"  hits: {[(h.term, h.text) for h in hits if h]}")


def matchers(repeat: int) -> None:
    import ahocorasick_rs

    try:
        import ahocorasick  # pyahocorasick, optional
    except ImportError:
        ahocorasick = None
    print("\n(5) phrase matchers: µs per 50-character text (process CPU, median), build ms")
    rng = random.Random(1)
    han = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    for n in (300, 3_000, 10_000):
        phrases = han_terms(n, seed=n)
        texts = ["".join(rng.choice(han) for _ in range(40)) + rng.choice(phrases)
                 + "".join(rng.choice(han) for _ in range(6)) for _ in range(200)]
        row = []
        t = time.process_time()
        ac = ahocorasick_rs.AhoCorasick(phrases, matchkind=ahocorasick_rs.MATCHKIND_STANDARD)
        built = time.process_time() - t
        cost = statistics.median(cpu_costs(
            lambda s, ac=ac: ac.find_matches_as_indexes(s, overlapping=True), texts, repeat))
        row.append(f"ahocorasick-rs {cost * 1e6:7.2f} µs ({built * 1e3:5.1f} ms)")
        t = time.process_time()
        rx = alternation(phrases)
        built = time.process_time() - t
        cost = statistics.median(cpu_costs(rx.findall, texts, max(1, repeat // 4)))
        row.append(f"re {cost * 1e6:8.2f} µs ({built * 1e3:5.1f} ms)")
        if ahocorasick is not None:
            t = time.process_time()
            auto = ahocorasick.Automaton()
            for i, p in enumerate(phrases):
                auto.add_word(p, i)
            auto.make_automaton()
            built = time.process_time() - t
            cost = statistics.median(cpu_costs(lambda s, auto=auto: list(auto.iter(s)),
                                               texts, repeat))
            row.append(f"pyahocorasick {cost * 1e6:7.2f} µs ({built * 1e3:5.1f} ms)")
        print(f"  {n:6d} phrases: " + " | ".join(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rules = IntentRules(i.phrases_for_rules() for i in default_intents())
    screening(screening_corpus.CASES, "tuned corpus")
    screening(screening_corpus.HELD_OUT, "held-out corpus (never tuned on)")
    intents(rules, intent_corpus.CASES, "tuned corpus")
    intents(rules, intent_corpus.HELD_OUT, "held-out corpus (never tuned on)")
    rule_costs(rules, args.repeat)
    lexicon_costs(args.repeat)
    matchers(args.repeat)


if __name__ == "__main__":
    main()
