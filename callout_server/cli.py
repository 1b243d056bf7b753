"""`callout-server` command line: serve, migrate, redact-stored, alembic, emulator."""

from __future__ import annotations

import argparse
import logging.config
import math
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from callout_server.emulator.pace import add_pace_arguments
from callout_server.logs import LOG_FORMATS, LOG_LEVELS, log_config

if TYPE_CHECKING:
    from callout_server.config.settings import Settings

CONFIG_HELP = ("path to config.toml (default: $CALLOUT_CONFIG, else ./config.toml in the "
               "current directory)")


def _settings(args: argparse.Namespace) -> Settings:
    from callout_server.config.settings import load_settings

    return load_settings(args.config)


# serve's connection options -> the variables every worker process reads them from.
_CONNECTION_OPTIONS = {"keepalive_timeout": "CALLOUT_KEEPALIVE_TIMEOUT_S",
                       "header_timeout": "CALLOUT_HEADER_TIMEOUT_S",
                       "body_timeout": "CALLOUT_BODY_TIMEOUT_S",
                       "max_connections": "CALLOUT_MAX_CONNECTIONS"}


APP = "callout_server.app:create_app"


def _serve(args: argparse.Namespace) -> None:
    import uvicorn

    from callout_server.api.connections import (
        ConnectionLimits,
        raise_open_files_limit,
        uvicorn_protocol,
    )
    from callout_server.api.workers import ReusePortWorkers, reuse_port_available

    for option, variable in _CONNECTION_OPTIONS.items():
        if getattr(args, option) is not None:  # the workers load the settings themselves
            os.environ[variable] = str(getattr(args, option))
    # The workers share service-key limits; with Redis away each keeps 1/N of a limit.
    os.environ.setdefault("CALLOUT_WORKERS", str(args.workers))
    settings = _settings(args)
    if args.config:  # worker processes re-read the same file, wherever they start
        os.environ["CALLOUT_CONFIG"] = os.path.abspath(args.config)
    server = settings.server
    level = args.log_level or server.log_level
    loggers = server.log_levels | dict(args.logger or ())
    logging_config = log_config(args.log_format or server.log_format, level, loggers)
    logging.config.dictConfig(logging_config)
    trusted = server.forwarded_allow_ips if args.forwarded_allow_ips is None \
        else args.forwarded_allow_ips
    _open_files(settings, raise_open_files_limit)
    limits = ConnectionLimits(keepalive_timeout_s=server.keepalive_timeout_s,
                              header_timeout_s=server.header_timeout_s,
                              body_timeout_s=server.body_timeout_s,
                              max_connections=server.max_connections, locale=server.locale)
    options: dict[str, Any] = dict(
        factory=True,
        host=args.host or server.host,
        port=args.port or server.port,
        workers=args.workers,
        log_config=logging_config,  # applied again in every worker process
        log_level=level,
        loop="uvloop",
        # httptools with the idle, header and connection limits (api/connections.py).
        http=uvicorn_protocol(limits),
        timeout_keep_alive=max(1, math.ceil(server.keepalive_timeout_s)),
        # After SIGTERM: how long connections may take to finish (the streams were ended at
        # once); those still open then (clients that do not read) are dropped.
        timeout_graceful_shutdown=max(1, math.ceil(server.shutdown_grace_s)),
        # Off unless asked: a line per request costs latency on the dialer's hot path.
        access_log=server.access_log if args.access_log is None else args.access_log,
        # uvicorn trusts X-Forwarded-For from 127.0.0.1 by default; we trust no proxy
        # unless told, so a client cannot choose the address the login throttle counts.
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or None,
    )
    if args.workers > 1 and reuse_port_available():
        # A listening socket per worker, so connections spread over them (api/workers.py).
        ReusePortWorkers(uvicorn.Config(APP, **options)).run()
    else:
        uvicorn.run(APP, **options)


def _open_files(settings: Settings, raise_limit: Callable[[int], tuple[int, int]]) -> None:
    """Descriptors one worker may need: its connections, its upstream pools, its database
    pool, and some to spare; the soft limit is raised towards that, else a warning says so
    (past the limit, accept() fails and every caller of the worker waits)."""
    pools = sum(limits.max_connections for limits in settings.limits.pools().values())
    needed = settings.server.max_connections + pools + 2 * settings.database.pool_size + 128
    soft, _ = raise_limit(needed)
    if soft < needed:
        logging.getLogger("callout_server").warning(
            "open-file limit %d is below the %d descriptors a worker may need "
            "([server] max_connections %d + [limits.*] max_connections %d + the database "
            "pool): raise it (ulimit -n, LimitNOFILE=) or lower those", soft, needed,
            settings.server.max_connections, pools)


def _migrate(args: argparse.Namespace) -> None:
    from callout_server.db.migrate import upgrade_to_head

    settings = _settings(args)
    server = settings.server
    logging.config.dictConfig(log_config(server.log_format, server.log_level, server.log_levels))
    upgrade_to_head(settings.database.effective_url)
    print("database schema is at head")


def _redact_stored(args: argparse.Namespace) -> None:
    """Redact rows stored before redaction ran (calllog/backfill.py), with progress."""
    import asyncio

    from callout_server.calllog.backfill import TARGETS, redact_stored
    from callout_server.config.privacy import privacy_from_settings
    from callout_server.db.engine import Database
    from callout_server.evaluation.redact import STORED

    settings = _settings(args)
    privacy = privacy_from_settings(settings)
    if not privacy.enabled:
        print("callout-server: error: [privacy] redact = false: nothing would be redacted",
              file=sys.stderr)
        raise SystemExit(2)

    async def run() -> dict[str, int]:
        db = Database(settings.database.effective_url)
        try:
            return await redact_stored(db, privacy, (*TARGETS, STORED), batch=args.batch,
                                       progress=lambda line: print(line, flush=True))
        finally:
            await db.dispose()

    done = asyncio.run(run())
    print(f"done: {sum(done.values())} rows redacted")


