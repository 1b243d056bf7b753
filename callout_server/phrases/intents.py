"""Global intent rules: does this utterance say what overrides the node (stop calling me, a
complaint, asking for a person), by which phrase, and if not, what stopped it.

    rules = IntentRules([IntentPhrases("opt_out", ("别再*打电话", "!下周再打", ...)), ...])
    verdict = rules.check("你们别再给我打电话了")
    verdict.hit -> IntentHit(intent="opt_out", phrase="别再*打电话", start=2, end=9, text=...)
    rules.check("不用转人工你说吧").stopped
        -> (Stop(intent="human_agent", phrase="转人工", reason="negated", cue="不用", ...),)

The phrase lists are data (the defaults ship in `data/global_intents.toml`; operators edit
their own): a phrase is literal text, `*` stands for up to `matcher.GAP` tokens in the same
clause, and a phrase written `!...` is a context that stops the intent wherever it appears in
the utterance (`!下周再打`: "call me next week" is a callback, not a do-not-call request).

A hit is stopped when
- a negation cue comes shortly before it in its clause, or shortly after it (`negation.py`):
  我不投诉就问问, 不用转人工你说吧, 转人工就不用了; cues inside a phrase of any intent
  (`不要再打了`) or inside a word that negates nothing (`不好意思`) do not count;
- a context phrase of its intent is in the utterance (`reason="context"`).
Nothing else is inferred: what no phrase covers is no hit (不需要 is a refusal of the offer,
for the node to handle), and the integration asks the model.

When several intents hit, the first in the list given wins (the defaults put `opt_out` first:
a do-not-call request is the one with legal weight); `hits` has all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from callout_server.phrases import negation as neg
from callout_server.phrases.matcher import Found, PhraseBook
from callout_server.phrases.normalize import Normalized, fold, normalize

CONTEXT_PREFIX = "!"
_BEFORE, _AFTER, _NOT_NEG = "\0before", "\0after", "\0not_negation"  # never an intent name


@dataclass(frozen=True, slots=True)
class IntentPhrases:
    """An intent's name and its phrases (`!` marks a context phrase)."""

    name: str
    phrases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IntentHit:
    """An intent taken: the phrase as written and where it was said
    (`utterance[start:end] == text`)."""

    intent: str
    phrase: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Stop:
    """A phrase that matched but did not count, and the cue that stopped it."""

    intent: str
    phrase: str
    start: int
    end: int
    reason: Literal["negated", "context"]
    cue: str  # the negation cue or context phrase as written
    cue_start: int
    cue_end: int


@dataclass(frozen=True, slots=True)
class IntentVerdict:
    hit: IntentHit | None  # the winning intent, None when no phrase counted
    hits: tuple[IntentHit, ...]  # one per intent that hit, in the intents' order
    stopped: tuple[Stop, ...]  # the matched phrases that did not count, in text order


NOTHING = IntentVerdict(None, (), ())


class IntentRules:
    """Intents and their phrases compiled once; `check` is pure and thread-safe."""

    def __init__(self, intents: Iterable[IntentPhrases],
                 negation: neg.Negation = neg.DEFAULT) -> None:
        self.order: list[str] = []
        entries: list[tuple[str, str]] = []
        for intent in intents:
            if intent.name in self.order:
                raise ValueError(f"intent {intent.name!r} is listed twice")
            self.order.append(intent.name)
            for phrase in intent.phrases:
                if phrase.startswith(CONTEXT_PREFIX):
                    entries.append((_context(intent.name), phrase[len(CONTEXT_PREFIX):]))
                else:
                    entries.append((intent.name, phrase))
        entries += [(_BEFORE, c) for c in negation.before]
        entries += [(_AFTER, c) for c in negation.after]
        entries += [(_NOT_NEG, c) for c in negation.not_negation]
        self._book = PhraseBook(entries, wildcards=True)
        # Literals that begin an intent's own phrase: a text with none of them (only negation
        # cues, context phrases, or nothing) can have no hit and no stop.
        self._openers = self._book.openers(set(self.order))
        #: (intent, phrase) pairs that fold to nothing and can never match
        self.ignored = [(label.removeprefix("\0context:"), text)
                        for label, text in self._book.ignored]

    def check(self, utterance: str) -> IntentVerdict:
        # Most utterances name no intent: one C-speed fold and scan says so, before the
        # character-by-character normalisation the checks need (fold == normalize().text).
        openers = self._openers
        if not any(lit in openers for lit, _, _ in self._book.scan(fold(utterance))):
            return NOTHING
        return self.verdict(utterance)

    def verdict(self, utterance: str) -> IntentVerdict:
        """`check` without its pre-check: every phrase looked at (tests compare the two)."""
        norm = normalize(utterance)
        found = self._book.search(norm)
        if not found:
            return NOTHING
        by_label: dict[str, list[Found]] = {}
        for f in found:
            by_label.setdefault(f.pattern.label, []).append(f)
        phrases = [f for name in self.order for f in by_label.get(name, ())]
        cues = _real_cues(by_label, phrases)
        hits: list[IntentHit] = []
        stopped: list[Stop] = []
        for name in self.order:
            context = by_label.get(_context(name), ())
            taken, shown = None, []
            for f in by_label.get(name, ()):
                stop = _stopper(norm, f, cues, context)
                if stop is None:
                    taken = taken or f
                elif not any(f.overlaps(g) for g in shown):  # one stop per place said
                    shown.append(f)
                    stopped.append(_stop(norm, name, f, *stop))
            if taken is not None:
                start, end = norm.span(taken.start, taken.end)
                hits.append(IntentHit(name, taken.pattern.text, start, end, utterance[start:end]))
        stopped.sort(key=lambda s: s.start)
        return IntentVerdict(hits[0] if hits else None, tuple(hits), tuple(stopped))


def _context(name: str) -> str:
    return "\0context:" + name


def _real_cues(by_label: dict[str, list[Found]],
               phrases: Sequence[Found]) -> dict[str, list[Found]]:
    """Negation cues that negate: not inside a phrase match, not part of a word that
    negates nothing."""
    plain_words = by_label.get(_NOT_NEG, ())

    def counts(cue: Found) -> bool:
        return not any(p.start <= cue.start and cue.end <= p.end for p in phrases) \
            and not any(w.overlaps(cue) for w in plain_words)

    return {kind: [c for c in by_label.get(kind, ()) if counts(c)] for kind in (_BEFORE, _AFTER)}


def _stopper(norm: Normalized, f: Found, cues: dict[str, list[Found]],
             context: Sequence[Found]) -> tuple[Literal["negated", "context"], Found] | None:
    for c in cues[_BEFORE]:
        if c.end <= f.start and not norm.clause_break(c.end - 1, f.start + 1) \
                and norm.tokens_between(c.end, f.start) <= neg.BEFORE_TOKENS:
            return "negated", c
    for c in cues[_AFTER]:
        if c.start >= f.end and norm.tokens_between(f.end, c.start) <= neg.AFTER_TOKENS:
            return "negated", c
    if context:
        return "context", context[0]
    return None


def _stop(norm: Normalized, name: str, f: Found, reason: Literal["negated", "context"],
          cue: Found) -> Stop:
    start, end = norm.span(f.start, f.end)
    cue_start, cue_end = norm.span(cue.start, cue.end)
    return Stop(name, f.pattern.text, start, end, reason, cue.pattern.text, cue_start, cue_end)
