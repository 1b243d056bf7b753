"""Phrase rules over normalised text: call screening, global intents, lexicon matching.

A ground-floor package: it imports nothing of the project (an import contract checks it).
Pure and in memory; the routes, storage and propagation that use it live above it.

    fold, normalize, Normalized, warm            normalize.py   one fold for every use
    PhraseBook, Found, Pattern, parse            matcher.py     many phrases, one automaton
    screen, Screening                            screening.py   who answered (announcements.py)
    IntentRules, IntentPhrases, IntentVerdict,   intents.py     opt_out / complaint / human_agent
      IntentHit, Stop, Negation                                 (negation.py)
    GlobalIntent, default_intents, parse_intents defaults.py    the shipped phrase sets
    Lexicon, LexiconHit                          lexicon.py     speech guard terms

docs/guards.md describes the rules, the normalisation and the data format.
"""

from callout_server.phrases.defaults import GlobalIntent, default_intents, parse_intents
from callout_server.phrases.intents import (
    IntentHit,
    IntentPhrases,
    IntentRules,
    IntentVerdict,
    Stop,
)
from callout_server.phrases.lexicon import Lexicon, LexiconHit
from callout_server.phrases.matcher import Found, Pattern, PhraseBook, parse
from callout_server.phrases.negation import Negation
from callout_server.phrases.normalize import Normalized, fold, normalize, warm
from callout_server.phrases.screening import Screening, screen

__all__ = [
    "Found", "GlobalIntent", "IntentHit", "IntentPhrases", "IntentRules", "IntentVerdict",
    "Lexicon", "LexiconHit", "Negation", "Normalized", "Pattern", "PhraseBook", "Screening",
    "Stop", "default_intents", "fold", "normalize", "parse", "parse_intents", "screen", "warm",
]
