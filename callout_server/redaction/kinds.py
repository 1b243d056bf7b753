"""The kinds of personal data the redactor knows, and which are on by default.

Structured kinds (checked by format and checksum, on by default): `mobile`, `landline`,
`id_number`, `bank_card`, `email`. Optional kinds (free text, found by cue words, off by
default because their precision is lower): `name`, `address`.
"""

from __future__ import annotations

MOBILE = "mobile"
LANDLINE = "landline"
ID_NUMBER = "id_number"
BANK_CARD = "bank_card"
EMAIL = "email"
NAME = "name"
ADDRESS = "address"

STRUCTURED_KINDS: frozenset[str] = frozenset({MOBILE, LANDLINE, ID_NUMBER, BANK_CARD, EMAIL})
OPTIONAL_KINDS: frozenset[str] = frozenset({NAME, ADDRESS})
ALL_KINDS: frozenset[str] = STRUCTURED_KINDS | OPTIONAL_KINDS
DEFAULT_KINDS: frozenset[str] = STRUCTURED_KINDS
NUMBER_KINDS: frozenset[str] = frozenset({MOBILE, LANDLINE, ID_NUMBER, BANK_CARD})


def check_kinds(kinds: frozenset[str] | set[str] | tuple[str, ...] | list[str]) -> frozenset[str]:
    """`kinds` as a frozenset; ValueError naming the unknown ones (a configuration error)."""
    chosen = frozenset(kinds)
    unknown = chosen - ALL_KINDS
    if unknown:
        raise ValueError(f"unknown redaction kinds: {sorted(unknown)}; known: {sorted(ALL_KINDS)}")
    return chosen
