"""Sentence splitting for speech: the rules, whole-text and incremental.

    split_sentences(text)   whole text -> sentences (the reference behaviour)
    SentenceSplitter        the same rules fed piece by piece; O(new text) per push
    join_sentences(parts)   CJK joined with no space, everything else with one space

What to send to TTS when (first sentence at once, first-clause cut, batches) is a policy on
top of these rules: `sentence_batcher.SentenceBatcher`.

No model, no data download (NLTK punkt cannot be fetched here and pysbd costs milliseconds
per call): a character scanner with a few English heuristics, in the spirit of livekit's
`tokenize/_basic_sent.py`, but incremental rather than re-splitting the buffer per token.

Boundaries:
- CJK marks 。！？；… and their runs (？！, ……), closing quotes/brackets kept with the
  sentence, no space needed after them. `!`/`?`/`…` right after a CJK character count too.
- A line break ends a sentence (list items and headings often carry no punctuation).
- English `.`/`!`/`?` end a sentence only before whitespace, a CJK character or the end:
  `3.5`, `e.g.`, `U.S.`, `example.com`, `a.b@c.com`, `?q=1` never split. A `.` is not a
  boundary after a title (`Mr.`, `Dr.`), a list number at line start (`1. item`), or before a
  lowercase word; after `etc.`, `Inc.`, `a.m.`, `U.S.` or an initial it is one only when a
  common sentence starter follows (`He`, `The`, `I` ...).

Streaming (when is a boundary decided?):
- A CJK mark at the very end of the buffer is a boundary at once: CJK marks never occur
  inside numbers, abbreviations or URLs, so waiting only costs latency. Exceptions, where we
  wait one character: while a quote/bracket (“ 「 （ ...) is open, so its closer joins the
  sentence; and after an ellipsis, which usually comes as "……".
  Marks or closers that still arrive after such an eager cut (`？` then `！`) are returned as
  a `tail` for the caller to append to the sentence it still holds.
- An English `.`/`!`/`?` always waits for the next character: it cannot be told apart from
  `3.5`, `example.com`, `?q=` before that. A plain `word.` is decided by the space after it;
  `...`, `."` and abbreviations also look at the next word (`U.S. Army` vs `U.S. The`,
  `Well... maybe`). That costs a token of latency on English text, never a wrong split.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

_FULL_TERMINALS = frozenset("。！？；｡")
_SOFT_CJK_TERMINALS = frozenset("…⋯!?")  # CJK-type only right after a CJK character
_TERMINALS = frozenset(".!?…⋯") | _FULL_TERMINALS
_CLOSERS = frozenset("\"'”’」』）)]】》〉〕｝}＂＇")
_PAIRS_OPEN = frozenset("“‘「『（(【《〈〔")
_PAIRS_CLOSE = frozenset("”’」』）)】》〉〕")
_CLAUSE = frozenset("，、：")
_MAX_LOOKAHEAD = 16  # whitespace run after a `.` beyond which we stop waiting

# `.` after these never ends a sentence: a name or a continuation always follows.
_NEVER = frozenset(
    "mr mrs ms dr prof mt gen col capt lt sgt rev hon gov sen rep pres messrs mme mlle "
    "vs e.g i.e cf viz approx fig eq".split()
)
# `.` after these ends a sentence only before a common sentence starter.
_GATED = frozenset(
    "etc inc ltd co corp jr sr st no nos dept est vol al a.m p.m ph.d jan feb apr jun "
    "jul aug sep sept oct nov dec".split()
)
_STARTERS = frozenset(
    "i i'm i'll i've i'd he she it it's they we you the this that these those there here "
    "but however so and then what when where why how if in on at a an my our your their its "
    "please thank thanks yes no ok okay let let's for after before also".split()
)
_MAX_STARTER = max(len(w) for w in _STARTERS)
_INITIALISM = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]|[A-Z]")


def is_cjk(ch: str) -> bool:
    """Han, kana, hangul, CJK punctuation and full-width forms: text written without spaces."""
    o = ord(ch)
    return (
        0x2E80 <= o <= 0x9FFF
        or 0xAC00 <= o <= 0xD7AF
        or 0xF900 <= o <= 0xFAFF
        or 0xFE30 <= o <= 0xFE4F
        or 0xFF00 <= o <= 0xFFEF
        or 0x20000 <= o <= 0x2FA1F
    )


def join_sentences(parts: Iterable[str]) -> str:
    """Join sentences the way they are read: no space at a CJK seam, one space otherwise."""
    out = ""
    for part in parts:
        if out and not (is_cjk(out[-1]) or is_cjk(part[0])):
            out += " "
        out += part
    return out


class Split(NamedTuple):
    tail: str  # marks/closers that belong to the sentence cut eagerly on the previous push
    sentences: list[str]


class _Decision(NamedTuple):
    kind: int  # _SPLIT, _NO or _WAIT
    end: int  # _SPLIT: end of the sentence; _NO: where to resume scanning


_SPLIT, _NO, _WAIT = 0, 1, 2


class SentenceSplitter:
    """Incremental sentence splitter: `push` returns the sentences completed by a delta.

    Only text after the last decided position is examined on a push (plus a bounded look-ahead
    for a pending `.`); the buffer holds just the unfinished sentence.
    """

    def __init__(self) -> None:
        self.track_clauses = True
        self._reset()

    def _reset(self) -> None:
        self._buf = ""
        self._start = 0  # start of the unfinished sentence in _buf
        self._pos = 0  # next index to examine; everything before it is decided
        self._depth = 0  # open CJK quotes/brackets; a closer is awaited while > 0
        self._eager = False  # the last push ended with a cut at the buffer end
        self._eager_closed = False  # ... and that sentence already ends with a closer
        self._clauses: list[int] = []  # end offsets of clause marks in the current sentence

    @property
    def pending(self) -> str:
        """The unfinished sentence (not yet returned)."""
        return self._buf[self._start :]

    def push(self, delta: str) -> Split:
        tail = ""
        if self._eager and delta:
            # Same grammar as a boundary run: marks, then closers; nothing after a closer.
            k = 0
            while k < len(delta):
                ch = delta[k]
                if ch in _CLOSERS:
                    self._eager_closed = True
                elif ch not in _TERMINALS or self._eager_closed:
                    break
                k += 1
            tail, delta = delta[:k], delta[k:]
            self._close_pairs(tail)
            if not delta:
                return Split(tail, [])
            self._eager = False
        if not delta:
            return Split(tail, [])
        # Local concatenation lets CPython grow the string in place instead of copying it.
        buf = self._buf
        self._buf = ""
        buf += delta
        self._buf = buf
        return Split(tail, self._scan(final=False))

    def finish(self) -> list[str]:
        """End of text: decide what was waiting, return the rest; the splitter is reusable."""
        out = self._scan(final=True)
        rest = self._buf[self._start :].strip()
        if rest:
            out.append(rest)
        self._reset()
        return out

    def cut_clause(self, min_chars: int) -> str | None:
        """Cut the unfinished sentence after the first clause mark (，、：) that ends at least
        `min_chars` characters in; None when there is none yet."""
        for end in self._clauses:
            if end - self._start < min_chars:
                continue
            text = self._buf[self._start : end].strip()
            if len(text) >= min_chars:
                self._start = end
                self._clauses = [c for c in self._clauses if c > end]
                self._trim()
                return text
        return None

    # -- scanning -------------------------------------------------------------------------

    def _scan(self, *, final: bool) -> list[str]:
        buf, out = self._buf, []
        n, i = len(buf), self._pos
        self._eager = False
        while i < n:
            c = buf[i]
            if c == "\n":
                self._cut(out, i, i + 1)
                self._depth = 0  # an unbalanced quote must not disable eager cuts forever
                i += 1
                continue
            if c in _TERMINALS:
                d = self._decide(buf, i, final)
                if d.kind == _WAIT:
                    break
                if d.kind == _SPLIT:
                    self._close_pairs(buf[i : d.end])
                    self._cut(out, d.end, d.end)
                    self._eager = d.end == n and not final
                    self._eager_closed = buf[d.end - 1] in _CLOSERS
                    i = d.end
                    continue
                i = d.end  # not a boundary: closers after the run are scanned normally
                continue
            if c in _PAIRS_OPEN:
                self._depth += 1
            elif c in _PAIRS_CLOSE:
                self._depth = max(0, self._depth - 1)
            elif self.track_clauses and (
                c in _CLAUSE or (c in ",:" and i > self._start and is_cjk(buf[i - 1]))
            ):
                self._clauses.append(i + 1)
            i += 1
        self._pos = i
        self._trim()
        return out

    def _decide(self, buf: str, i: int, final: bool) -> _Decision:
        n = len(buf)
        k = i
        while k < n and buf[k] in _TERMINALS:
            k += 1
        j = k
        while j < n and buf[j] in _CLOSERS:
            j += 1
        run = buf[i:k]
        prev = buf[i - 1] if i > self._start else ""
        cjk_type = any(ch in _FULL_TERMINALS for ch in run) or (
            # judged on the first mark only, as a stream sees it: later marks join as a tail
            bool(prev) and is_cjk(prev) and run[0] in _SOFT_CJK_TERMINALS
        )
        if j == n:
            if final:
                return _Decision(_SPLIT, n)
            # Eager (see module docstring), but not after an ellipsis: "…" usually comes
            # as "……", and a second half arriving late would be lost from a sent chunk.
            if cjk_type and run[-1] not in "…⋯" and self._depth_after(buf[k:j]) == 0:
                return _Decision(_SPLIT, n)
            return _Decision(_WAIT, i)
        if cjk_type:
            return _Decision(_SPLIT, j)
        nxt = buf[j]
        if "!" in run or "?" in run:
            if nxt.isspace() or is_cjk(nxt):
                return _Decision(_SPLIT, j)
            return _Decision(_NO, k)  # `?q=1`, `Yahoo!Mail`
        return self._decide_dot(buf, i, j, k, final)

    def _decide_dot(self, buf: str, i: int, j: int, k: int, final: bool) -> _Decision:
        """A run of `.`/`…` followed by something at buf[j]."""
        n = len(buf)
        ws, word = self._word_before(buf, i)
        lw = word.lower()
        if word.isdigit() and len(word) <= 3 and self._at_line_start(buf, ws):
            return _Decision(_NO, k)  # numbered list item: "1. Call us"
        if lw in _NEVER:
            return _Decision(_NO, k)
        nxt = buf[j]
        if is_cjk(nxt):
            return _Decision(_SPLIT, j)
        if not nxt.isspace():
            return _Decision(_NO, k)  # 3.5, e.g, example.com
        gated = lw in _GATED or _INITIALISM.fullmatch(word) is not None
        if k - i == 1 and buf[i] == "." and j == k and not gated:
            return _Decision(_SPLIT, j)  # a plain "word. ": no need to see the next word
        m = j
        while m < n and buf[m].isspace() and buf[m] != "\n":
            m += 1
        if m < n and buf[m] == "\n":
            return _Decision(_SPLIT, j)
        if m == n:
            if final or m - j > _MAX_LOOKAHEAD:
                return _Decision(_SPLIT, j)
            return _Decision(_WAIT, i)
        if buf[m].islower():
            return _Decision(_NO, k)  # "3 p.m. tomorrow", "Well... maybe", '"Hi." he said'
        if gated:
            e = m
            while e < n and (buf[e].isalpha() or buf[e] == "'"):
                e += 1
            if e == n and not final and e - m <= _MAX_STARTER:
                return _Decision(_WAIT, i)
            if buf[m:e].lower() in _STARTERS:
                return _Decision(_SPLIT, j)
            return _Decision(_NO, k)
        return _Decision(_SPLIT, j)

    def _word_before(self, buf: str, i: int) -> tuple[int, str]:
        """The Latin token right before index i (bounded look-back), leading punctuation off."""
        s = i
        while (
            s > self._start and i - s < 32 and not buf[s - 1].isspace() and not is_cjk(buf[s - 1])
        ):
            s -= 1
        while s < i and not buf[s].isalnum():
            s += 1
        return s, buf[s:i]

    def _at_line_start(self, buf: str, s: int) -> bool:
        p = s - 1
        while p >= self._start and buf[p] in " \t":
            p -= 1
        return p < self._start or buf[p] in ":：" or is_cjk(buf[p])

    def _depth_after(self, closers: str) -> int:
        return max(0, self._depth - sum(1 for ch in closers if ch in _PAIRS_CLOSE))

    def _close_pairs(self, text: str) -> None:
        self._depth = self._depth_after(text)

    def _cut(self, out: list[str], end: int, next_start: int) -> None:
        sentence = self._buf[self._start : end].strip()
        if sentence:
            out.append(sentence)
        self._start = next_start
        self._clauses.clear()

    def _trim(self) -> None:
        # Drop returned text so the buffer (and the concatenation in push) stays one sentence.
        s = self._start
        if s:
            self._buf = self._buf[s:]
            self._pos -= s
            self._clauses = [c - s for c in self._clauses]
            self._start = 0


def split_sentences(text: str) -> list[str]:
    """Split a whole text; the streaming splitter gives the same sentences piece by piece."""
    splitter = SentenceSplitter()
    splitter.track_clauses = False
    return splitter.push(text).sentences + splitter.finish()
