"""`callout-server` command line: serve, migrate, emulator."""

from __future__ import annotations

import argparse
import logging.config
import os
import sys
from typing import TYPE_CHECKING

from callout_server.emulator.pace import add_pace_arguments
from callout_server.logs import LOG_FORMATS, log_config

if TYPE_CHECKING:
    from callout_server.config.settings import Settings

CONFIG_HELP = ("path to config.toml (default: $CALLOUT_CONFIG, else ./config.toml in the "
               "current directory)")


def _settings(args: argparse.Namespace) -> Settings:
    from callout_server.config.settings import load_settings

    return load_settings(args.config)


def _serve(args: argparse.Namespace) -> None:
    import uvicorn

    settings = _settings(args)
    if args.config:  # worker processes re-read the same file, wherever they start
        os.environ["CALLOUT_CONFIG"] = os.path.abspath(args.config)
    server = settings.server
    level = args.log_level or server.log_level
    logging_config = log_config(args.log_format or server.log_format, level)
    logging.config.dictConfig(logging_config)
    trusted = server.forwarded_allow_ips if args.forwarded_allow_ips is None \
        else args.forwarded_allow_ips
    uvicorn.run(
        "callout_server.app:create_app",
        factory=True,
        host=args.host or server.host,
        port=args.port or server.port,
        workers=args.workers,
        log_config=logging_config,  # applied again in every worker process
        log_level=level,
        loop="uvloop",
        http="httptools",
        # Off unless asked: a line per request costs latency on the dialer's hot path.
        access_log=server.access_log if args.access_log is None else args.access_log,
        # uvicorn trusts X-Forwarded-For from 127.0.0.1 by default; we trust no proxy
        # unless told, so a client cannot choose the address the login throttle counts.
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or None,
    )


def _migrate(args: argparse.Namespace) -> None:
    from callout_server.db.migrate import upgrade_to_head

    settings = _settings(args)
    logging.config.dictConfig(log_config(settings.server.log_format, settings.server.log_level))
    upgrade_to_head(settings.database.effective_url)
    print("database schema is at head")


def _emulator(args: argparse.Namespace) -> None:
    from callout_server.emulator import main as emulator_main

    logging.config.dictConfig(log_config())
    emulator_main(["--host", args.host, "--port", str(args.port),
                   "--chat-ttft-ms", str(args.chat_ttft_ms),
                   "--chat-token-ms", str(args.chat_token_ms)])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="callout-server", description=__doc__)
    parser.add_argument("--config", metavar="PATH", help=CONFIG_HELP)
    # Also accepted after the command (`serve --config PATH`); SUPPRESS keeps a value
    # given before the command when none is given after it.
    with_config = argparse.ArgumentParser(add_help=False)
    with_config.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                             help=CONFIG_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", parents=[with_config], help="serve the API and the console",
                           description="Serve the HTTP API and the console (/admin).")
    serve.add_argument("--host", help="address to bind (default: [server] host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (default: [server] port, 8080)")
    serve.add_argument("--workers", type=int, default=1,
                       help="worker processes on this port (default 1). They follow "
                            "configuration changes through Redis, else by polling the "
                            "database every [redis] poll_interval_s (SQLite too). Chat "
                            "sessions live in one worker: serve the chat tier with one "
                            "worker per port behind a balancer sticky on call_id "
                            "(docs/chat.md)")
    serve.add_argument("--forwarded-allow-ips", metavar="IPS",
                       help="proxies whose X-Forwarded-For is trusted, comma-separated IPs or "
                            "CIDRs, or '*' (default: [server] forwarded_allow_ips or "
                            "$CALLOUT_FORWARDED_ALLOW_IPS; empty = none)")
    serve.add_argument("--access-log", action=argparse.BooleanOptionalAction, default=None,
                       help="log a line per HTTP request (default: [server] access_log or "
                            "$CALLOUT_ACCESS_LOG, off)")
    serve.add_argument("--log-format", choices=LOG_FORMATS,
                       help="text lines, or one JSON object per line (default: [server] "
                            "log_format or $CALLOUT_LOG_FORMAT, text)")
    serve.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                       help="lowest level logged (default: [server] log_level or "
                            "$CALLOUT_LOG_LEVEL, info)")
    serve.set_defaults(func=_serve)

    migrate = sub.add_parser("migrate", parents=[with_config],
                             help="bring the database schema to head",
                             description="Bring the database schema to head (alembic).")
    migrate.set_defaults(func=_migrate)

    emu = sub.add_parser("emulator", help="run the OpenAI-compatible vendor emulator",
                         description="Run the bundled vendor emulator, a stand-in for real "
                                     "LLM servers (it reads no config file).")
    emu.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    emu.add_argument("--port", type=int, default=8900,
                     help="port to bind (default 8900, where config.toml points; 0 = any)")
    add_pace_arguments(emu)
    emu.set_defaults(func=_emulator)
    return parser


def main(argv: list[str] | None = None) -> None:
    from callout_server.config.settings import ConfigFileError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except ConfigFileError as exc:
        # A configuration problem is the operator's to fix: one line, no traceback.
        print(f"callout-server: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main(sys.argv[1:])
