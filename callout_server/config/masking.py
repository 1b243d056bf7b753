"""API key masking, the contract's rule, as a pure function.

    "gpustack_7f3a9c...f1a2" -> "gpustack_7f3a****f1a2"
    "sk-proj-AbCd...WxYz"    -> "sk-proj-AbCd****WxYz"
    shorter than 12 chars    -> "****"

A vendor prefix is a run of up to three short word segments at the start: letters, perhaps a
two-digit version, then `-` or `_` (`sk-`, `sk-proj-`, `gpustack_`, `sk-ant-api03-`), at most
16 characters. Key material does not look like that (a hex or UUID key has digits inside its
segments), so random characters are never shown as "prefix". The prefix is kept only while
at least four characters stay hidden besides the 4 + 4 shown.
"""

from __future__ import annotations

import re

MASK = "****"
MIN_MASKABLE = 12
_PREFIX = re.compile(r"^(?:[a-z]{2,10}(?:\d{2})?[-_]){1,3}")
_PREFIX_MAX = 16
_SHOWN = 4
_HIDDEN_MIN = 4


def vendor_prefix(key: str) -> str:
    m = _PREFIX.match(key)
    return m.group(0) if m and len(m.group(0)) <= _PREFIX_MAX else ""


def mask_api_key(key: str | None) -> str:
    """The masked form shown on every way out; `""` for no key."""
    if not key:
        return ""
    if len(key) < MIN_MASKABLE:
        return MASK
    prefix = vendor_prefix(key)
    if len(key) - len(prefix) < 2 * _SHOWN + _HIDDEN_MIN:
        prefix = ""
    body = key[len(prefix):]
    return f"{prefix}{body[:_SHOWN]}{MASK}{body[-_SHOWN:]}"
