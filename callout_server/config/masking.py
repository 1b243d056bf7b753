"""API key masking, the contract's rule, as a pure function.

    "gpustack_7f3a9c...f1a2" -> "gpustack_7f3a****f1a2"
    "sk-proj-AbCd...WxYz"    -> "sk-proj-AbCd****WxYz"
    shorter than 12 chars    -> "****"

A vendor prefix is a run of lowercase segments at the start, each starting with a letter
and ending in `-` or `_` (`sk-`, `sk-proj-`, `gpustack_`, `sk-ant-api03-`). It is kept only
while at least four characters stay hidden besides the 4 + 4 shown, so a long prefix can
never turn the mask into the key.
"""

from __future__ import annotations

import re

MASK = "****"
MIN_MASKABLE = 12
_PREFIX = re.compile(r"^(?:[a-z][a-z0-9]{0,15}[-_]){1,4}")
_SHOWN = 4
_HIDDEN_MIN = 4


def vendor_prefix(key: str) -> str:
    m = _PREFIX.match(key)
    return m.group(0) if m else ""


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
