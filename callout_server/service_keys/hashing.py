"""A service key, and the one digest it is stored and looked up by.

    key    = generate_key()          "csk_" + 43 url-safe characters (256 random bits)
    hasher = KeyHasher(secret_box.subkeys(PURPOSE))
    digest = hasher.digest(key)      HMAC-SHA256 under a subkey of CALLOUT_SECRET_KEY

Why a fast keyed hash and not argon2: argon2 makes guessing a *low-entropy* secret (a
password) expensive. A generated key has 256 random bits, so nobody can guess it however
fast the hash is, and a slow hash would put tens of milliseconds of CPU on every dialer
request. The HMAC key (derived from CALLOUT_SECRET_KEY, never stored in the database) means a
copy of the table alone cannot even confirm a leaked key. During a CALLOUT_SECRET_KEY rotation
(several keys, comma-separated) a key is looked up under each of them; new keys are hashed
under the first.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence

MARKER = "csk_"
PREFIX_CHARS = 6  # random characters shown after the marker: names a key, cannot be used
PURPOSE = b"callout service keys v1"


def generate_key() -> str:
    return MARKER + secrets.token_urlsafe(32)


def prefix_of(key: str) -> str:
    return key[: len(MARKER) + PREFIX_CHARS]


class KeyHasher:
    __slots__ = ("_keys",)

    def __init__(self, keys: Sequence[bytes]) -> None:
        if not keys:
            raise ValueError("no secret to hash service keys with")
        self._keys = tuple(keys)

    def digest(self, key: str) -> bytes:
        """The stored digest (under the first secret)."""
        return hmac.new(self._keys[0], key.encode("utf-8"), hashlib.sha256).digest()

    def candidates(self, key: str) -> tuple[bytes, ...]:
        """The digests `key` may be stored under (one per configured secret)."""
        raw = key.encode("utf-8")
        return tuple(hmac.new(k, raw, hashlib.sha256).digest() for k in self._keys)
