"""A stored configuration's API key: the one decrypt, the mask, and the rules of a write.

    stored_key(secrets, row)      the key in clear ("" for none); SecretDecryptError
    masked_key(secrets, row)      what a reader sees (MASK when it cannot be decrypted)
    key_would_follow(...)         a write that would send a stored key to a new host
    apply_key(...)                PUT's rule: omitted/null/masked keeps, "" clears, else sets

The key never leaves this module in clear except to build the configuration a call runs
with (`snapshot.row_to_config`); views, revisions and the audit trail see only the mask
or what happened to it ("set", "replaced", "cleared").
"""

from __future__ import annotations

from typing import Any

from callout_server.config.models import LLMConfigRow
from callout_server.config.secrets import SecretBox, SecretDecryptError
from callout_server.llm import MASK, mask_api_key, same_origin


def stored_key(secrets: SecretBox, row: LLMConfigRow) -> str:
    """The row's key in clear, "" when it has none; SecretDecryptError when no configured
    secret key reads it (rotated away, or the row is corrupt)."""
    if not row.api_key_enc:
        return ""
    return secrets.decrypt(row.api_key_enc, config_id=row.id)


def readable_key(secrets: SecretBox, row: LLMConfigRow) -> str | None:
    """The key in clear, "" for none, None when it cannot be decrypted."""
    try:
        return stored_key(secrets, row)
    except SecretDecryptError:
        return None


def masked_key(secrets: SecretBox, row: LLMConfigRow) -> str:
    key = readable_key(secrets, row)
    return MASK if key is None else mask_api_key(key)


def key_would_follow(secrets: SecretBox, row: LLMConfigRow, sent: dict[str, Any]) -> bool:
    """A new origin for a stored key that the request does not restate (or clear).

    Otherwise any admin could point the configuration at a listener, press "test" and
    read the write-only key. A key sent in clear (even the same one) or `""` is fine:
    the operator then knows, or drops, what goes to the new host.
    """
    if not row.api_key_enc:
        return False
    known = [row.base_url, *(e["base_url"] for e in row.endpoints or ())]
    moved = "base_url" in sent and not same_origin(row.base_url, sent["base_url"])
    # A new endpoint on a host the key was never sent to counts as a move, too.
    added = [e["base_url"] for e in sent.get("endpoints") or ()
             if not any(same_origin(k, e["base_url"]) for k in known)]
    if not moved and not added:
        return False
    new_key = sent.get("api_key")
    return new_key is None or new_key == masked_key(secrets, row)


def apply_key(secrets: SecretBox, row: LLMConfigRow, sent: dict[str, Any]) -> str | None:
    """PUT rule: omitted, null or the masked value keeps; "" clears; else replaces.
    Returns what happened to the key ("set", "replaced", "cleared") or None."""
    new = sent.get("api_key")
    if new is None or (row.api_key_enc and new == masked_key(secrets, row)):
        return None
    if new == "":
        if not row.api_key_enc:
            return None
        row.api_key_enc = None
        return "cleared"
    if new == readable_key(secrets, row):
        return None
    change = "replaced" if row.api_key_enc else "set"
    row.api_key_enc = secrets.encrypt(new)
    return change
