"""Bearer tokens: generated with `secrets`, stored as sha256, checked in memory.

Bearer checks run on the dialer's hot path, so `TokenTable.lookup` is pure CPU: one sha256
of the presented token and a constant-time comparison against every known hash (there are
a handful), with no early exit. Plain sha256 (not argon2) is right for tokens: they carry
256 bits of randomness when generated, so a slow hash would add latency and no safety.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Scope = Literal["admin", "service"]
SCOPES: tuple[Scope, ...] = ("admin", "service")

# Generated tokens start with a recognisable, non-secret marker so secret scanners and
# humans can tell what a leaked string is and which scope it grants.
_MARKER: dict[Scope, str] = {"admin": "cadm_", "service": "csvc_"}
_PREFIX_RANDOM_CHARS = 4  # of ~43 random characters: shown to identify a token, not to guess it


def token_name(scope: Scope) -> str:
    """The row name of a scope's bootstrap token; also the Principal name (`updated_by`)."""
    return f"{scope}-token"


def generate_token(scope: Scope) -> str:
    return _MARKER[scope] + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def display_prefix(token: str) -> str:
    """A short prefix safe to show in a list: the marker (if any) plus 4 characters."""
    for marker in _MARKER.values():
        if token.startswith(marker):
            return token[: len(marker) + _PREFIX_RANDOM_CHARS]
    return token[:_PREFIX_RANDOM_CHARS]


@dataclass(frozen=True, slots=True)
class TokenIdentity:
    name: str
    scope: Scope


@dataclass(frozen=True, slots=True)
class _Entry:
    digest: bytes
    identity: TokenIdentity


class TokenTable:
    """Immutable set of known token hashes; replaced as a whole, never mutated."""

    __slots__ = ("_entries",)

    def __init__(self, rows: Iterable[tuple[str, Scope, str]] = ()) -> None:
        """`rows` are (name, scope, sha256 hex digest)."""
        self._entries = tuple(
            _Entry(bytes.fromhex(digest), TokenIdentity(name, scope)) for name, scope, digest in rows
        )

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, token: str) -> TokenIdentity | None:
        if not token:
            return None
        presented = hashlib.sha256(token.encode("utf-8")).digest()
        found: TokenIdentity | None = None
        for entry in self._entries:  # no early exit: time does not depend on which matched
            if hmac.compare_digest(presented, entry.digest):
                found = entry.identity
        return found
