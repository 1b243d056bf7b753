"""Benchmark the personal-data redactor over the marked corpus: recall, precision, decoys
touched, and CPU microseconds per utterance, beside other detectors run in the same process.

Run from the repository root:

    .venv/bin/python bench/bench_redaction.py
    /tmp/presidio-venv/bin/python bench/bench_redaction.py     # adds Presidio, phonenumbers

The redaction package is pure standard library, so the second venv (Presidio installed there,
never in the project's) imports it from the source tree. Detectors:

    ours            callout_server.redaction.find, default kinds (+ names/addresses: "ours all")
    naive regex     what one writes first: 1[3-9]\\d{9}, \\d{17}[\\dXx], \\d{16,19}, an e-mail regex
    presidio        Presidio's pattern recognizers (PhoneRecognizer for CN, which is Google's
                    phonenumbers matcher; EmailRecognizer; CreditCardRecognizer). No spaCy model
                    can be downloaded here, so no NLP engine: pattern recognizers only. Presidio
                    has no recognizer for Chinese ID numbers.
    ours+phonenumbers
                    our scanner, with phonenumbers validating mobiles and landlines instead of
                    our numbering-plan checks
Timing: process CPU time, median of 7 rounds, variants interleaved in each round; redact()
(detection + pseudonyms, the clean-text cache off) for ours, detection only for the others.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from callout_server.redaction import ALL_KINDS, DEFAULT_KINDS, Redactor, checks, find, numbers
from tests.data.pii_corpus import CORPUS
from tests.data.pii_score import Score, evaluate

Spans = Callable[[str], Iterable[tuple[str, int, int]]]
ROUNDS = 7
KEY = b"bench-key-0123456789abcdef012345"
STRUCTURED = ("mobile", "landline", "id_number", "bank_card", "email")
PHONE = {"mobile": "phone", "landline": "phone"}
# Typical call-log text with nothing personal in it: what the writer redacts most of the time.
CLEAN = (
    "好的，那我明天下午再打给您，您看方便吗？",
    "不需要了，谢谢，我现在在开车。",
    "您好，这里是招商银行信用卡中心，您的账单分期已经办理成功，每期还款三百二十元。",
    "嗯，你说吧，我下午三点以后有空。",
    "我上个月已经还了两千块了，怎么还催？",
    "Sorry, I'm busy right now, could you call back later this afternoon?",
    '{"intent": "callback", "slots": {"time": "明天下午三点以后"}, "confidence": 0.92}',
    "坐席：您好，请问是王先生吗？客户：对，是我。坐席：我这边是平安银行的，想跟您确认一下您上个月"
    "申请的贷款，额度是二十万，分三十六期，您看现在方便吗？客户：嗯，你说吧。",
)
# One NLU record as the call-log writer will hand it over (issue 22, item 3).
RECORD = {
    "utterance": "可以，你打我手机138 7283 7651，下午三点以后",
    "context": [{"role": "assistant", "content": CLEAN[2]}, {"role": "user", "content": CLEAN[3]},
                {"role": "assistant", "content": "请问您方便留一个联系电话吗？"}],
    "decision": {"intent": "callback", "slots": {"phone": "13872837651", "time": "下午三点以后"}},
}


def ours(kinds: frozenset[str]) -> Spans:
    return lambda text: [(f.kind, f.start, f.end) for f in find(text, kinds)]


_NAIVE = (
    ("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")),
    ("id_number", re.compile(r"(?<!\d)\d{17}[\dXx](?!\d)")),
    ("bank_card", re.compile(r"(?<!\d)\d{16,19}(?!\d)")),
    ("mobile", re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)")),
    ("landline", re.compile(r"(?<!\d)0\d{2,3}-?\d{7,8}(?!\d)")),
)


def naive(text: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for kind, pattern in _NAIVE:
        for m in pattern.finditer(text):
            if not any(s < m.end() and m.start() < e for _, s, e in out):
                out.append((kind, m.start(), m.end()))
    return out


def presidio() -> Spans | None:
    try:
        import tldextract
        from presidio_analyzer.predefined_recognizers import (
            CreditCardRecognizer,
            EmailRecognizer,
            PhoneRecognizer,
        )
    except ImportError:
        return None
    # The e-mail recognizer validates domains with tldextract, which fetches the public suffix
    # list from the internet; this machine has none: use the snapshot bundled with tldextract.
    tldextract.extract = tldextract.TLDExtract(suffix_list_urls=())
    recognizers = ((PhoneRecognizer(supported_regions=["CN"]), "PHONE_NUMBER", "phone"),
                   (EmailRecognizer(), "EMAIL_ADDRESS", "email"),
                   (CreditCardRecognizer(), "CREDIT_CARD", "bank_card"))

    def spans(text: str) -> list[tuple[str, int, int]]:
        out = []
        for rec, entity, kind in recognizers:
            out += [(kind, r.start, r.end) for r in rec.analyze(text, [entity], None)]
        return out
    return spans


def with_phonenumbers() -> Callable[[], None] | None:
    """Patch our checks so phonenumbers validates mobiles and landlines; returns the undo."""
    try:
        import phonenumbers
    except ImportError:
        return None
    valid = phonenumbers.is_valid_number
    parse = phonenumbers.parse

    def is_mobile(d: str) -> bool:
        return len(d) == 11 and d[0] == "1" and valid(parse("+86" + d))

    old_mobile, old_landline = checks.is_mobile, numbers._landline

    def landline(body: str, bounds: frozenset[int], cc: str, structured: bool):  # type: ignore[no-untyped-def]
        got = old_landline(body, bounds, cc, structured)
        if got is None or "-" not in got[0]:
            return got
        area, local = got[0].split("-")[:2]
        return got if valid(parse("+86" + area[1:] + local)) else None

    checks.is_mobile, numbers._landline = is_mobile, landline

    def undo() -> None:
        checks.is_mobile, numbers._landline = old_mobile, old_landline
    return undo


def cpu_us(fn: Callable[[str], object], texts: list[str]) -> float:
    start = time.process_time_ns()
    for t in texts:
        fn(t)
    once = max(time.process_time_ns() - start, 1)
    reps = max(1, int(0.15e9 / once))
    start = time.process_time_ns()
    for _ in range(reps):
        for t in texts:
            fn(t)
    return (time.process_time_ns() - start) / (reps * len(texts)) / 1000


def row(name: str, score: Score, kinds: Iterable[str]) -> str:
    cells = []
    for k in kinds:
        ks = score.kinds.get(k)
        if ks is None or (ks.values == 0 and ks.spans == 0):
            cells.append("      n/a      ")
        else:
            precision = f"{100 * ks.precision:5.1f}%" if ks.spans else "    - "
            cells.append(f"{ks.found:>3}/{ks.values:<3} {precision}")
    return f"{name:<18}" + " | ".join(cells) + f" | {score.decoys_touched:>3}"


def header(kinds: Iterable[str]) -> str:
    return f"{'detector':<18}" + " | ".join(f"{k[:15]:^15}" for k in kinds) + " | decoys"


def main() -> None:
    texts = [u.text for u in CORPUS]
    n_values = sum(len(u.values) for u in CORPUS)
    print(f"corpus: {len(CORPUS)} utterances ({sum(u.lang == 'zh' for u in CORPUS)} zh, "
          f"{sum(u.lang == 'en' for u in CORPUS)} en), {n_values} values, "
          f"{sum(len(u.decoys) for u in CORPUS)} decoys; cell = found/values precision")
    print()
    print("ours, per kind")
    kinds = (*STRUCTURED, "name", "address")
    print(header(kinds))
    print(row("ours (default)", evaluate(ours(DEFAULT_KINDS), DEFAULT_KINDS), kinds))
    print(row("ours (all kinds)", evaluate(ours(ALL_KINDS), ALL_KINDS), kinds))
    held = tuple(u for u in CORPUS if u.id.startswith("heldout"))
    print(row("  held-out subset", evaluate(ours(DEFAULT_KINDS), DEFAULT_KINDS, held), kinds))
    print()

    cmp_kinds = ("phone", "id_number", "bank_card", "email")
    detectors: dict[str, Spans] = {"ours": ours(DEFAULT_KINDS), "naive regex": naive}
    p = presidio()
    if p is not None:
        detectors["presidio"] = p
    print("side by side (mobile and landline scored as one 'phone' kind)")
    print(header(cmp_kinds))
    for name, spans in detectors.items():
        print(row(name, evaluate(spans, DEFAULT_KINDS | {"phone"}, kind_map=PHONE), cmp_kinds))
    undo = with_phonenumbers()
    if undo is not None:
        score = evaluate(ours(DEFAULT_KINDS), DEFAULT_KINDS)
        print(row("ours+phonenumbers", evaluate(ours(DEFAULT_KINDS), DEFAULT_KINDS | {"phone"},
                                                kind_map=PHONE), cmp_kinds))
        missed = [m for m in score.misses if m[1] in ("mobile", "landline")]
        with_pn = statistics.median(cpu_us(ours(DEFAULT_KINDS), texts) for _ in range(ROUNDS))
        undo()
        without = statistics.median(cpu_us(ours(DEFAULT_KINDS), texts) for _ in range(ROUNDS))
        print(f"  ours+phonenumbers: misses {missed or 'none'}; find() over the corpus "
              f"{with_pn:.1f} µs vs {without:.1f} µs with our checks")
    if p is None:
        print("(presidio, phonenumbers: not importable in this venv; see the docstring)")
    print()

    r = Redactor(KEY)
    cold = Redactor(KEY, clean_cache=0)  # every text scanned, as on its first sight
    timed: dict[str, Callable[[str], object]] = {"ours redact()": cold.redact,
                                                 "ours find()": ours(DEFAULT_KINDS),
                                                 "naive regex": naive}
    if p is not None:
        timed["presidio"] = p
    sets = {"corpus": texts, "clean": list(CLEAN)}
    results: dict[tuple[str, str], list[float]] = {}
    record: list[float] = []
    record_cold: list[float] = []
    for _ in range(ROUNDS):
        for name, fn in timed.items():
            for set_name, items in sets.items():
                results.setdefault((name, set_name), []).append(cpu_us(fn, items))
        record.append(cpu_us(lambda _t: r.redact_value(RECORD), ["x"]))
        record_cold.append(cpu_us(lambda _t: cold.redact_value(RECORD), ["x"]))
    base = {s: statistics.median(results[("naive regex", s)]) for s in sets}
    print(f"CPU µs per utterance, median of {ROUNDS} rounds (x = ratio to the naive regex)")
    print(f"{'detector':<16}{'corpus':>10}{'x':>7}{'clean':>10}{'x':>7}")
    for name in timed:
        c, k = (statistics.median(results[(name, s)]) for s in sets)
        print(f"{name:<16}{c:>10.1f}{c / base['corpus']:>7.1f}{k:>10.1f}{k / base['clean']:>7.1f}")
    rec_chars = len(str(RECORD))
    print(f"one NLU record (utterance, 3 context messages, decision; {rec_chars} chars, 2 "
          f"mobiles) through redact_value(): {statistics.median(record_cold):.1f} µs, "
          f"{statistics.median(record):.1f} µs with the clean-text cache warm")


if __name__ == "__main__":
    main()
