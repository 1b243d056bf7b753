"""Password hashing with argon2id (argon2-cffi), verified so timing does not reveal usernames.

Hashing is CPU-bound (~0.1 s with the library's defaults); async callers run these functions
in a thread (`asyncio.to_thread`) so a login never stalls the event loop that also serves
the dialer's requests.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

# The library's defaults follow RFC 9106's recommended profile; a future change of defaults
# is picked up by `check_needs_rehash` at the next successful login.
_hasher = PasswordHasher()


@dataclass(frozen=True, slots=True)
class Verification:
    ok: bool
    new_hash: str | None = None  # set when the stored hash used outdated parameters


def hash_password(password: str) -> str:
    return _hasher.hash(password)


@cache
def _dummy_hash() -> str:
    # Computed once, lazily: verifying against it costs what a real verification costs.
    return _hasher.hash(secrets.token_urlsafe(16))


def verify_password(stored_hash: str | None, password: str) -> Verification:
    """Check `password` against `stored_hash`; `None` (unknown user) still pays the full cost.

    The unknown-user path verifies against a dummy hash so that response time does not tell
    an attacker which usernames exist.
    """
    if stored_hash is None:
        try:
            _hasher.verify(_dummy_hash(), password)
        except VerificationError:
            pass
        return Verification(ok=False)
    try:
        _hasher.verify(stored_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return Verification(ok=False)
    if _hasher.check_needs_rehash(stored_hash):
        return Verification(ok=True, new_hash=_hasher.hash(password))
    return Verification(ok=True)


def warm_up() -> None:
    """Build the dummy hash ahead of the first login (called at start, off the event loop)."""
    _dummy_hash()
