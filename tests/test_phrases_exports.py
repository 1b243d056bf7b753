"""The exact public surface of `callout_server.phrases`: the integration imports only these."""

from __future__ import annotations

import callout_server.phrases as phrases

EXPECTED = {
    "Found", "GlobalIntent", "IntentHit", "IntentPhrases", "IntentRules", "IntentVerdict",
    "Lexicon", "LexiconHit", "Negation", "Normalized", "Pattern", "PhraseBook", "Screening",
    "Stop", "default_intents", "fold", "normalize", "parse", "parse_intents", "screen", "warm",
}


def test_all_is_exact() -> None:
    assert set(phrases.__all__) == EXPECTED
    assert len(phrases.__all__) == len(EXPECTED)


def test_every_name_resolves_and_belongs_to_the_package() -> None:
    for name in phrases.__all__:
        member = getattr(phrases, name)
        assert getattr(member, "__module__", "").startswith("callout_server.phrases"), name
