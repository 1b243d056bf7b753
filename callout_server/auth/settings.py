"""The `[auth]` section of config.toml: credentials and console sessions.

Part of `callout_server.config.settings.Settings`; defined here so the auth package needs
nothing from the configuration package (which sits above it: its routes use auth's
dependencies).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, SecretStr

from callout_server.auth.passwords import Hashing


class AuthSettings(BaseModel):
    # Error messages name the key, never its value: these are tokens and passwords.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    admin_user: str = ""
    admin_password: SecretStr = SecretStr("")
    admin_token: SecretStr = SecretStr("")
    service_token: SecretStr = SecretStr("")
    secret_key: SecretStr = SecretStr("")
    # Where a generated CALLOUT_SECRET_KEY is kept when none is set ("": beside the SQLite file).
    secret_key_file: str = ""
    session_ttl_s: int = 12 * 3600
    cookie_secure: bool = False
    # Console passwords' argon2id cost (passwords.py): "test" only in test suites.
    password_hashing: Hashing = "rfc9106"
