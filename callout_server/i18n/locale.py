"""The caller's language: negotiated once per request, read wherever text is rendered.

`negotiate()` reads an `Accept-Language` header (RFC 9110 §12.5.4: tags with q-values) and
picks the best of the languages the server speaks, else the server's default
(`[server] locale`). The edge middleware stores the result for the request; anything that
renders text for the caller (error bodies, diagnostics, stream error events) reads it with
`current()`. Outside a request `current(default)` is the default it is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from functools import lru_cache
from typing import Literal

Locale = Literal["zh", "en"]
LOCALES: tuple[Locale, ...] = ("zh", "en")
DEFAULT: Locale = "zh"

_CURRENT: ContextVar[Locale] = ContextVar("callout_locale")
# Longer headers are parsed but not cached: the cache must not grow with what clients send.
_CACHE_UP_TO = 200


def current(default: Locale = DEFAULT) -> Locale:
    """The language of the request being served, else `default`."""
    return _CURRENT.get(default)


def enter(locale: Locale) -> Token[Locale]:
    """Make `locale` the current language until `leave(token)` (the edge middleware's pair)."""
    return _CURRENT.set(locale)


def leave(token: Token[Locale]) -> None:
    _CURRENT.reset(token)


@contextmanager
def using(locale: Locale) -> Iterator[None]:
    """Render in `locale` inside the block (tests, background work on a caller's behalf)."""
    token = enter(locale)
    try:
        yield
    finally:
        leave(token)


def negotiate(header: str | None, default: Locale = DEFAULT) -> Locale:
    """The best supported language in an `Accept-Language` header, else `default`.

    `zh-CN,zh;q=0.9,en;q=0.8` -> zh; `en-US,en;q=0.9` -> en; `fr` or `*` -> default;
    `en;q=0, zh` -> zh (q=0 means "not this one"). Equal weights keep the header's order.
    """
    if not header:
        return default
    if len(header) <= _CACHE_UP_TO:
        return _negotiate_cached(header, default)
    return _negotiate(header, default)


@lru_cache(maxsize=256)
def _negotiate_cached(header: str, default: Locale) -> Locale:
    return _negotiate(header, default)


def _negotiate(header: str, default: Locale) -> Locale:
    best: Locale | None = None
    best_q = 0.0
    refused: set[str] = set()
    for item in header.split(",")[:32]:
        tag, _, params = item.strip().partition(";")
        primary = tag.strip().lower().split("-", 1)[0]
        q = _weight(params)
        if q is None:
            continue
        if primary in LOCALES:
            if q == 0:
                refused.add(primary)
            elif q > best_q:
                best, best_q = primary, q  # type: ignore[assignment]
        elif primary == "*" and q > best_q and default not in refused:
            best, best_q = default, q
    if best is not None:
        return best
    if default in refused:
        other = [lang for lang in LOCALES if lang not in refused]
        return other[0] if other else default
    return default


def _weight(params: str) -> float | None:
    """The q-value of one entry (1 when absent), or None when it is malformed."""
    for param in params.split(";"):
        name, _, value = param.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return None
            return q if 0 <= q <= 1 else None
    return 1.0
