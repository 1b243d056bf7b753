"""What an API key and a base URL may hold, and when a key may follow a URL: pure checks.

Used on every way in (the admin API's schemas, config.toml sections) and once more by the
client before a request is sent, for values that got in another way (a row saved by an
older version, a configuration built in code). Messages never quote the value.

- An API key travels as `Authorization: Bearer <key>`: printable ASCII without spaces
  (0x21-0x7E). A CR, LF or NUL would be refused by the HTTP library (or, worse, split the
  header); a non-ASCII character is refused by httpx; a space is a pasted `Bearer ` or a
  broken copy.
- A base URL never carries credentials (`user:password@host`): they would be shown and
  logged with the URL, and the HTTP libraries refuse to combine them with the key's
  `Authorization` header. The key goes in `api_key`.
- The stored key belongs to the origin (scheme, host, port) it was saved for: moving a
  configuration to another origin needs the key again (`same_origin`).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_KEY_CHARS = re.compile(r"[\x21-\x7e]*")
_HAS_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@")
_DEFAULT_PORTS = {"http": 80, "https": 443}

API_KEY_RULE = ("must be printable ASCII without spaces or control characters "
                "(check for a line break or a pasted 'Bearer ')")
URL_CREDENTIALS_RULE = ("must not carry credentials (user:password@); put the key in api_key")


def has_url_credentials(url: str) -> bool:
    return _HAS_USERINFO.match(url.strip()) is not None


def check_api_key(key: str) -> str:
    """A key that can travel in an Authorization header, or ValueError (for pydantic)."""
    if not _KEY_CHARS.fullmatch(key):
        raise ValueError(API_KEY_RULE)
    return key


def check_no_url_credentials(url: str) -> str:
    if has_url_credentials(url):
        raise ValueError(URL_CREDENTIALS_RULE)
    return url


def unsendable(api_key: str, url: str) -> str | None:
    """Why a request with this key to this URL cannot be sent (a diagnostic reason:
    `key_unsendable`, `url_credentials`), or None. The client's check.

    Cheap enough for the hot path: two precompiled regular expressions, no URL parsing.
    """
    if api_key and not _KEY_CHARS.fullmatch(api_key):
        return "key_unsendable"
    if _HAS_USERINFO.match(url):
        return "url_credentials"
    return None


def origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) with the scheme's default port filled in; None if unparseable."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or ""), port or _DEFAULT_PORTS.get(scheme)


def same_origin(a: str, b: str) -> bool:
    """Same scheme, host and port (`http://h` == `http://H:80/other`); unparseable: False."""
    oa = origin(a)
    return oa is not None and oa == origin(b)
