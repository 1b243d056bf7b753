"""What every writer of stored text calls: redaction that fails closed.

    privacy = Privacy(key, kinds)                  # or Privacy.off() (`redact = false`)
    text, tally = privacy.text("我的手机号13800138000")   # ("我的手机号154…", {"mobile": 1})
    value, tally = privacy.value({"slots": {...}})       # a JSON-like value, whole
    text, tally = privacy.text(odd)                       # (None, {"redaction_failed": 1})

A text (or value) the redactor fails on is never returned as it was: `None` comes back and
the tally says `redaction_failed`, so the caller stores nothing in its place and the record
says why. The tally (`kind -> count`) is what the record keeps in its `redacted` column:
ops read "2 mobiles redacted" from it; `{}` says redaction ran and found nothing, NULL (a row
written with `redact = false` or before redaction existed) that it never ran.

`current()` is the process's guard (installed by the composition root at start, from
`[privacy]`): the audit trail and the log handler, which are called from everywhere, read it.
Before `install()`, a guard with a random key redacts (fail closed, pseudonyms per process).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Iterable
from typing import Any

from callout_server.redaction import DEFAULT_KINDS, RedactionError, Redactor

log = logging.getLogger(__name__)

FAILED = "redaction_failed"
Tally = dict[str, int]
_KEY_CONTEXT = b"callout-server pseudonyms v1"


def derive_key(secret: str) -> bytes:
    """The pseudonym key from the server's secret: a keyed hash, never the secret itself."""
    return hmac.new(secret.encode(), _KEY_CONTEXT, hashlib.sha256).digest()


def merge(into: Tally, more: Tally) -> Tally:
    for kind, n in more.items():
        into[kind] = into.get(kind, 0) + n
    return into


class Privacy:
    def __init__(self, key: bytes | str | None, kinds: Iterable[str] = DEFAULT_KINDS, *,
                 enabled: bool = True) -> None:
        self.enabled = enabled
        self.kinds = frozenset(kinds)
        self._redactor = Redactor(key, self.kinds) if enabled and key is not None else None
        if enabled and self._redactor is None:
            raise ValueError("redaction needs a key")

    @classmethod
    def off(cls) -> Privacy:
        return cls(None, enabled=False)

    @property
    def redactor(self) -> Redactor | None:
        return self._redactor

    def text(self, text: str | None) -> tuple[str | None, Tally]:
        """`text` redacted and what was replaced; (None, {"redaction_failed": 1}) on failure."""
        if text is None or self._redactor is None or not text:
            return text, {}
        try:
            out = self._redactor.redact(text)
        except RedactionError as exc:
            log.warning("redaction failed (%s): the text is not stored", exc.reason)
            return None, {FAILED: 1}
        return out.text, out.kinds

    def value(self, value: Any) -> tuple[Any, Tally]:
        """A JSON-like value redacted whole; (None, {"redaction_failed": 1}) on failure."""
        if value is None or self._redactor is None:
            return value, {}
        try:
            out = self._redactor.redact_value(value)
        except RedactionError as exc:
            log.warning("redaction failed (%s): the value is not stored", exc.reason)
            return None, {FAILED: 1}
        return out.value, out.kinds

    def line(self, line: str) -> str:
        """A log line redacted; a line the redactor fails on is replaced by a notice."""
        if self._redactor is None:
            return line
        try:
            return self._redactor.redact(line).text
        except RedactionError as exc:
            return f"[log line withheld: {FAILED} ({exc.reason})]"


_current = Privacy(secrets.token_bytes(32))


def install(privacy: Privacy) -> None:
    """Make `privacy` the process's guard (the composition root, at start)."""
    global _current
    _current = privacy


def current() -> Privacy:
    return _current
