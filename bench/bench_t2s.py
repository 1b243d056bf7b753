"""Traditional -> simplified converters for the text fold: which OpenCC package, measured.

    .venv/bin/python bench/bench_t2s.py

Measures every converter importable in this environment: the official `opencc` binding
(the dependency), and, where installed in a scratch venv of their own (the pure-Python
`opencc-python-reimplemented` installs a module also named `opencc`), the reimplementation
and `opencc-pyo3`. Per converter: import + build time, µs per announcement-sized sentence
(median of 7 rounds, process CPU), and the time to convert the 20,992 CJK unified ideographs
one per line (the per-character table the fold fills lazily).
"""

from __future__ import annotations

import statistics
import time

SAMPLES = ["您撥打的電話已關機，請稍後再撥", "穩賺不賠，保證收益，零風險",
           "Sorry, the number you dialed is power off", "我手机快关机了你快说", "喂你好哪位",
           "這不是空號我就是機主"] * 50


def measure(name: str, build) -> None:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    convert = build()
    setup = time.perf_counter() - t
    chars = "\n".join(chr(c) for c in range(0x4E00, 0xA000))
    t = time.process_time()
    out = convert(chars)
    table = time.process_time() - t
    changed = sum(a != b for a, b in zip(chars.split("\n"), out.split("\n"), strict=False))
    rounds = []
    for _ in range(7):
        t = time.process_time()
        for s in SAMPLES:
            convert(s)
        rounds.append((time.process_time() - t) / len(SAMPLES) * 1e6)
    print(f"{name:32s} build {setup * 1e3:6.1f} ms  sentence {statistics.median(rounds):6.2f} µs  "
          f"table {table * 1e3:6.1f} ms ({changed} characters change)  {convert(SAMPLES[0])}")


def main() -> None:
    try:
        import opencc

        official = hasattr(opencc, "__version__")  # the reimplementation has none
        measure("opencc " + ("(official C++ binding)" if official else "(python reimpl.)"),
                lambda: opencc.OpenCC("t2s").convert)
    except ImportError:
        pass
    try:
        import opencc_pyo3

        measure("opencc-pyo3 (Rust)", lambda: opencc_pyo3.OpenCC("t2s").convert)
    except ImportError:
        pass


if __name__ == "__main__":
    main()
