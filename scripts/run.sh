#!/usr/bin/env bash
# Installs callout-server into .venv and serves it with the embedded defaults
# (SQLite file, in-process bus): nothing else needs to be installed or running.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
exec .venv/bin/callout-server serve "$@"
