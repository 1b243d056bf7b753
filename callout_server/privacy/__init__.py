"""Customers' personal data kept out of what is stored and logged (issue 22).

The redactor itself is `callout_server.redaction` (pure, ground floor); this package is how
the service applies it: the `[privacy]` settings, the fail-closed guard every writer calls,
and the process's current guard (read by the audit trail and the log handler). docs/privacy.md.

    PrivacySettings, RetentionDays               (settings.py)
    Privacy, Tally, FAILED, derive_key, merge,
    install, current                             (guard.py)
"""

from callout_server.privacy.guard import (
    FAILED,
    Privacy,
    Tally,
    current,
    derive_key,
    install,
    merge,
)
from callout_server.privacy.settings import PrivacySettings, RetentionDays

__all__ = ["FAILED", "Privacy", "PrivacySettings", "RetentionDays", "Tally", "current",
           "derive_key", "install", "merge"]
