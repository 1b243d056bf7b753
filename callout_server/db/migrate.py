"""Alembic, driven from code: `callout-server migrate`, `callout-server alembic ...` and the
embedded SQLite start-up.

The migration scripts ship inside the package (`callout_server/db/migrations/`), so a
non-editable install (the Docker image) migrates exactly like a checkout. Alembic is
configured programmatically: no `alembic.ini` has to be found at run time, and `env.py` runs
on the URL it is handed here (`Config.attributes["url"]`), nothing else.

`upgrade_to_head()` runs alembic on a private thread: alembic's async `env.py` calls
`asyncio.run()`, which must not touch the caller's event loop (a running server, or the
test session's loop).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from argparse import Namespace
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str, cmd_opts: Namespace | None = None) -> Config:
    """Alembic's configuration for the database at `url` (`cmd_opts`: its command line's)."""
    cfg = Config(cmd_opts=cmd_opts)
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    # The URL travels as an attribute: ini options would interpolate a `%` in a password.
    cfg.attributes["url"] = url
    return cfg


@contextlib.contextmanager
def _sqlite_migration_lock(url: str) -> Iterator[None]:
    """Several workers may start on one SQLite file at once: migrate one at a time.

    (PostgreSQL takes an advisory lock in env.py instead.)
    """
    path = url.split(":///", 1)[1] if ":///" in url else ""
    if not url.startswith("sqlite") or not path or path == ":memory:":
        yield
        return
    lock_path = Path(path).with_name(Path(path).name + ".migrate.lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def upgrade_to_head(url: str) -> None:
    """Bring the database at `url` (SQLAlchemy async URL) to the newest revision."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with _sqlite_migration_lock(url):
                command.upgrade(alembic_config(url), "head")
        except BaseException as exc:  # re-raised on the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=run, name="alembic-upgrade")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def current_heads(url: str) -> tuple[str, ...]:
    """The script directory's head revision ids (what `upgrade_to_head` reaches)."""
    from alembic.script import ScriptDirectory

    return tuple(ScriptDirectory.from_config(alembic_config(url)).get_heads())
