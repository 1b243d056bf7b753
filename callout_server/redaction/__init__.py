"""Customers' personal data out of stored text: the detector and the redactor.

A ground-floor package: pure functions, no I/O, imports nothing of the project (the import
contract `redaction-ground-floor` holds it). Public surface:

    Redactor, Redacted, RedactedValue, MIN_KEY_BYTES, MAX_CHARS   (redactor.py)
    find, Found                                                    (detect.py)
    RedactionError                                                 (errors.py)
    MOBILE, LANDLINE, ID_NUMBER, BANK_CARD, EMAIL, NAME, ADDRESS,
    DEFAULT_KINDS, STRUCTURED_KINDS, OPTIONAL_KINDS, ALL_KINDS     (kinds.py)

docs/privacy.md describes the kinds, what stays as said, and the pseudonyms.
"""

from callout_server.redaction.detect import Found, find
from callout_server.redaction.errors import RedactionError
from callout_server.redaction.kinds import (
    ADDRESS,
    ALL_KINDS,
    BANK_CARD,
    DEFAULT_KINDS,
    EMAIL,
    ID_NUMBER,
    LANDLINE,
    MOBILE,
    NAME,
    OPTIONAL_KINDS,
    STRUCTURED_KINDS,
)
from callout_server.redaction.redactor import (
    MAX_CHARS,
    MIN_KEY_BYTES,
    Redacted,
    RedactedValue,
    Redactor,
)

__all__ = [
    "ADDRESS",
    "ALL_KINDS",
    "BANK_CARD",
    "DEFAULT_KINDS",
    "EMAIL",
    "ID_NUMBER",
    "LANDLINE",
    "MAX_CHARS",
    "MIN_KEY_BYTES",
    "MOBILE",
    "NAME",
    "OPTIONAL_KINDS",
    "STRUCTURED_KINDS",
    "Found",
    "Redacted",
    "RedactedValue",
    "RedactionError",
    "Redactor",
    "find",
]
