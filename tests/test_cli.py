"""The command line as an operator meets it: `python -m callout_server ...` as a subprocess.

A missing config file is one line naming the path tried and how to name another; every
option says what it does; `serve` started from another directory with `--config` serves,
writes JSON log lines with an access log on request, and logs a failed model call.
"""

from __future__ import annotations

import argparse
import json
import os
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


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_of_every_command_says_what_it_does() -> None:
    parser = build_parser()
    commands = _subparsers(parser)
    assert set(commands) == {"serve", "migrate", "emulator"}
    for name, sub in [("", parser), *commands.items()]:
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings} has no description"
    for name in ("serve", "migrate"):  # the config file is named after the command too
        assert any("--config" in a.option_strings for a in commands[name]._actions)


def test_serve_help_lists_its_options(tmp_path: Path) -> None:
    done = _run(["serve", "--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    for text in ("--config PATH", "--access-log", "--log-format {text,json}", "--workers",
                 "address to bind", "one JSON object per line"):
        assert text in done.stdout, text


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
