"""Password hashing with argon2id (argon2-cffi), verified so timing does not reveal usernames.

Hashing is CPU-bound (~0.1 s with the library's defaults); async callers run these functions
in a thread (`asyncio.to_thread`) so a login never stalls the event loop that also serves
the dialer's requests.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from functools import cache
from typing import Literal

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

# `[auth] password_hashing`. "rfc9106" is RFC 9106's recommended low-memory profile (the
# library's defaults: ~0.2 s and 64 MiB a hash); "test" is the cheapest valid argon2id, for
# test suites that start hundreds of workers and log in thousands of times (as Django's
# test settings swap in a fast hasher). A hash made under one profile still verifies under
# the other, and `check_needs_rehash` upgrades it at the next successful login.
Hashing = Literal["rfc9106", "test"]
PROFILES = {"rfc9106": profiles.RFC_9106_LOW_MEMORY, "test": profiles.CHEAPEST}
_hasher = PasswordHasher.from_parameters(PROFILES["rfc9106"])


def use(hashing: Hashing) -> None:
    """Hash new passwords with this profile from now on (the process's one hasher)."""
    global _hasher
    params = PROFILES[hashing]
    if (_hasher.time_cost, _hasher.memory_cost, _hasher.parallelism) != \
            (params.time_cost, params.memory_cost, params.parallelism):
        _hasher = PasswordHasher.from_parameters(params)
        _dummy_hash.cache_clear()


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
