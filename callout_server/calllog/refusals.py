"""Which failed writes are the records' fault, and which the database's.

A record the database refuses (an encoding it cannot hold, a value too long or out of range,
a duplicate id) fails every retry the same way: the writer isolates it and drops it. Any
other failure (connection lost or refused, a timeout, the server shutting down, a missing
table or privilege) says nothing about the records: they are kept and the write is retried.

Raised by the writer's two paths:
    PostgreSQL COPY     asyncpg's own exceptions (`sqlstate` on server errors) and the
                        driver's ValueError / TypeError / OverflowError while encoding a value
    SQLAlchemy INSERT   sqlalchemy.exc.DataError / IntegrityError (DBAPI errors, SQLite too),
                        or StatementError wrapping an encoding error (`orig`)
"""

from __future__ import annotations

from sqlalchemy.exc import DataError, IntegrityError, StatementError

from callout_server.db.engine import is_db_unavailable

# SQLSTATE classes 22 (data exception) and 23 (integrity constraint violation).
_REFUSED_CLASSES = ("22", "23")
# What a driver raises while encoding one value, before anything reaches the server.
_ENCODING_ERRORS = (ValueError, TypeError, OverflowError)


def is_refused_data(exc: BaseException) -> bool:
    """True when retrying cannot help: the database (or its driver) refuses the data."""
    if is_db_unavailable(exc):
        return False
    if isinstance(exc, DataError | IntegrityError):
        return True
    if isinstance(exc, StatementError):
        if exc.orig is None:
            return False
        exc = exc.orig
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str):
        return sqlstate[:2] in _REFUSED_CLASSES
    return isinstance(exc, _ENCODING_ERRORS)
