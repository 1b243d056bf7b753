"""The per-sentence speech guard of a chat session (`guard` on session create).

    guard = SpeechGuard(GuardSpec(lexicons=["finance"], mask_pii=True), book)   # a session's
    run_guard = guard.for_run(note)        # a run's: the lexicons live when the run starts
    batcher = SentenceBatcher(..., clean=run_guard.over(speakable))
    run_guard.ended                        # an `end_turn` hit: say nothing more, end `guarded`
    run_guard.take_altered()               # the segment spoken differs from the model's text

The guard sits in the sentence batcher's `clean` step, so every sentence is checked once,
complete, after it was made speakable and before it is batched: a hit is never spoken. On a
hit the sentence becomes the lexicon's replacement (`replace`), nothing (`drop`: the batcher
skips an empty sentence) or nothing and the end of the turn (`end_turn`: every later
sentence of the run is nothing too). Without a hit, `mask_pii` speaks the phones, ID and
card numbers the model reads out as their last four digits. Each action calls `note(action,
lexicon)` at once, so the turn's `guard` event comes before any later sentence; it never
names the term. The check is one fold and one automaton pass per sentence (bench/README.md).
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import Counter
from pydantic import Field

from callout_server.lexicons.book import CompiledLexicon, LexiconBook, screen
from callout_server.lexicons.mask import mask_pii
from callout_server.lexicons.schemas import MAX_LEXICONS, Name
from callout_server.validation import RequestModel

GUARD_ACTIONS = Counter(
    "callout_chat_guard_actions_total",
    "Sentences the chat guard changed, by lexicon and action (mask_pii: lexicon empty)",
    ["lexicon", "action"])

Note = Callable[[str, str | None], None]  # (action, lexicon)


class GuardSpec(RequestModel):
    """`guard` of `POST /api/chat/sessions`."""

    lexicons: list[Name] = Field(default_factory=list, max_length=MAX_LEXICONS,
                                 description="lexicon names, checked in this order")
    mask_pii: bool = False


class SpeechGuard:
    """A session's guard: which lexicons (by name, resolved at each run) and `mask_pii`."""

    def __init__(self, spec: GuardSpec, book: Callable[[], LexiconBook]) -> None:
        self.spec = spec
        self._book = book

    def for_run(self, note: Note) -> RunGuard:
        return RunGuard(self._book().resolve(self.spec.lexicons), self.spec.mask_pii, note)


class RunGuard:
    """One run's guard: the clean step of its batcher, and what it did."""

    def __init__(self, lexicons: tuple[CompiledLexicon, ...], mask: bool, note: Note) -> None:
        self._lexicons = lexicons
        self._mask = mask
        self._note = note
        self.ended = False
        self._altered = False

    def over(self, clean: Callable[[str], str] | None) -> Callable[[str], str]:
        """`clean`, then the guard: the batcher's clean step."""
        if clean is None:
            return self
        return lambda sentence: self(clean(sentence))

    def __call__(self, sentence: str) -> str:
        if self.ended or not sentence:
            return ""
        verdict = screen(self._lexicons, sentence) if self._lexicons else None
        if verdict is not None:
            self._act(verdict.action, verdict.lexicon)
            if verdict.action == "end_turn":
                self.ended = True
            return verdict.spoken or ""
        if self._mask:
            masked, count = mask_pii(sentence)
            if count:
                self._act("mask_pii", None)
                return masked
        return sentence

    def take_altered(self) -> bool:
        """True when a sentence was changed since the last call (the segment's history then
        keeps what was spoken, not the model's text)."""
        altered, self._altered = self._altered, False
        return altered

    def _act(self, action: str, lexicon: str | None) -> None:
        self._altered = True
        GUARD_ACTIONS.labels(lexicon or "", action).inc()
        self._note(action, lexicon)
