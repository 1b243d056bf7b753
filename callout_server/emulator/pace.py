"""How fast the stock chat reply streams: a real model's pace, so barge-in can be shown.

A fast emulator answers the stock reply (``textgen.DEFAULT_ANSWER``, 41 tokens) in a few
milliseconds, before anyone could press 打断 or call ``cancel``. Streamed, unscripted chat
replies therefore come at :data:`DEFAULT` pace: 300 ms to the first token, then 40 ms per
chunk (25 tokens/s, a hosted model under load, a 27B model on one GPU), about 2 s for the
whole reply. Only that reply: scripted replies keep their own timing (``ttft_ms`` and
``token_delay_ms``, 0 when not given), and NLU decisions, scripts, JSON answers,
non-streamed calls and a stock reply with reasoning (thinking on: its 600 reasoning
tokens would take 24 s at this pace) are as fast as ever.

Asking for speed: a script that sets ``"token_delay_ms": 0`` (and ``"ttft_ms": 0``) for its
model, or the whole process started with ``--chat-ttft-ms 0 --chat-token-ms 0`` (benchmarks).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace

from callout_server.emulator.scripts import Reply


@dataclass(frozen=True, slots=True)
class ChatPace:
    ttft_ms: float = 300.0
    token_ms: float = 40.0

    def applied_to(self, reply: Reply) -> Reply:
        """`reply` with this pace where its script left the timing unset."""
        ttft = reply.ttft_ms if "ttft_ms" in reply.given else self.ttft_ms
        delay = reply.token_delay_ms if "token_delay_ms" in reply.given else self.token_ms
        if (ttft, delay) == (reply.ttft_ms, reply.token_delay_ms):
            return reply
        return replace(reply, ttft_ms=ttft, token_delay_ms=delay)


DEFAULT = ChatPace()


def add_pace_arguments(parser: argparse.ArgumentParser) -> None:
    """The stock chat reply's pace (``pace.py``); also offered by ``callout-server emulator``."""
    parser.add_argument("--chat-ttft-ms", type=float, default=DEFAULT.ttft_ms,
                        metavar="MS", help="time to the first token of the stock streamed chat "
                                           f"reply (default {DEFAULT.ttft_ms:g}; 0 = at once)")
    parser.add_argument("--chat-token-ms", type=float, default=DEFAULT.token_ms,
                        metavar="MS", help="delay between its chunks (default "
                                           f"{DEFAULT.token_ms:g}, 25 tokens/s; 0 = "
                                           "as fast as possible, for benchmarks)")
