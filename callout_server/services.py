"""The composition root: one worker's long-lived services, built and started in order.

Nothing but `app.py` and `cli.py` imports this module. Every service is a plain object whose
constructor takes what it needs; `start()` builds them in dependency order and files each
under its class in `components`, where a route's `provide(Cls)` dependency finds it.
`stop()` takes them down in reverse, and one component's failing shutdown never skips the
others.

    secrets -> (SQLite: migrate) -> db -> llm client -> upstream pools
            -> snapshot loader -> store -> sync -> config service -> connection tester
            -> auth -> service keys -> audit log (retention purge) -> people
            -> call-log recorder -> diagnostics queries
            -> tiers (nlu, drafts + scripts, chat) -> health
            -> shadow evaluation (over config and the nlu tier)

The tiers read the configuration through the store on every call (`store.current`, memory
only): an operator's save swaps the snapshot and the very next call uses it, with no query.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from callout_server.audit.log import AuditLog
from callout_server.auth.service import AuthService
from callout_server.calllog.metrics import CONFIG_GENERATION, watch_writer
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.service import DiagnosticsQueries
from callout_server.calllog.usage_service import UsageQueries
from callout_server.config.bus import ConfigSync
from callout_server.config.drains import DRAINS, DrainService
from callout_server.config.live import LiveWrites
from callout_server.config.secrets import SecretBox, secret_box_from_settings
from callout_server.config.service import ConfigService
from callout_server.config.settings import Settings
from callout_server.config.snapshot import ConfigStore, SnapshotLoader
from callout_server.connectivity.models import ModelLister
from callout_server.connectivity.service import ConnectionTester
from callout_server.connectivity.upstreams import UpstreamHealth
from callout_server.db.engine import Database
from callout_server.evaluation.service import EvaluationService
from callout_server.health import HealthCheck
from callout_server.llm import LLMClient
from callout_server.people.service import PeopleService
from callout_server.service_keys.gate import KeyGuard
from callout_server.service_keys.hashing import PURPOSE, KeyHasher
from callout_server.service_keys.last_used import LastUsed
from callout_server.service_keys.limits import KeyLimiter
from callout_server.service_keys.service import ServiceKeyService
from callout_server.service_keys.table import SERVICE_KEYS
from callout_server.tiers.chat.service import ChatService
from callout_server.tiers.defaults import THINKING_DEFAULT
from callout_server.tiers.nlu.service import NluService
from callout_server.tiers.script.drafts import DraftStore
from callout_server.tiers.script.service import ScriptService
from callout_server.upstream import Upstreams

log = logging.getLogger(__name__)


class Services:
    db: Database
    secrets: SecretBox
    llm: LLMClient
    upstreams: Upstreams
    store: ConfigStore
    sync: ConfigSync
    writes: LiveWrites
    config: ConfigService
    tester: ConnectionTester
    auth: AuthService
    recorder: DiagnosticsRecorder
    diagnostics: DiagnosticsQueries
    nlu: NluService
    drafts: DraftStore
    scripts: ScriptService
    chat: ChatService
    health: HealthCheck
    audit: AuditLog
    people: PeopleService
    evaluations: EvaluationService

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.components: dict[type, object] = {}
        self._stoppers: list[Callable[[], Awaitable[Any]]] = []

    def _provide(self, component: Any, stop: Callable[[], Awaitable[Any]] | None = None) -> Any:
        self.components[type(component)] = component
        if stop is not None:
            self._stoppers.append(stop)
        return component

    async def start(self) -> None:
        s = self.settings
        # First: a bad CALLOUT_SECRET_KEY stops the worker here, with a clear message.
        self.secrets = secret_box_from_settings(
            s.auth.secret_key.get_secret_value(), s.auth.secret_key_file,
            s.database.sqlite_path)
        await self._migrate_if_embedded()
        self.db = Database(s.database.effective_url, pool_size=s.database.pool_size,
                           connect_timeout_s=s.database.connect_timeout_s)
        self._stoppers.append(self.db.dispose)
        self.llm = self._provide(LLMClient(locale=s.server.locale, pools=s.limits.pools(),
                                           targets=s.targets), self._stop_llm)
        # Replicas, failover, hedging and endpoint health: in memory, per worker.
        self.upstreams = self._provide(Upstreams(self.llm))
        await self._start_config()
        self.auth = self._provide(AuthService(s.auth, self.db))
        await self.auth.start()
        self._stoppers.append(self.auth.stop)
        await self._start_service_keys()
        await self._start_people()
        await self._start_call_log()
        await self._start_tiers()
        self.health = self._provide(HealthCheck(self.sync, self.store, self.recorder,
                                                self.components[KeyGuard].limiter))
        await self._start_evaluations()

    async def _stop_llm(self) -> None:
        await self.llm.aclose()

    async def _migrate_if_embedded(self) -> None:
        db = self.settings.database
        if not db.should_auto_migrate:
            return
        from callout_server.db.migrate import upgrade_to_head  # alembic: only when needed

        await asyncio.to_thread(upgrade_to_head, db.effective_url)

    async def _start_config(self) -> None:
        s = self.settings
        # Live state beside the configurations, loaded with every snapshot (config/live.py).
        loader = SnapshotLoader(self.db, self.secrets, s.file_llm_configs, sections=[DRAINS, SERVICE_KEYS])
        self.store = ConfigStore(loader.initial(), loader.load)
        self.store.add_listener(lambda snapshot: CONFIG_GENERATION.set(snapshot.generation))
        self.sync = ConfigSync(
            self.store, loader.read_generation, redis_url=s.redis.url,
            channel_prefix=s.redis.channel_prefix, poll_interval_s=s.redis.poll_interval_s,
            db_timeout_s=max(2.0, s.database.connect_timeout_s + 1.0))
        self.writes = LiveWrites(self.db, self.sync)
        self.config = self._provide(ConfigService(self.writes, self.secrets, self.store,
                                                  targets=s.targets))
        # Endpoints drained by hand travel with the snapshot, to every worker's pools.
        self._provide(DrainService(self.writes, s.file_llm_configs))
        self.store.add_listener(
            lambda snapshot: self.upstreams.set_drains(snapshot.section(DRAINS)))
        self.tester = self._provide(ConnectionTester(self.llm, self.config, THINKING_DEFAULT))
        self._provide(ModelLister(self.config))
        await self.sync.start()
        self._stoppers.append(self.sync.stop)

    async def _start_service_keys(self) -> None:
        # Looked up in memory by digest (service_keys/table.py); changed through LiveWrites.
        hasher = KeyHasher(self.secrets.subkeys(PURPOSE))
        store = self.store
        self.auth.keys = lambda token: store.current.section(SERVICE_KEYS).lookup(hasher, token)
        self._provide(ServiceKeyService(self.writes, hasher))
        last_used = LastUsed(self.db, flush_interval_s=self.settings.service_keys.last_used_flush_s)
        await last_used.start()
        self._stoppers.append(last_used.stop)
        k, r = self.settings.service_keys, self.settings.redis
        limiter = KeyLimiter(r.url, r.channel_prefix, workers=k.workers, lease_s=k.lease_s)
        self._stoppers.append(limiter.aclose)
        self._provide(KeyGuard(last_used, limiter))

    async def _start_people(self) -> None:
        self.audit = self._provide(AuditLog(self.db, self.settings.audit))
        await self.audit.start()
        self._stoppers.append(self.audit.stop)
        self.people = self._provide(PeopleService(self.db, self.auth))

    async def _start_call_log(self) -> None:
        d = self.settings.diagnostics
        self.recorder = self._provide(DiagnosticsRecorder(
            self.db, queue_size=d.queue_size, batch_size=d.batch_size,
            flush_interval_s=d.flush_interval_s, retention_days=d.retention_days,
            stalled_after_s=d.stalled_after_s,
            nlu_inputs_days=self.settings.calllog.nlu_inputs_days))
        await self.recorder.start()
        self._stoppers.append(self.recorder.stop)
        watch_writer(self.recorder.health)
        self.diagnostics = self._provide(DiagnosticsQueries(self.db, self.recorder))
        self._provide(UsageQueries(self.db))

    async def _start_tiers(self) -> None:
        s, store, locale = self.settings, self.store, self.settings.server.locale
        ups = self.upstreams
        self.nlu = self._provide(NluService(
            ups, lambda: store.current.route_for("nlu"), self.recorder, locale))
        self.drafts = self._provide(DraftStore(self.db))
        self.scripts = self._provide(ScriptService(
            ups, lambda: store.current.route_for("script"), self.drafts, self.recorder, locale))
        self.chat = self._provide(ChatService(
            ups, lambda: store.current.route_for("chat"), s.chat, self.recorder, locale))
        await self.chat.start()
        self._stoppers.append(self.chat.stop)
        self._provide(UpstreamHealth(self.upstreams, self.store))

    async def _start_evaluations(self) -> None:
        e, store = self.settings.evaluation, self.store
        self.evaluations = self._provide(EvaluationService(
            self.db, self.config, self.nlu, lambda: store.current.active("nlu").config.id,
            concurrency=e.concurrency, max_calls=e.max_calls, stale_after_s=e.stale_after_s,
            max_rate=e.max_rate, busy_lag_s=e.busy_lag_ms / 1000,
            inputs_days=min(self.settings.calllog.nlu_inputs_days,
                            self.settings.diagnostics.retention_days)))
        await self.evaluations.start()
        self._stoppers.append(self.evaluations.stop)

    async def stop(self) -> None:
        for stop in reversed(self._stoppers):
            try:
                await stop()
            except Exception:  # one component's failure must not leave the others running
                log.exception("error while stopping a service")
        self._stoppers.clear()
