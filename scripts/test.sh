#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine and runs all of it:
# the Python environment, PostgreSQL and Redis (started if they are not running),
# Debian's chromium for the browser tests and promtool for the alert rules (installed if
# absent), lint, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n==> %s\n' "$*"; }

log "python environment (.venv)"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'

log "PostgreSQL on 127.0.0.1:5432"
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432

log "Redis on 127.0.0.1:6379"
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping

log "chromium and CJK fonts for the browser tests"
if [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q && apt-get install -y -q chromium fonts-noto-cjk
fi
/usr/bin/chromium --version

log "promtool (Debian's prometheus package) for the monitoring rules' tests"
if ! command -v promtool >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q && apt-get install -y -q --no-install-recommends prometheus
fi
promtool --version | head -n1

log "nginx (Debian's) for the load-balancer test (deploy/nginx/nginx.conf)"
if [ ! -x /usr/sbin/nginx ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q && apt-get install -y -q --no-install-recommends nginx-light
fi
/usr/sbin/nginx -v

log "bytecode for the service and the tests"
# Some machines set PYTHONDONTWRITEBYTECODE: then every worker process the tests start would
# compile the whole service from source again (~0.3 s each, a few hundred times).
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m compileall -q -j 0 callout_server tests migrations bench

log "lint (ruff)"
.venv/bin/ruff check .

log "tests (pytest, ${PYTEST_WORKERS:-2} processes)"
# One process per core (pytest-xdist); a file's tests stay together in one process, as they
# share module fixtures. Each process migrates its own database (tests/fixtures/database.py).
# PYTEST_WORKERS=0 runs in this process only.
.venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadfile "$@"
