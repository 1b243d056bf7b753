"""Typed process settings: `config.toml` first, then `CALLOUT_*` environment overrides.

`${VAR}` and `${VAR:-default}` in any string of the file are replaced from the
environment, so no key needs to live in the file. Validated once at start-up.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import tomli
from pydantic import Field, field_validator, model_validator

from callout_server.audit.settings import AuditSettings
from callout_server.auth.settings import AuthSettings
from callout_server.config.model import TIERS, Tier
from callout_server.config.tier_settings import LimitsSettings, LLMSection, LLMSections, Section
from callout_server.i18n import invalid
from callout_server.llm import (
    LLMConfig,
    TargetPolicy,
)
from callout_server.phrases import GlobalIntent, default_intents, parse_intents
from callout_server.privacy import PrivacySettings

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigFileError(ValueError):
    """config.toml is missing, unreadable or invalid; the message names the key."""


def interpolate(value: Any, env: dict[str, str] | None = None) -> Any:
    """Replace `${VAR}` / `${VAR:-default}` in every string, recursively."""
    env = os.environ if env is None else env  # type: ignore[assignment]
    if isinstance(value, str):
        return _ENV_REF.sub(lambda m: env.get(m.group(1), m.group(2) or ""), value)
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    return value


def parse_logger_levels(text: str) -> dict[str, str]:
    """`"name=level,name=level"` (the environment's and the command line's spelling)."""
    levels: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, eq, level = item.partition("=")
        if not eq or not name.strip():
            raise invalid("logger_level_pair")
        levels[name.strip()] = level.strip().lower()
    return levels


class ServerSettings(Section):
    host: str = "127.0.0.1"
    port: int = 8080
    locale: Literal["zh", "en"] = "zh"
    log_level: str = "info"
    # Request bodies beyond these sizes get 413 before they are read or parsed.
    max_body_bytes: int = Field(1024 * 1024, ge=1024)
    nlu_max_body_bytes: int = Field(128 * 1024, ge=1024)
    # Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (uvicorn's
    # --forwarded-allow-ips): "" trusts none, so a client cannot pick its own address
    # (the login throttle counts per address). Comma-separated IPs/CIDRs, or "*".
    forwarded_allow_ips: str = ""
    # Configurations may point at cloud-metadata and link-local addresses (169.254.0.0/16,
    # fe80::/10, 100.100.100.200, fd00:ec2::254, metadata.google.internal ...): only a lab
    # that serves a model there needs it (llm/targets.py).
    allow_metadata_upstreams: bool = False
    # SIGTERM: streams end `cancelled` at once; connections whose clients do not read them
    # out are waited for this long, then dropped, and the worker exits (docs/chat.md).
    shutdown_grace_s: float = Field(5.0, ge=1, le=600)  # whole seconds (uvicorn)
    log_format: Literal["text", "json"] = "text"  # json: one JSON object per log line
    access_log: bool = False  # a line per request (uvicorn's); off: it costs the hot path
    # FastAPI's native OpenTelemetry (traces, metrics, logs to the global providers an SDK
    # sets up). Off: not even its check per request (~2.5 µs of a decision, bench/README.md).
    opentelemetry: bool = False
    # Levels by logger name (`{"sqlalchemy.engine" = "info"}`): the only way the database and
    # HTTP drivers log below their floors (logs.DRIVER_LOGGERS), whatever `log_level` says.
    # From the environment: CALLOUT_LOG_LEVELS="sqlalchemy.engine=info,httpx=debug".
    log_levels: dict[str, Literal["debug", "info", "warning", "error"]] = Field(
        default_factory=dict)

    @field_validator("log_levels", mode="before")
    @classmethod
    def _levels_from_text(cls, v: Any) -> Any:
        return parse_logger_levels(v) if isinstance(v, str) else v

    # What a connection may cost before and while it sends a request (per worker; the
    # mapping onto uvicorn and granian is in docs/configuration.md). Dialers keep their
    # connections: the idle limit is longer than uvicorn's 5 s.
    keepalive_timeout_s: float = Field(20.0, gt=0, le=3600)  # idle: opened, or between requests
    header_timeout_s: float = Field(10.0, gt=0, le=600)  # first byte to the end of the headers
    body_timeout_s: float = Field(30.0, gt=0, le=3600)  # end of the headers to the end of the body
    # Open connections per worker; beyond it a new one gets 503 too_many_connections.
    max_connections: int = Field(2048, ge=1, le=1_000_000)

    def body_limit(self, path: str) -> int:
        return self.body_limit_named(path)[0]

    def body_limit_named(self, path: str) -> tuple[int, str]:
        """The largest body `path` takes, and the setting that says so (named in the 413)."""
        if path.startswith("/api/nlu/"):
            return self.nlu_max_body_bytes, "nlu_max_body_bytes"
        return self.max_body_bytes, "max_body_bytes"


class DatabaseSettings(Section):
    url: str = ""  # empty: embedded SQLite file `sqlite_path`
    sqlite_path: str = "./callout.db"
    pool_size: int = 10
    # Run the migrations at worker start. None: yes for the embedded SQLite file, no for
    # PostgreSQL (run `callout-server migrate` once per deploy instead).
    auto_migrate: bool | None = None
    connect_timeout_s: float = Field(3.0, gt=0)
    # Any one statement: a database that stops answering without closing the connection (a
    # failover, a network drop) fails it after this long, not when TCP gives up (~15 min).
    statement_timeout_s: float = Field(60.0, gt=0)

    @property
    def should_auto_migrate(self) -> bool:
        return self.is_sqlite if self.auto_migrate is None else self.auto_migrate

    @property
    def effective_url(self) -> str:
        return self.url or f"sqlite+aiosqlite:///{self.sqlite_path}"

    @property
    def is_sqlite(self) -> bool:
        return self.effective_url.startswith("sqlite")


class RedisSettings(Section):
    url: str = ""  # empty: single process, in-process bus
    channel_prefix: str = "callout"
    poll_interval_s: float = 3.0


class ServiceKeysSettings(Section):
    # How often each worker writes the keys' "last used" times (batched, in the background).
    last_used_flush_s: float = Field(5.0, gt=0)
    # Workers sharing the limits; with Redis away each counts 1/workers of a limit alone.
    # The `serve --workers N` command sets it (CALLOUT_WORKERS); several hosts: the total.
    workers: int = Field(1, ge=1, le=10_000)
    # An in-flight slot held by a worker that died is free again after this long.
    lease_s: float = Field(300.0, gt=0)
    # The `rpm` window (a sliding minute; tests shorten it).
    window_s: float = Field(60.0, gt=0, le=3600)
    # Admissions a worker reserved and did not use go back to Redis after this long, and so
    # do in-flight slots it leased and left idle this long.
    reserve_s: float = Field(1.0, gt=0, le=60)
    # The most admissions (and idle slots) a worker reserves beyond those waiting.
    reserve_max: int = Field(512, ge=1, le=10_000)


class ChatSettings(Section):
    batch_sentences: int = Field(3, ge=1, le=10)
    first_clause_min_chars: int = Field(10, ge=1)
    session_ttl_s: float = Field(1800.0, gt=0)
    max_sessions: int = Field(10_000, ge=1)  # per worker; beyond it, 503 too_many_sessions
    # Per worker: system prompts and tools of all sessions together (the histories are
    # bounded per session by history_turns); beyond it, 503 too_many_sessions.
    max_sessions_bytes: int = Field(256 * 1024 * 1024, ge=1024)
    ttft_timeout_s: float = Field(5.0, gt=0)
    read_timeout_s: float = Field(8.0, gt=0)
    total_timeout_s: float = Field(60.0, gt=0)
    timeout_apology: str = "不好意思，我这边刚才没听清，您能再说一遍吗？"
    # Text a turn holds for a reader that has not taken it yet (tiers/chat/outbox.py); past
    # it the reader is a slow consumer: the turn ends `error` `slow_consumer`.
    max_unread_bytes: int = Field(256 * 1024, ge=1024)


class DiagnosticsSettings(Section):
    retention_days: int = Field(30, ge=1)
    queue_size: int = Field(10_000, ge=10)
    batch_size: int = Field(200, ge=1)
    flush_interval_s: float = Field(0.5, gt=0)
    # Records waiting this long with no write succeeding: /healthz says the writer is stalled.
    stalled_after_s: float = Field(30.0, gt=0)


class CalllogSettings(Section):
    # Days each NLU call's inputs (utterance, context, intents, slots, instructions) and
    # decision are kept for shadow evaluation: customers' words. 0 keeps none. Never longer
    # than [diagnostics] retention_days.
    nlu_inputs_days: int = Field(7, ge=0, le=3650)


class EvaluationSettings(Section):
    # Replays in flight at once per evaluation: live traffic is never queued behind them.
    concurrency: int = Field(4, ge=1, le=64)
    # Replays started per second at most: each costs the worker what a live decision costs,
    # so this bounds what an evaluation takes from live calls (bench/bench_evaluation.py).
    max_rate: float = Field(20.0, gt=0, le=1000)
    # The most calls one evaluation may replay (its `limit`).
    max_calls: int = Field(5000, ge=1, le=100_000)
    # A running evaluation whose worker has not reported for this long is marked failed.
    stale_after_s: float = Field(15.0, gt=0)
    # No replay starts while the event loop runs this late (live requests are queueing).
    busy_lag_ms: float = Field(10.0, gt=0, le=1000)


class GlobalIntentsSettings(Section):
    # What a fresh deployment serves until an operator saves the list in the console (the
    # database holds it from then on). `items` absent: the shipped opt_out, complaint and
    # human_agent (callout_server/phrases/data/global_intents.toml, Chinese and English).
    # `items` given: those rows instead (name, description, action, enabled, phrases).
    # enabled = false: the same list, every intent disabled (decisions as before).
    enabled: bool = True
    items: list[dict[str, Any]] | None = None

    @field_validator("items")
    @classmethod
    def _well_formed(cls, v: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if v is not None:
            try:
                parse_intents(v)  # a malformed row stops the start, naming the intent
            except ValueError as exc:
                raise invalid("global_intents_rows", detail=str(exc)) from exc
        return v

    def defaults(self) -> tuple[GlobalIntent, ...]:
        items = default_intents() if self.items is None else parse_intents(self.items)
        if not self.enabled:
            items = tuple(replace(i, enabled=False) for i in items)
        return items
class CanarySettings(Section):
    # How often each worker compares a running canary's figures with its rollback limits.
    check_interval_s: float = Field(1.0, gt=0, le=60)


class Settings(Section):
    server: ServerSettings = Field(default_factory=ServerSettings)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    llm: LLMSections
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    diagnostics: DiagnosticsSettings = Field(default_factory=DiagnosticsSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    calllog: CalllogSettings = Field(default_factory=CalllogSettings)
    evaluation: EvaluationSettings = Field(default_factory=EvaluationSettings)
    global_intents: GlobalIntentsSettings = Field(default_factory=GlobalIntentsSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)

    @property
    def retention_days(self) -> dict[str, int]:
        """Days kept per data class: `[privacy] retention_days`, else the older settings."""
        r = self.privacy.retention_days
        call_log = r.call_log or self.diagnostics.retention_days
        nlu_inputs = self.calllog.nlu_inputs_days if r.nlu_inputs is None else r.nlu_inputs
        nlu_inputs = min(nlu_inputs, call_log)
        return {"call_log": call_log, "nlu_inputs": nlu_inputs,
                "evaluations": r.evaluations or max(nlu_inputs, 1),
                "audit": r.audit or self.audit.retention_days}
    canary: CanarySettings = Field(default_factory=CanarySettings)
    service_keys: ServiceKeysSettings = Field(default_factory=ServiceKeysSettings)

    @field_validator("llm", mode="before")
    @classmethod
    def _tiers_present(cls, v: Any) -> Any:
        missing = [t for t in TIERS if not isinstance(v, dict) or t not in v]
        if missing:
            raise invalid("llm_section_missing", tier=missing[0])
        return v

    @model_validator(mode="after")
    def _no_metadata_targets(self) -> Settings:
        policy = self.targets
        for tier in TIERS:
            section: LLMSection = getattr(self.llm, tier)
            urls = [("base_url", section.base_url)] + [
                (f"endpoints.{i}.base_url", ep.base_url) for i, ep in enumerate(section.endpoints)]
            for key, url in urls:
                refusal = policy.literal(url)
                if refusal is not None:  # names are judged when they are resolved, per call
                    raise invalid("url_blocked_target_in_file", key=f"llm.{tier}.{key}",
                                  address=refusal.address)
        return self

    @property
    def targets(self) -> TargetPolicy:
        return TargetPolicy(allow_metadata=self.server.allow_metadata_upstreams)

    @cached_property
    def file_llm_configs(self) -> dict[Tier, LLMConfig]:
        return {t: getattr(self.llm, t).to_config(t) for t in TIERS}


# Environment variable -> (section, key). The contract's names; they win over the file.
ENV_OVERRIDES: dict[str, tuple[str, str]] = {
    "CALLOUT_DATABASE_URL": ("database", "url"),
    "CALLOUT_REDIS_URL": ("redis", "url"),
    "CALLOUT_WORKERS": ("service_keys", "workers"),
    "CALLOUT_SECRET_KEY": ("auth", "secret_key"),
    "CALLOUT_ADMIN_TOKEN": ("auth", "admin_token"),
    "CALLOUT_SERVICE_TOKEN": ("auth", "service_token"),
    "CALLOUT_ADMIN_USER": ("auth", "admin_user"),
    "CALLOUT_ADMIN_PASSWORD": ("auth", "admin_password"),
    "CALLOUT_PASSWORD_HASHING": ("auth", "password_hashing"),
    "CALLOUT_LOCALE": ("server", "locale"),
    "CALLOUT_SQLITE_PATH": ("database", "sqlite_path"),
    "CALLOUT_AUTO_MIGRATE": ("database", "auto_migrate"),
    "CALLOUT_SECRET_KEY_FILE": ("auth", "secret_key_file"),
    "CALLOUT_REDIS_CHANNEL_PREFIX": ("redis", "channel_prefix"),
    "CALLOUT_POLL_INTERVAL_S": ("redis", "poll_interval_s"),
    "CALLOUT_FORWARDED_ALLOW_IPS": ("server", "forwarded_allow_ips"),
    "CALLOUT_MAX_BODY_BYTES": ("server", "max_body_bytes"),
    "CALLOUT_NLU_MAX_BODY_BYTES": ("server", "nlu_max_body_bytes"),
    "CALLOUT_LOG_FORMAT": ("server", "log_format"),
    "CALLOUT_ACCESS_LOG": ("server", "access_log"),
    "CALLOUT_OPENTELEMETRY": ("server", "opentelemetry"),
    "CALLOUT_LOG_LEVEL": ("server", "log_level"),
    "CALLOUT_LOG_LEVELS": ("server", "log_levels"),
    "CALLOUT_ALLOW_METADATA_UPSTREAMS": ("server", "allow_metadata_upstreams"),
    "CALLOUT_KEEPALIVE_TIMEOUT_S": ("server", "keepalive_timeout_s"),
    "CALLOUT_HEADER_TIMEOUT_S": ("server", "header_timeout_s"),
    "CALLOUT_BODY_TIMEOUT_S": ("server", "body_timeout_s"),
    "CALLOUT_MAX_CONNECTIONS": ("server", "max_connections"),
    "CALLOUT_SHUTDOWN_GRACE_S": ("server", "shutdown_grace_s"),
    "CALLOUT_AUDIT_RETENTION_DAYS": ("audit", "retention_days"),
    "CALLOUT_GLOBAL_INTENTS_ENABLED": ("global_intents", "enabled"),
    "CALLOUT_PRIVACY_REDACT": ("privacy", "redact"),
    "CALLOUT_PRIVACY_KEY": ("privacy", "key"),
}


def _apply_override(data: dict[str, Any], dotted: str, value: Any) -> None:
    *sections, key = dotted.replace("__", ".").split(".")
    node = data
    for section in sections:
        node = node.setdefault(section, {})
    node[key] = value


def _not_found(file: Path, path: object, env: dict[str, str]) -> str:
    """Which path was tried, where it came from, and how to name another."""
    if path:
        source = "given with --config"
    elif env.get("CALLOUT_CONFIG"):
        source = "from CALLOUT_CONFIG"
    else:
        source = f"the default ./config.toml, relative to the current directory {Path.cwd()}"
    return (f"config file not found: {file.absolute()} ({source}); point at one with "
            f"--config PATH or CALLOUT_CONFIG=PATH")


def load_settings(path: str | os.PathLike[str] | None = None,
                  env: dict[str, str] | None = None,
                  overrides: dict[str, Any] | None = None) -> Settings:
    """Read config.toml (`CALLOUT_CONFIG`, default ./config.toml) and apply the environment.

    `overrides` (tests, tools) win over both: dotted keys such as
    `{"redis.poll_interval_s": 0.5, "llm.nlu.base_url": "http://..."}`.
    """
    env = dict(os.environ) if env is None else env
    file = Path(path or env.get("CALLOUT_CONFIG") or "config.toml")
    try:
        raw = tomli.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigFileError(_not_found(file, path, env)) from exc
    except OSError as exc:  # a directory, no permission: name the path and the reason
        raise ConfigFileError(f"cannot read config file {file.absolute()}: "
                              f"{exc.strerror or exc}") from exc
    except tomli.TOMLDecodeError as exc:
        raise ConfigFileError(f"{file}: invalid TOML: {exc}") from exc
    data = interpolate(raw, env)
    for var, (section, key) in ENV_OVERRIDES.items():
        if env.get(var):
            data.setdefault(section, {})[key] = env[var]
    for dotted, value in (overrides or {}).items():
        _apply_override(data, dotted, value)
    try:
        return Settings.model_validate(data)
    except ValueError as exc:
        # The message names the key (`llm.nlu.api_key`); inputs are hidden (`Section`).
        raise ConfigFileError(f"{file}: {exc}") from exc
