"""API keys encrypted at rest: Fernet (AES-128-CBC + HMAC-SHA256) from `cryptography`.

Stored form: `v1:<fernet token>`. The `v1:` prefix names the format, so a later format can
be introduced while old rows stay readable.

`CALLOUT_SECRET_KEY` holds one or more Fernet keys separated by commas. The first
encrypts; all of them decrypt (MultiFernet), which is how a key is rotated: put the new
key first, keep the old one after it until every row has been re-saved or re-encrypted
(`SecretBox.reencrypt`), then drop the old one.

When no key is configured, one is generated and kept in a key file (mode 0600) beside the
SQLite database, or at `auth.secret_key_file` / `CALLOUT_SECRET_KEY_FILE`; a warning says so
once. Production sets `CALLOUT_SECRET_KEY` on every worker (all workers must share it).

`SecretBox.sealer(purpose)` gives AES-GCM under subkeys of the same keys, for state written
on every chat turn (`Sealer`); `SecretBox.subkeys(purpose)` gives HMAC keys.

    SecretError
      SecretKeyInvalid      the configured key is not a Fernet key (start-up)
      SecretDecryptError    stored ciphertext unreadable with the configured keys
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

log = logging.getLogger(__name__)

FORMAT_V1 = "v1:"
KEY_FILE_NAME = "callout.secret.key"


class SecretError(Exception):
    """Base of secret-handling failures; messages never contain key material."""


class SecretKeyInvalid(SecretError):
    pass


class SecretDecryptError(SecretError):
    def __init__(self, config_id: int | None, reason: str, *, sealed: str | None = None) -> None:
        self.config_id = config_id
        self.reason = reason
        if sealed is not None:  # state sealed by `Sealer`: no configuration to fix or disable
            message = (
                f"the stored {sealed} cannot be decrypted ({reason}); it was sealed with a key "
                "that is not in CALLOUT_SECRET_KEY, or it is corrupt. Keep the old key "
                "(comma-separated after the new one) until such state has expired.")
        else:
            which = f"model configuration {config_id}" if config_id is not None else "a value"
            message = (
                f"the stored API key of {which} cannot be decrypted ({reason}); it was "
                "encrypted with a key that is not in CALLOUT_SECRET_KEY, or the row is corrupt. "
                "The configuration is not used; restore the old key (comma-separated after the "
                "new one) or save the API key again.")
        super().__init__(message)


def _fernets(keys: list[str]) -> list[Fernet]:
    out = []
    for i, key in enumerate(keys):
        try:
            out.append(Fernet(key.encode()))
        except (ValueError, TypeError) as exc:
            # Never echo the value: it is the secret itself.
            raise SecretKeyInvalid(
                f"CALLOUT_SECRET_KEY entry #{i + 1} is not a valid Fernet key (32 url-safe "
                "base64-encoded bytes). Generate one with: python -c \"from "
                "cryptography.fernet import Fernet; print(Fernet.generate_key().decode())\""
            ) from exc
    return out


class SecretBox:
    """Encrypts with the first key, decrypts with any."""

    def __init__(self, keys: str) -> None:
        parts = [k.strip() for k in keys.split(",") if k.strip()]
        if not parts:
            raise SecretKeyInvalid("CALLOUT_SECRET_KEY is empty")
        self._multi = MultiFernet(_fernets(parts))
        self._parts = tuple(parts)
        self.key_count = len(parts)

    def subkeys(self, purpose: bytes) -> tuple[bytes, ...]:
        """HMAC-SHA256(key, purpose) for each configured key, first first: a secret for one
        purpose (service-key digests) that never reveals the encryption keys."""
        return tuple(hmac.new(k.encode(), purpose, hashlib.sha256).digest() for k in self._parts)

    def sealer(self, purpose: bytes, what: str = "sealed state") -> Sealer:
        """AES-GCM under this purpose's subkeys, for state saved often (chat sessions);
        `what` names that state in a decryption error."""
        return Sealer(self.subkeys(purpose), what)

    def encrypt(self, plaintext: str) -> str:
        return FORMAT_V1 + self._multi.encrypt(plaintext.encode()).decode()

    def decrypt(self, stored: str, *, config_id: int | None = None) -> str:
        if not stored.startswith(FORMAT_V1):
            raise SecretDecryptError(config_id, "unknown ciphertext format")
        try:
            return self._multi.decrypt(stored[len(FORMAT_V1):].encode()).decode()
        except (InvalidToken, UnicodeDecodeError) as exc:
            raise SecretDecryptError(config_id, "no configured key matches") from exc

    def reencrypt(self, stored: str, *, config_id: int | None = None) -> str:
        """The same secret under the current first key (for finishing a rotation)."""
        return self.encrypt(self.decrypt(stored, config_id=config_id))


class Sealer:
    """AES-256-GCM for state written and read on every turn (chat sessions in Redis).

    Fernet (AES-CBC, HMAC, base64) costs ~0.1 ms per 5 KB each way, on a turn's path; this is
    a few microseconds and stores raw bytes. Each value is bound to where it is stored (the
    associated data: the key's name), so one call's state cannot be passed off as another's.
    Keys are subkeys of `CALLOUT_SECRET_KEY` (first seals, all open: a rotation works as for
    API keys). Stored form: b"\x01", a 12-byte random nonce, the ciphertext and its tag.
    """

    VERSION = b"\x01"

    def __init__(self, keys: tuple[bytes, ...], what: str = "sealed state") -> None:
        self._aeads = [AESGCM(key) for key in keys]
        self._what = what

    def seal(self, data: bytes, where: bytes) -> bytes:
        nonce = os.urandom(12)
        return self.VERSION + nonce + self._aeads[0].encrypt(nonce, data, where)

    def open(self, sealed: bytes, where: bytes) -> bytes:
        if sealed[:1] != self.VERSION:
            raise SecretDecryptError(None, "unknown ciphertext format", sealed=self._what)
        nonce, body = sealed[1:13], sealed[13:]
        for aead in self._aeads:
            try:
                return aead.decrypt(nonce, body, where)
            except InvalidTag:
                continue
        raise SecretDecryptError(None, "no configured key matches", sealed=self._what)


def default_key_file(sqlite_path: str) -> Path:
    return Path(sqlite_path).resolve().parent / KEY_FILE_NAME


def load_or_create_key_file(path: Path) -> str:
    """Read the generated key, or create it atomically (several workers may race here)."""
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key().decode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another worker won the race: use its key
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key + "\n")
    log.warning(
        "CALLOUT_SECRET_KEY is not set: generated a key for encrypting stored API keys and "
        "saved it to %s (mode 0600). Back this file up; set CALLOUT_SECRET_KEY on every "
        "worker in production.", path)
    return key


def secret_box_from_settings(secret_key: str, key_file: str, sqlite_path: str) -> SecretBox:
    if secret_key.strip():
        return SecretBox(secret_key)
    path = Path(key_file) if key_file else default_key_file(sqlite_path)
    return SecretBox(load_or_create_key_file(path))
