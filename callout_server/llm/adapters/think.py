"""Inline chain-of-thought in answer text: `<think>…</think>` and Kimi's `◁think▷…◁/think▷`.

Servers without a reasoning parser (vLLM/SGLang without `--reasoning-parser`, llama.cpp with
`--reasoning-format none`, some gateways) leave the model's reasoning inside `content`. The
rules (spec/vendors.md, "Inline reasoning leaks"): only text after a closing tag is answer; an
opening tag that never closes means everything after it was reasoning; a closing tag with no
opening tag means everything before it was reasoning (DeepSeek-R1 and Qwen3-*-Thinking-2507
templates put `<think>` into the prompt).

That last shape cannot be recognised while streaming until the closing tag arrives. For model
families known to pre-open the tag (`model_names.preopens_think`), `preopened=True` holds all
content back until the closing tag (or the end: then it was the answer, unless the output was
cut by `length`). For the rest, text is released at once: a late bare closing tag turns only
the text not yet released into reasoning, and `late_close` records that earlier text already
went out as answer.

Whether a vendor's answers may carry inline reasoning at all is its dialect row's
`inline_think`; where they cannot, the adapters pass `tags=False` and no tag is looked for.
"""

from __future__ import annotations

from callout_server.llm.events import ReasoningDelta, TextDelta

OPEN_TAGS: tuple[str, ...] = ("<think>", "◁think▷")
CLOSE_TAGS: tuple[str, ...] = ("</think>", "◁/think▷")
_ALL_TAGS = OPEN_TAGS + CLOSE_TAGS
_TAG_START = ("<", "◁")
_MAX_TAG = max(len(t) for t in _ALL_TAGS)

def _find_any(text: str, tags: tuple[str, ...], start: int = 0) -> tuple[int, str]:
    best, best_tag = -1, ""
    for tag in tags:
        i = text.find(tag, start)
        if i != -1 and (best == -1 or i < best):
            best, best_tag = i, tag
    return best, best_tag


def _strip_tags(text: str) -> str:
    for tag in _ALL_TAGS:
        if tag in text:
            text = text.replace(tag, "")
    return text


def split_think(text: str, *, preopened: bool = False, truncated: bool = False) -> tuple[str, str]:
    """Whole-text split into (reasoning, answer); `truncated` = finish_reason was `length`."""
    if not text or ("<" not in text and "◁" not in text):
        if preopened and truncated:
            return text, ""
        return "", text
    last_close, last_tag = -1, ""
    for tag in CLOSE_TAGS:
        i = text.rfind(tag)
        if i > last_close:
            last_close, last_tag = i, tag
    if last_close != -1:
        return _strip_tags(text[:last_close]), text[last_close + len(last_tag) :].lstrip()
    opened, tag = _find_any(text, OPEN_TAGS)
    if opened != -1:
        # Unclosed: everything was reasoning, nothing may be spoken.
        return _strip_tags(text[opened + len(tag) :]), ""
    if preopened and truncated:
        return text, ""
    return "", text


def _partial_tag_len(text: str) -> int:
    """Length of the longest suffix of `text` that could be the start of a tag."""
    tail = text[-(_MAX_TAG - 1) :]
    if "<" not in tail and "◁" not in tail:
        return 0
    for k in range(min(len(text), _MAX_TAG - 1), 0, -1):
        suffix = text[-k:]
        if suffix[0] in _TAG_START and any(t.startswith(suffix) for t in _ALL_TAGS):
            return k
    return 0


_TEXT, _REASONING, _PREOPENED = 0, 1, 2


class ThinkSplitter:
    """Incremental version of `split_think` for content deltas; `tags=False`: a vendor that
    never puts reasoning in its answer text (only the leading whitespace is dropped)."""

    __slots__ = ("_hold", "_lstrip", "_state", "_tags", "late_close", "released_text", "saw_tag")

    def __init__(self, *, preopened: bool = False, tags: bool = True) -> None:
        self._tags = tags
        self._state = _PREOPENED if preopened and tags else _TEXT
        self._hold = ""  # a possible tag prefix, or (preopened) everything so far
        self._lstrip = True  # drop whitespace before the answer's first character
        self.late_close = False
        self.released_text = False
        self.saw_tag = False

    def feed(self, chunk: str) -> list[TextDelta | ReasoningDelta]:
        out: list[TextDelta | ReasoningDelta] = []
        if not chunk:
            return out
        buf = self._hold + chunk if self._hold else chunk
        self._hold = ""
        # Fast path: plain answer text with no tag character anywhere.
        if not self._tags or (self._state == _TEXT and "<" not in buf and "◁" not in buf):
            self._text(buf, out)
            return out
        while buf:
            if self._state == _REASONING:
                i, tag = _find_any(buf, CLOSE_TAGS)
                if i == -1:
                    k = _partial_tag_len(buf)
                    self._reason(buf[: len(buf) - k], out)
                    self._hold = buf[len(buf) - k :]
                    return out
                self._reason(buf[:i], out)
                buf = buf[i + len(tag) :]
                self._state, self._lstrip = _TEXT, True
            elif self._state == _PREOPENED:
                i, tag = _find_any(buf, CLOSE_TAGS)
                if i == -1:
                    self._hold = buf  # undecided until a closing tag or the end
                    return out
                self.saw_tag = True
                self._reason(_strip_tags(buf[:i]), out)
                buf = buf[i + len(tag) :]
                self._state, self._lstrip = _TEXT, True
            else:
                o, otag = _find_any(buf, OPEN_TAGS)
                c, ctag = _find_any(buf, CLOSE_TAGS)
                if o == -1 and c == -1:
                    k = _partial_tag_len(buf)
                    self._text(buf[: len(buf) - k], out)
                    self._hold = buf[len(buf) - k :]
                    return out
                self.saw_tag = True
                if o != -1 and (c == -1 or o < c):
                    self._text(buf[:o], out)
                    buf = buf[o + len(otag) :]
                    self._state = _REASONING
                else:
                    # Closing tag without an opening one: what precedes it was reasoning.
                    if self.released_text:
                        self.late_close = True
                    self._reason(buf[:c], out)
                    buf = buf[c + len(ctag) :]
                    self._lstrip = True
        return out

    def close(self, *, truncated: bool = False) -> list[TextDelta | ReasoningDelta]:
        """End of content; `truncated` = the output was cut by the token budget."""
        out: list[TextDelta | ReasoningDelta] = []
        hold, self._hold = self._hold, ""
        if not hold:
            return out
        if self._state == _REASONING:
            self._reason(hold, out)
        elif self._state == _PREOPENED:
            # No closing tag arrived: decide on the whole text, as the non-streamed path does.
            reasoning, answer = split_think(hold, preopened=True, truncated=truncated)
            self._reason(reasoning, out)
            self._text(answer, out)
        else:
            self._text(hold, out)  # a lone "<" or similar that never became a tag
        return out

    def _text(self, s: str, out: list[TextDelta | ReasoningDelta]) -> None:
        if self._lstrip:
            s = s.lstrip()
            if not s:
                return
            self._lstrip = False
        if s:
            self.released_text = True
            out.append(TextDelta(s))

    @staticmethod
    def _reason(s: str, out: list[TextDelta | ReasoningDelta]) -> None:
        if s:
            out.append(ReasoningDelta(s))