def _alembic(args: argparse.Namespace) -> None:
    """Alembic's own command line on the configured database (history, current, downgrade,
    revision --autogenerate, ...): the URL comes from config.toml / CALLOUT_DATABASE_URL."""
    from alembic.config import CommandLine

    from callout_server.db.migrate import alembic_config

    cli = CommandLine(prog="callout-server alembic")
    options = cli.parser.parse_args(args.alembic_args)
    if not hasattr(options, "cmd"):  # no command given: alembic's usage, as alembic does
        cli.parser.error("too few arguments")
    settings = _settings(args)
    logging.config.dictConfig(log_config(settings.server.log_format, settings.server.log_level))
    cli.run_cmd(alembic_config(settings.database.effective_url, cmd_opts=options), options)


def _emulator(args: argparse.Namespace) -> None:
    from callout_server.emulator import main as emulator_main

    logging.config.dictConfig(log_config())
    emulator_main(["--host", args.host, "--port", str(args.port),
                   "--chat-ttft-ms", str(args.chat_ttft_ms),
                   "--chat-token-ms", str(args.chat_token_ms)])


def _logger_level(value: str) -> tuple[str, str]:
    name, eq, level = value.partition("=")
    level = level.strip().lower()
    if not eq or not name.strip() or level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"expected NAME=LEVEL with LEVEL one of {', '.join(LOG_LEVELS)}: {value!r}")
    return name.strip(), level


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
                       help="worker processes on this port (default 1), each with a "
                            "listening socket of its own (SO_REUSEPORT: the kernel spreads "
                            "connections over them). They follow configuration changes "
                            "through Redis, else by polling the database every [redis] "
                            "poll_interval_s (SQLite too). Without Redis, chat sessions live "
                            "in one worker: serve the chat tier with one worker per port "
                            "behind a balancer sticky on call_id (docs/chat.md)")
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
    serve.add_argument("--log-level", choices=LOG_LEVELS,
                       help="lowest level logged (default: [server] log_level or "
                            "$CALLOUT_LOG_LEVEL, info)")
    serve.add_argument("--max-connections", type=int, metavar="N",
                       help="open connections per worker; beyond, a new one is answered 503 "
                            "and closed (default: [server] max_connections or "
                            "$CALLOUT_MAX_CONNECTIONS, 2048)")
    serve.add_argument("--keepalive-timeout", type=float, metavar="SECONDS",
                       help="close a connection idle this long, just opened or between "
                            "requests (default: [server] keepalive_timeout_s or "
                            "$CALLOUT_KEEPALIVE_TIMEOUT_S, 20)")
    serve.add_argument("--header-timeout", type=float, metavar="SECONDS",
                       help="a request's headers must arrive within this long of its first "
                            "byte, else 408 and the connection is closed (default: [server] "
                            "header_timeout_s or $CALLOUT_HEADER_TIMEOUT_S, 10)")
    serve.add_argument("--body-timeout", type=float, metavar="SECONDS",
                       help="a request's body must arrive within this long of its headers, "
                            "else 408 and the connection is closed (default: [server] "
                            "body_timeout_s or $CALLOUT_BODY_TIMEOUT_S, 30)")
    serve.add_argument("--logger", metavar="NAME=LEVEL", action="append", type=_logger_level,
                       help="the level of one logger by name, repeatable; the only way the "
                            "database and HTTP drivers (sqlalchemy, aiosqlite, asyncpg, httpx, "
                            "httpcore) log below INFO, whatever --log-level says: e.g. "
                            "--logger sqlalchemy.engine=info logs SQL statements with their "
                            "parameters (default: [server] log_levels or $CALLOUT_LOG_LEVELS)")
    serve.set_defaults(func=_serve)

    migrate = sub.add_parser("migrate", parents=[with_config],
                             help="bring the database schema to head",
                             description="Bring the database schema to head (alembic).")
    migrate.set_defaults(func=_migrate)

    redact = sub.add_parser(
        "redact-stored", parents=[with_config],
        help="redact customers' personal data in rows stored before redaction ran",
        description="Replace personal data by pseudonyms in the rows stored before "
                    "redaction ran or while [privacy] redact = false (call log, NLU inputs, "
                    "evaluation rows, audit trail), with the keys and kinds of [privacy]. "
                    "Re-runnable: rows already redacted are skipped (docs/privacy.md).")
    redact.add_argument("--batch", type=int, default=500, metavar="N",
                        help="rows per transaction (default 500)")
    redact.set_defaults(func=_redact_stored)

    # Everything after `alembic` is alembic's (its own -h, -x, -n, ...): `+` is this
    # parser's option prefix, so no dash-argument is taken for ours. Name the config file
    # before the command: `callout-server --config PATH alembic history`.
    alembic = sub.add_parser("alembic", prefix_chars="+", add_help=False,
                             help="alembic's command line on the configured database",
                             description="Alembic's own commands (history, current, "
                                         "downgrade, revision, ...) on the configured "
                                         "database: `callout-server alembic -h` lists them.")
    alembic.add_argument("alembic_args", nargs="*", metavar="ARGS",
                         help="alembic's arguments, as `alembic` takes them")
    alembic.set_defaults(func=_alembic)

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
