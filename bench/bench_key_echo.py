"""What cleaning the key out of model text costs per answer and per delta (llm/key_echo.py).

    .venv/bin/python bench/bench_key_echo.py

Against a baseline of one `in` check (`secret in text`), alternated in rounds so that load
on a shared machine hits both alike; medians of the rounds, in microseconds.
"""

from __future__ import annotations

import statistics
import timeit

from callout_server.llm.key_echo import KeyEcho, clean_text
from callout_server.llm.masking import secret_part

KEY = "sk-proj-Q7fZ2mK9xW4pL8vR1tY6nB3cD5hJ0gS"
NLU = ('{"intent":"agree","confidence":0.92,"slots":{"time":"明天下午三点以后",'
       '"amount":"5000"},"reason":"客户说可以，明天下午三点以后还款"}')
EN = ('{"intent":"agree","confidence":0.92,"slots":{"time":"tomorrow afternoon"},'
      '"reason":"The customer agreed to pay tomorrow afternoon"}')
DELTAS = ["好的，", "我帮您", "查一下", "这个问题", "。"] * 20
N = 20_000


def _round() -> dict[str, float]:
    secret = secret_part(KEY)
    out = {}
    for name, text in (("nlu_zh", NLU), ("nlu_en", EN)):
        out[f"{name} baseline (one in)"] = timeit.timeit(lambda t=text: secret in t, number=N)
        out[f"{name} clean_text"] = timeit.timeit(lambda t=text: clean_text(t, KEY), number=N)

    def stream() -> None:
        echo = KeyEcho(KEY)
        for d in DELTAS:
            echo.push(d)
        echo.flush()

    def baseline_stream() -> None:
        for d in DELTAS:
            _ = secret in d

    out["chat 100 deltas baseline"] = timeit.timeit(baseline_stream, number=N // 10) * 10
    out["chat 100 deltas KeyEcho"] = timeit.timeit(stream, number=N // 10) * 10
    return {k: v / N * 1e6 for k, v in out.items()}


def main() -> None:
    rounds = [_round() for _ in range(7)]
    for name in rounds[0]:
        print(f"{name:32s} {statistics.median(r[name] for r in rounds):8.2f} us")


if __name__ == "__main__":
    main()
