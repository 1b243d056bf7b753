"""Personal data a model reads out, spoken as its last four digits (the guard's `mask_pii`).

    mask_pii("您的手机号是13800138000，请核对")  -> ("您的手机号是尾号8000，请核对", 1)

The detector is the data-protection one (`callout_server.redaction.find`): mobiles,
landlines, ID numbers and bank cards, checked by format and checksum. The words around the
digits follow the sentence's script (尾号 in Chinese, "ending in" otherwise).
"""

from __future__ import annotations

from callout_server.i18n import text
from callout_server.redaction import BANK_CARD, ID_NUMBER, LANDLINE, MOBILE, find

KINDS = frozenset({MOBILE, LANDLINE, ID_NUMBER, BANK_CARD})


def mask_pii(sentence: str) -> tuple[str, int]:
    """The sentence with every number of `KINDS` as its last four digits, and how many."""
    found = find(sentence, KINDS)
    if not found:
        return sentence, 0
    locale = "zh" if any(ch >= "\u2e80" for ch in sentence) else "en"
    out: list[str] = []
    at = 0
    for f in found:
        out.append(sentence[at:f.start])
        out.append(text("pii_last4", locale, last4=f.last4))
        at = f.end
    out.append(sentence[at:])
    return "".join(out), len(found)
