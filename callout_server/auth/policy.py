"""What a username and a new password must be; request bodies use these types.

    Username      3 to 64 of [a-z0-9._-]   (the bootstrap admin from the environment is
                                            exempt: it never passes through these bodies)
    NewPassword   at least 12 characters, at most 1024 (argon2 hashes any length; the bound
                  keeps a request from buying seconds of CPU)

The checks raise `i18n.invalid(code)`: a 422's `fields` carry the code (`username_invalid`,
`weak_password`, `password_too_long`, `password_blank`) and the message reads in the caller's
language.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from callout_server.i18n import invalid

USERNAME_RE = re.compile(r"[a-z0-9._-]{3,64}")
MIN_PASSWORD_CHARS = 12
MAX_PASSWORD_CHARS = 1024


def check_username(value: str) -> str:
    if not USERNAME_RE.fullmatch(value):
        raise invalid("username_invalid")
    return value


def check_new_password(value: str) -> str:
    if len(value) < MIN_PASSWORD_CHARS:
        raise invalid("weak_password", min_length=MIN_PASSWORD_CHARS)
    if len(value) > MAX_PASSWORD_CHARS:
        raise invalid("password_too_long", max_length=MAX_PASSWORD_CHARS)
    if not value.strip():
        raise invalid("password_blank")
    return value


Username = Annotated[str, AfterValidator(check_username)]
NewPassword = Annotated[str, AfterValidator(check_new_password)]
