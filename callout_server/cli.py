"""`callout-server` command line: serve, migrate, emulator."""

from __future__ import annotations

import argparse
import logging
import os
import sys


def _serve(args: argparse.Namespace) -> None:
    import uvicorn

    from callout_server.config.settings import load_settings

    settings = load_settings(args.config)
    if args.config:
        os.environ["CALLOUT_CONFIG"] = args.config  # worker processes re-read the same file
    trusted = settings.server.forwarded_allow_ips if args.forwarded_allow_ips is None \
        else args.forwarded_allow_ips
    uvicorn.run(
        "callout_server.app:create_app",
        factory=True,
        host=args.host or settings.server.host,
        port=args.port or settings.server.port,
        workers=args.workers,
        log_level=settings.server.log_level,
        loop="uvloop",
        http="httptools",
        access_log=False,  # per-request log lines cost latency on the dialer's hot path
        # uvicorn trusts X-Forwarded-For from 127.0.0.1 by default; we trust no proxy
        # unless told, so a client cannot choose the address the login throttle counts.
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or None,
    )


def _migrate(args: argparse.Namespace) -> None:
    from callout_server.config.settings import load_settings
    from callout_server.db.migrate import upgrade_to_head

    settings = load_settings(args.config)
    upgrade_to_head(settings.database.effective_url)
    print("database schema is at head")


def _emulator(args: argparse.Namespace) -> None:
    from callout_server.emulator import main as emulator_main

    emulator_main(["--host", args.host, "--port", str(args.port)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="callout-server", description=__doc__)
    parser.add_argument("--config", help="path to config.toml (default: $CALLOUT_CONFIG or ./config.toml)")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the API and the console")
    serve.add_argument("--host", help="address to bind (default: [server] host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (default: [server] port, 8080)")
    serve.add_argument("--workers", type=int, default=1,
                       help="worker processes (default 1; several need PostgreSQL, see README)")
    serve.add_argument("--forwarded-allow-ips", metavar="IPS",
                       help="proxies whose X-Forwarded-For is trusted, comma-separated IPs or "
                            "CIDRs, or '*' (default: [server] forwarded_allow_ips or "
                            "$CALLOUT_FORWARDED_ALLOW_IPS; empty = none)")
    serve.set_defaults(func=_serve)

    migrate = sub.add_parser("migrate", help="bring the database schema to head")
    migrate.set_defaults(func=_migrate)

    emu = sub.add_parser("emulator", help="run the OpenAI-compatible vendor emulator")
    emu.add_argument("--host", default="127.0.0.1")
    emu.add_argument("--port", type=int, default=8900)
    emu.set_defaults(func=_emulator)

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)  # start-up noise
    args.func(args)


if __name__ == "__main__":
    main(sys.argv[1:])
