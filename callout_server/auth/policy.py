"""What a username and a new password must be; request bodies use these types.

    Username      3 to 64 of [a-z0-9._-]   (the bootstrap admin from the environment is
                                            exempt: it never passes through these bodies)
    NewPassword   at least 12 characters, at most 1024 (argon2 hashes any length; the bound
                  keeps a request from buying seconds of CPU)
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

USERNAME_RE = re.compile(r"[a-z0-9._-]{3,64}")
MIN_PASSWORD_CHARS = 12
MAX_PASSWORD_CHARS = 1024


def check_username(value: str) -> str:
    if not USERNAME_RE.fullmatch(value):
        raise ValueError("3 to 64 characters, each a lowercase letter, a digit, '.', '_' or '-'")
    return value


def check_new_password(value: str) -> str:
    if len(value) < MIN_PASSWORD_CHARS:
        raise ValueError(f"too weak: at least {MIN_PASSWORD_CHARS} characters")
    if len(value) > MAX_PASSWORD_CHARS:
        raise ValueError(f"at most {MAX_PASSWORD_CHARS} characters")
    if not value.strip():
        raise ValueError("must not be only spaces")
    return value


Username = Annotated[str, AfterValidator(check_username)]
NewPassword = Annotated[str, AfterValidator(check_new_password)]
