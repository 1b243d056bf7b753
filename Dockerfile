# callout-server: the API, the console and the configuration hot refresh, in one image.
# Build from the repository root:  docker build -t callout-server .
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY callout_server ./callout_server
# A regular (non-editable) install: the alembic migrations ship inside the package
# (callout_server/db/migrations), so `callout-server migrate` works from site-packages.
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
RUN useradd --system --uid 10001 --home-dir /app callout
COPY --from=build /install /usr/local
WORKDIR /app
COPY config.toml ./config.toml
COPY admin_ui ./admin_ui
ENV CALLOUT_CONFIG=/app/config.toml \
    CALLOUT_ADMIN_UI_DIR=/app/admin_ui \
    CALLOUT_SQLITE_PATH=/app/data/callout.db \
    PYTHONUNBUFFERED=1
RUN mkdir -p /app/data && chown callout /app/data
USER callout
EXPOSE 8080
# Migrations first (idempotent; concurrent containers serialise on an advisory lock), then
# the server. WORKERS processes share the configuration through PostgreSQL + Redis.
CMD ["sh", "-c", "callout-server migrate && exec callout-server serve --host 0.0.0.0 --port 8080 --workers ${WORKERS:-2}"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=2).status == 200 else 1)"
