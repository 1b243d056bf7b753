"""The exact public surface of `callout_server.redaction`: the integration imports only these."""

from __future__ import annotations

import callout_server.redaction as redaction

EXPECTED = {
    "ADDRESS", "ALL_KINDS", "BANK_CARD", "DEFAULT_KINDS", "EMAIL", "ID_NUMBER", "LANDLINE",
    "MAX_CHARS", "MIN_KEY_BYTES", "MOBILE", "NAME", "OPTIONAL_KINDS", "STRUCTURED_KINDS", "Found",
    "Redacted", "RedactedValue", "RedactionError", "Redactor", "find",
}


def test_all_is_exact() -> None:
    assert set(redaction.__all__) == EXPECTED and len(redaction.__all__) == len(EXPECTED)


def test_every_name_resolves_and_belongs_to_the_package() -> None:
    for name in redaction.__all__:
        member = getattr(redaction, name)
        module = getattr(member, "__module__", "callout_server.redaction")
        if isinstance(member, str | frozenset | int):
            continue
        assert module.startswith("callout_server.redaction"), name
