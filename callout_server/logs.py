"""Process logging: one handler for the app and uvicorn, text or JSON lines, written off the loop.

    logging.config.dictConfig(log_config("json", "info"))   # the CLI, and each uvicorn worker

Structured fields travel as `extra={...}` on a log call (e.g. the failed model call line in
`calllog/records.py`): JSON lines carry them as keys, text lines append them as `key=value`.
Records are formatted where they are logged, redacted (customers' personal data replaced by
pseudonyms, `privacy.current()`) and written by a background thread
(`QueuedStderrHandler`), so a log line costs the event loop no blocking write; once the
app's shutdown begins (`write_through()`), lines are written as they are logged, so the
last ones reach stderr whatever ends the process.
"""

from __future__ import annotations

import atexit
import json
import logging
import queue
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from logging.handlers import QueueHandler, QueueListener
from typing import Any, Literal

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.orjson import OrjsonFormatter

from callout_server import privacy

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[str, ...] = ("text", "json")

# Attributes of a LogRecord that are not structured fields (uvicorn adds `color_message`).
_NOT_FIELDS = frozenset(RESERVED_ATTRS) | {"color_message", "message", "asctime"}


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields a log call passed with `extra=`."""
    return {k: v for k, v in record.__dict__.items() if k not in _NOT_FIELDS}


class TextFormatter(logging.Formatter):
    """`time LEVEL logger message key=value ...`: one line, structured fields at the end."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extra = fields_of(record)
        if not extra:
            return line
        head, sep, tail = line.partition("\n")  # a traceback stays below the fields
        pairs = " ".join(f"{k}={_text_value(v)}" for k, v in extra.items())
        return f"{head} {pairs}{sep}{tail}"


def _text_value(value: Any) -> str:
    """Bare when plain; else quoted with escapes, so a value cannot start a forged line."""
    text = "" if value is None else str(value)
    plain = text and all(c.isprintable() and not c.isspace() and c not in '"=' for c in text)
    return text if plain else json.dumps(text, ensure_ascii=False)


class JsonFormatter(OrjsonFormatter):
    """One JSON object per line: time, level, logger, message, then the structured fields."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s",
                         rename_fields={"asctime": "time", "levelname": "level",
                                        "name": "logger"},
                         reserved_attrs=sorted(_NOT_FIELDS - {"message", "asctime"}))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """ISO 8601 in UTC with milliseconds, what log collectors parse without being told."""
        at = datetime.fromtimestamp(record.created, UTC)
        return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class AccessFields(logging.Filter):
    """uvicorn's access records as fields (JSON lines): client, method, path, status."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5:
            client, method, path, http_version, status = args
            record.__dict__.update(client=client, method=method, path=path,
                                   http_version=http_version, status=status)
        return True


class OneLine(logging.Filter):
    """A message written over several lines (alembic's "Running upgrade ..., <docstring>")
    joined into one: a log line is one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "\n" in message:
            record.msg, record.args = " ".join(message.split()), None
        return True


class RedactedLine(logging.Formatter):
    """The finished line with customers' personal data replaced (`privacy.current()`): every
    line of both formats, fields, tracebacks and uvicorn's access lines alike. It runs in the
    writer thread (off the event loop) until shutdown, then where the line is logged."""

    def format(self, record: logging.LogRecord) -> str:
        return privacy.current().line(record.getMessage())


class QueuedStderrHandler(QueueHandler):
    """Formats in the caller's thread, writes to stderr from a background thread.

    Until shutdown: `write_through()` (the app's lifespan calls it when it begins) writes
    what is queued and every later line in the caller's thread. uvicorn re-raises SIGTERM
    once it has stopped, and that ends the process before `atexit`: a line still queued
    then ("Application shutdown complete", the call-log records never written) was lost.
    """

    def __init__(self) -> None:
        q: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
        super().__init__(q)
        self._writer = logging.StreamHandler(sys.stderr)
        self._writer.setFormatter(RedactedLine())  # already formatted here; redacted there
        self._listener: QueueListener | None = QueueListener(q, self._writer)
        self._listener.start()
        self._through = False
        atexit.register(self.close)  # what is queued is written before the process exits

    def enqueue(self, record: logging.LogRecord) -> None:
        if self._through:
            self._writer.handle(record)
        else:
            super().enqueue(record)

    def write_through(self) -> None:
        """Write what is queued, then every line at once: the process may end any moment."""
        self._through = True
        self._stop_listener()

    def _stop_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()  # writes what is queued, then joins the thread

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        line = self.format(record)
        # A copy carrying only the finished line: the writer thread needs nothing else.
        return logging.makeLogRecord({"msg": line, "levelno": record.levelno,
                                      "levelname": record.levelname, "name": record.name})

    def close(self) -> None:
        self._stop_listener()
        super().close()


def write_through() -> None:
    """Shutdown has begun: every queued log line is written now, and later ones at once."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, QueuedStderrHandler):
            handler.write_through()


# The lowest level of the database and HTTP drivers' loggers whatever the process level:
# below it they write what must not reach a log (SQLAlchemy's INFO is every statement with its
# parameters, aiosqlite's DEBUG every call with them: customers' words, password and token
# hashes; httpx's INFO a line per model request). Only naming a logger goes lower
# (`[server] log_levels`, `serve --logger NAME=LEVEL`).
DRIVER_LOGGERS: dict[str, str] = {
    "sqlalchemy": "WARNING", "aiosqlite": "INFO", "asyncpg": "INFO", "httpx": "WARNING",
    "httpcore": "INFO", "aiohttp": "INFO", "hpack": "INFO", "redis": "INFO",
}
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")


def _at_least(level: str, floor: str) -> str:
    return max(level.upper(), floor, key=logging.getLevelName)


def log_config(fmt: LogFormat = "text", level: str = "info",
               loggers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A `logging.config.dictConfig` dict; uvicorn applies it again in every worker process.

    `loggers`: levels by logger name, which win over the process level and the drivers'
    floors (`{"sqlalchemy.engine": "info"}` logs SQL statements again, on purpose).
    """
    formatter = "json" if fmt == "json" else "text"
    access: dict[str, Any] = {"level": "INFO", "handlers": [], "propagate": True}
    if fmt == "json":
        access["filters"] = ["access_fields"]
    named: dict[str, Any] = {name: {"level": _at_least(level, floor)}
                             for name, floor in DRIVER_LOGGERS.items()}
    named |= {name: {"level": value.upper()} for name, value in (loggers or {}).items()}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "text": {"()": "callout_server.logs.TextFormatter"},
            "json": {"()": "callout_server.logs.JsonFormatter"},
        },
        "filters": {"access_fields": {"()": "callout_server.logs.AccessFields"},
                    "one_line": {"()": "callout_server.logs.OneLine"}},
        "handlers": {"default": {"()": "callout_server.logs.QueuedStderrHandler",
                                 "formatter": formatter}},
        "loggers": {
            "uvicorn": {"handlers": [], "propagate": True},
            "uvicorn.error": {"handlers": [], "propagate": True},
            "uvicorn.access": access,
            "alembic.runtime.plugins": {"level": "WARNING"},  # start-up noise
            "alembic.runtime.migration": {"filters": ["one_line"]},
            **named,
        },
        "root": {"level": level.upper(), "handlers": ["default"]},
    }
