"""The process's privacy guard, built from `[privacy]` and the server's secret key."""

from __future__ import annotations

import logging
from pathlib import Path

from callout_server.config.secrets import default_key_file, load_or_create_key_file
from callout_server.config.settings import Settings
from callout_server.privacy import Privacy, derive_key

log = logging.getLogger("callout_server.privacy")


def secret_key_material(settings: Settings) -> str:
    """CALLOUT_SECRET_KEY's first entry, else the generated key file's (as SecretBox reads it)."""
    a = settings.auth
    entries = [k.strip() for k in a.secret_key.get_secret_value().split(",") if k.strip()]
    if entries:
        return entries[0]
    path = Path(a.secret_key_file) if a.secret_key_file else default_key_file(
        settings.database.sqlite_path)
    return load_or_create_key_file(path)


def privacy_from_settings(settings: Settings) -> Privacy:
    """The guard `[privacy]` asks for; `redact = false` is said at every start."""
    p = settings.privacy
    if not p.redact:
        log.warning("[privacy] redact = false: customers' phone numbers, ID numbers, bank cards "
                    "and e-mail addresses are stored and logged as said (docs/privacy.md)")
        return Privacy.off()
    own = p.key.get_secret_value()
    key = own.encode() if own else derive_key(secret_key_material(settings))
    return Privacy(key, p.kinds)
