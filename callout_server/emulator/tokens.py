"""The emulator's token model: usage is counted from the text actually produced.

Roughly what BPE tokenizers do for the languages a call center speaks: one token per CJK
character (everything from U+2E80 up, full-width punctuation included) and one token per up
to 4 other characters (~4 characters per token for Latin text). A stream piece is one such
token, so "N tokens" and "N streamed chunks" agree and cutting to a budget is slicing a list.
"""

from __future__ import annotations

import re

_PIECE = re.compile(r"[\u2e80-\U0010ffff]|[^\u2e80-\U0010ffff]{1,4}")

#: Chat-template framing around the messages (role markers, the assistant header).
PROMPT_OVERHEAD = 4


def pieces(text: str) -> list[str]:
    """Split ``text`` into ~1-token pieces (the streaming unit)."""
    return _PIECE.findall(text) if text else []


def count_tokens(text: str) -> int:
    """Fast approximation for prompts: UTF-8 length tells wide characters apart in C."""
    if not text:
        return 0
    n = len(text)
    wide = (len(text.encode()) - n) // 2
    return wide + (n - wide + 3) // 4


def prompt_tokens(prompt: str) -> int:
    return count_tokens(prompt) + PROMPT_OVERHEAD
