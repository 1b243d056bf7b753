"""The command line as an operator meets it: `python -m callout_server ...` as a subprocess.

A missing config file is one line naming the path tried and how to name another; every
option says what it does; `serve` started from another directory with `--config` serves,
writes JSON log lines with an access log on request, and logs a failed model call;
`alembic ...` is alembic's command line on the configured database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from callout_server.cli import build_parser
from tests.fixtures.app import ServerProcess, free_port
from tests.fixtures.database import ADMIN_TOKEN, SECRET_KEY, SERVICE_TOKEN

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config.toml"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLOUT_")}
    return {**env, "PYTHONUNBUFFERED": "1", **extra}


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "callout_server", *args], cwd=cwd,
                          env=_env(**env), capture_output=True, text=True, timeout=60)


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("callout-server: error: config file not found: ")
    assert "--config PATH" in lines[0] and "CALLOUT_CONFIG=PATH" in lines[0]
    return lines[0]


@pytest.mark.parametrize("command", ["serve", "migrate"])
def test_started_elsewhere_names_the_path_tried_and_how_to_point_at_another(
        tmp_path: Path, command: str) -> None:
    line = _one_line_error(_run([command], tmp_path))
    assert str(tmp_path / "config.toml") in line and "current directory" in line


def test_a_missing_file_says_where_its_name_came_from(tmp_path: Path) -> None:
    missing = tmp_path / "etc" / "callout.toml"
    after = _one_line_error(_run(["serve", "--config", str(missing)], tmp_path))
    before = _one_line_error(_run(["--config", str(missing), "migrate"], tmp_path))
    for line in (after, before):
        assert f"{missing} (given with --config)" in line
    from_env = _one_line_error(_run(["serve"], tmp_path, CALLOUT_CONFIG=str(missing)))
    assert f"{missing} (from CALLOUT_CONFIG)" in from_env


def test_an_unreadable_config_is_one_line_too(tmp_path: Path) -> None:
    done = _run(["serve", "--config", str(tmp_path)], tmp_path)  # a directory
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"cannot read config file {tmp_path}" in done.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[server\n")
    done = _run(["migrate", "--config", str(bad)], tmp_path)
    assert done.returncode == 2 and "invalid TOML" in done.stderr
    assert "Traceback" not in done.stderr


def test_log_settings_come_from_the_environment_and_are_checked() -> None:
    from callout_server.config.settings import ConfigFileError, load_settings

    base = {"CALLOUT_CONFIG": str(CONFIG)}
    server = load_settings(env=base).server
    assert (server.log_format, server.access_log, server.log_level) == ("text", False, "info")
    server = load_settings(env={**base, "CALLOUT_LOG_FORMAT": "json", "CALLOUT_ACCESS_LOG": "true",
                                "CALLOUT_LOG_LEVEL": "warning"}).server
    assert (server.log_format, server.access_log, server.log_level) == ("json", True, "warning")
    with pytest.raises(ConfigFileError, match=r"server\.log_format"):
        load_settings(env={**base, "CALLOUT_LOG_FORMAT": "xml"})


def test_fastapi_opentelemetry_is_off_unless_asked_for() -> None:
    from callout_server.app import create_app
    from callout_server.config.settings import load_settings

    base = {"CALLOUT_CONFIG": str(CONFIG)}
    # FastAPI's own: on by default (it then asks the global providers on every request)
    off = create_app(load_settings(env=base))._telemetry  # type: ignore[attr-defined]
    on = create_app(load_settings(env={**base, "CALLOUT_OPENTELEMETRY": "true"}))._telemetry  # type: ignore[attr-defined]
    assert (off["tracing"], off["metrics"], off["logs"]) == (False, False, False)
    assert (on["tracing"], on["metrics"], on["logs"]) == (True, True, True)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_of_every_command_says_what_it_does() -> None:
    parser = build_parser()
    commands = _subparsers(parser)
    assert set(commands) == {"serve", "migrate", "redact-stored", "alembic", "emulator"}
    for name, sub in [("", parser), *commands.items()]:
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings} has no description"
    for name in ("serve", "migrate", "redact-stored"):  # the config file named after it too
        assert any("--config" in a.option_strings for a in commands[name]._actions)


def test_serve_help_lists_its_options(tmp_path: Path) -> None:
    done = _run(["serve", "--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    for text in ("--config PATH", "--access-log", "--log-format {text,json}", "--workers",
                 "address to bind", "one JSON object per line"):
        assert text in done.stdout, text
    # Several workers need no PostgreSQL: on SQLite they converge by polling, as the README
    # and docs/configuration.md say (tests/test_config_workers.py runs it).
    workers = " ".join(done.stdout.split("--workers WORKERS")[-1].split("--forwarded")[0].split())
    assert "PostgreSQL" not in workers and "SQLite" in workers and "poll" in workers, workers


def test_serve_elsewhere_with_config_json_lines_and_access_log(tmp_path: Path) -> None:
    dead = free_port()
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    env = dict(CALLOUT_ADMIN_TOKEN=ADMIN_TOKEN, CALLOUT_SERVICE_TOKEN=SERVICE_TOKEN,
               CALLOUT_SECRET_KEY=SECRET_KEY, CALLOUT_ADMIN_USER="admin",
               CALLOUT_ADMIN_PASSWORD="admin-pass-123",
               CALLOUT_NLU_BASE_URL=f"http://127.0.0.1:{dead}/v1")
    server = ServerProcess(env, out, "serve", stderr_path=err, cwd=tmp_path, args=[
        "--config", str(CONFIG), "--access-log", "--log-format", "json"])
    try:
        url = server.wait_ready_sync().url
        root = httpx.get(f"{url}/", timeout=10)
        assert root.status_code == 307 and root.headers["location"] == "/admin"
        r = httpx.post(f"{url}/api/nlu/decide", timeout=30,
                       headers={"Authorization": f"Bearer {SERVICE_TOKEN}"},
                       json={"call_id": "cli-1", "utterance": "好的",
                             "intents": [{"name": "agree"}], "fallback_intent": "agree"})
        assert r.status_code == 200 and r.json()["fallback"] is True, r.text
    finally:
        server.stop()
    assert (tmp_path / "callout.db").exists()  # ./callout.db of the config, in the cwd
    lines = [json.loads(x) for x in err.read_text().splitlines() if x.strip()]
    assert lines and all({"time", "level", "logger", "message"} <= set(x) for x in lines)
    access = [x for x in lines if x["logger"] == "uvicorn.access"]
    assert {(x["method"], x["path"], x["status"]) for x in access} >= {
        ("GET", "/healthz", 200), ("GET", "/", 307), ("POST", "/api/nlu/decide", 200)}
    failed = [x for x in lines if x.get("event") == "model_call_failed"]
    assert failed and failed[0]["code"] == "connect_error" and failed[0]["tier"] == "nlu"
    assert failed[0]["endpoint"] == f"127.0.0.1:{dead}" and failed[0]["call_id"] == "cli-1"
    assert failed[0]["config_name"] == "nlu-default" and "latency_ms" in failed[0]
    text = err.read_text() + out.read_text()
    assert SECRET_KEY not in text and SERVICE_TOKEN not in text


def test_access_log_is_off_by_default(tmp_path: Path) -> None:
    err = tmp_path / "stderr.log"
    env = dict(CALLOUT_ADMIN_TOKEN=ADMIN_TOKEN, CALLOUT_SERVICE_TOKEN=SERVICE_TOKEN,
               CALLOUT_SECRET_KEY=SECRET_KEY, CALLOUT_ADMIN_USER="admin",
               CALLOUT_ADMIN_PASSWORD="admin-pass-123", CALLOUT_CONFIG=str(CONFIG))
    server = ServerProcess(env, tmp_path / "stdout.log", "serve", stderr_path=err, cwd=tmp_path)
    try:
        server.wait_ready_sync()
    finally:
        server.stop()
    text = err.read_text()
    assert "GET /healthz" not in text and " INFO " in text  # text lines, no access lines


async def test_alembic_runs_on_the_configured_database(pg_url: str, tmp_path: Path) -> None:
    from callout_server.db.migrate import current_heads

    done = await asyncio.to_thread(
        _run, ["--config", str(CONFIG), "alembic", "current"], tmp_path,
        CALLOUT_DATABASE_URL=pg_url, CALLOUT_SECRET_KEY=SECRET_KEY)
    assert done.returncode == 0, done.stderr
    [head] = current_heads(pg_url)
    assert f"{head} (head)" in done.stdout
    usage = await asyncio.to_thread(_run, ["alembic", "-h"], tmp_path)
    assert usage.returncode == 0 and "callout-server alembic" in usage.stdout
    assert "downgrade" in usage.stdout  # alembic's own commands, passed through


def test_migrations_run_only_on_a_url_they_are_handed(tmp_path: Path) -> None:
    """env.py reads no settings: alembic without our configuration is told how to run it."""
    code = ("from alembic import command; from alembic.config import Config;"
            "from callout_server.db.migrate import MIGRATIONS_DIR;"
            "cfg = Config(); cfg.set_main_option('script_location', str(MIGRATIONS_DIR));"
            "command.current(cfg)")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(
        CALLOUT_CONFIG=str(CONFIG)), capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "callout-server alembic" in done.stderr


def test_debug_level_keeps_driver_loggers_quiet_unless_named() -> None:
    from callout_server.config.settings import ConfigFileError, load_settings
    from callout_server.logs import log_config

    levels = log_config("text", "debug")["loggers"]
    assert {name: levels[name]["level"] for name in (
        "sqlalchemy", "aiosqlite", "asyncpg", "httpx", "httpcore")} == {
        "sqlalchemy": "WARNING", "aiosqlite": "INFO", "asyncpg": "INFO", "httpx": "WARNING",
        "httpcore": "INFO"}
    assert log_config("text", "error")["loggers"]["aiosqlite"]["level"] == "ERROR"
    named = log_config("text", "info", {"sqlalchemy.engine": "info", "aiosqlite": "debug"})
    assert named["loggers"]["sqlalchemy.engine"]["level"] == "INFO"
    assert named["loggers"]["aiosqlite"]["level"] == "DEBUG"
    base = {"CALLOUT_CONFIG": str(CONFIG)}
    server = load_settings(env={**base, "CALLOUT_LOG_LEVELS": "sqlalchemy.engine=INFO, httpx=debug"}
                           ).server
    assert server.log_levels == {"sqlalchemy.engine": "info", "httpx": "debug"}
    for bad in ("sqlalchemy.engine", "httpx=loud"):
        with pytest.raises(ConfigFileError, match=r"server\.log_levels"):
            load_settings(env={**base, "CALLOUT_LOG_LEVELS": bad})
    parser = build_parser()
    args = parser.parse_args(["serve", "--logger", "aiosqlite=DEBUG", "--logger", "httpx=info"])
    assert args.logger == [("aiosqlite", "debug"), ("httpx", "info")]


def test_serve_at_debug_on_sqlite_logs_no_statement_parameters(tmp_path: Path) -> None:
    # At debug, aiosqlite wrote every call with its parameters: the customer's words kept
    # for shadow evaluation, password and token hashes.
    dead = free_port()
    err = tmp_path / "stderr.log"
    words = "客户的原话八七六五"
    env = dict(CALLOUT_ADMIN_TOKEN=ADMIN_TOKEN, CALLOUT_SERVICE_TOKEN=SERVICE_TOKEN,
               CALLOUT_SECRET_KEY=SECRET_KEY, CALLOUT_ADMIN_USER="admin",
               CALLOUT_ADMIN_PASSWORD="admin-pass-123", CALLOUT_CONFIG=str(CONFIG),
               CALLOUT_NLU_BASE_URL=f"http://127.0.0.1:{dead}/v1")
    server = ServerProcess(env, tmp_path / "stdout.log", "serve", stderr_path=err,
                           cwd=tmp_path, args=["--log-level", "debug"])
    try:
        url = server.wait_ready_sync().url
        r = httpx.post(f"{url}/api/nlu/decide", timeout=30,
                       headers={"Authorization": f"Bearer {SERVICE_TOKEN}"},
                       json={"call_id": "dbg-1", "utterance": words,
                             "intents": [{"name": "agree"}], "fallback_intent": "agree"})
        assert r.status_code == 200 and r.json()["fallback"] is True, r.text
        r = httpx.post(f"{url}/api/auth/login", timeout=30,
                       json={"username": "admin", "password": "admin-pass-123"})
        assert r.status_code == 204, r.text
    finally:
        server.stop()  # SIGTERM: the call log is written at the latest on the way out
    text = err.read_text()
    assert " DEBUG " in text  # the level applies to the server's own loggers
    assert words not in text and "$argon2" not in text
    assert "INSERT INTO" not in text and " aiosqlite " not in text


def test_first_migration_logs_one_line_per_step(tmp_path: Path) -> None:
    """A migration's docstring runs over several lines; its log line does not."""
    done = _run(["migrate", "--config", str(CONFIG)], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    steps = [x for x in lines if "Running upgrade" in x]
    assert len(steps) >= 8, done.stderr
    stamped = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ ")
    assert all(stamped.match(x) for x in lines), done.stderr


def test_a_message_over_several_lines_is_logged_as_one() -> None:
    from callout_server.logs import OneLine, TextFormatter

    record = logging.makeLogRecord({"msg": "Running %s", "args": ("upgrade a -> b, Two\nlines.",),
                                    "levelname": "INFO", "name": "alembic.runtime.migration"})
    assert OneLine().filter(record)
    assert TextFormatter().format(record).endswith("Running upgrade a -> b, Two lines.")
