"""The composition root: one worker's long-lived services, built and started in order.

Nothing but `app.py` and `cli.py` imports this module. Every service is a plain object whose
constructor takes what it needs; `start()` builds them in dependency order and files each
under its class in `components`, where a route's `provide(Cls)` dependency finds it.
`stop()` takes them down in reverse, and one component's failing shutdown never skips the
others.

    secrets -> privacy guard -> (SQLite: migrate) -> db -> llm client -> upstream pools
        (+ shared health)
            -> snapshot loader -> store -> sync -> config service -> connection tester
            -> auth -> service keys -> audit log (retention purge) -> people
            -> call-log recorder -> diagnostics queries
            -> tiers (nlu, drafts + scripts, chat) -> health
            -> shadow evaluation (over config and the nlu tier)
            -> canaries (their split rides on the snapshot; a monitor on every worker)

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
from callout_server.calllog.erasure import CallErasure, load_recent
from callout_server.calllog.metrics import CONFIG_GENERATION, watch_writer
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.service import DiagnosticsQueries
from callout_server.calllog.usage_service import UsageQueries
from callout_server.canary.monitor import CanaryMonitor
from callout_server.canary.service import CanaryService
from callout_server.canary.split import CanarySplit
from callout_server.canary.state import canary_section
from callout_server.config.bus import ConfigSync
from callout_server.config.drains import DRAINS, DrainService
from callout_server.config.health_bus import RedisHealthChannel
from callout_server.config.live import LiveWrites, Section
from callout_server.config.privacy import privacy_from_settings
from callout_server.config.secrets import SecretBox, secret_box_from_settings
from callout_server.config.service import ConfigService
from callout_server.config.settings import Settings
from callout_server.config.snapshot import ConfigStore, SnapshotLoader
from callout_server.connectivity.models import ModelLister
from callout_server.connectivity.service import ConnectionTester
from callout_server.connectivity.upstreams import UpstreamHealth
from callout_server.db.engine import Database
from callout_server.evaluation.models import EvaluationResult
from callout_server.evaluation.service import EvaluationService
from callout_server.health import HealthCheck
from callout_server.intents.compiled import CompiledIntents
from callout_server.intents.live import intents_section
from callout_server.intents.service import GlobalIntentService
from callout_server.lexicons.book import LEXICONS
from callout_server.lexicons.service import LexiconService
from callout_server.llm import LLMClient
from callout_server.people.service import PeopleService
from callout_server.privacy import Privacy, install
from callout_server.service_keys.gate import KeyGuard
from callout_server.service_keys.hashing import PURPOSE, KeyHasher
from callout_server.service_keys.last_used import LastUsed
from callout_server.service_keys.limits import KeyLimiter
from callout_server.service_keys.service import ServiceKeyService
from callout_server.service_keys.table import SERVICE_KEYS
from callout_server.streams import Closing
from callout_server.tiers.chat import calls as chat_calls
from callout_server.tiers.chat.service import ChatService
from callout_server.tiers.defaults import THINKING_DEFAULT
from callout_server.tiers.nlu.screen import ScreenService
from callout_server.tiers.nlu.service import NluService
from callout_server.tiers.script.drafts import DraftStore
from callout_server.tiers.script.service import ScriptService
from callout_server.upstream import Upstreams

log = logging.getLogger(__name__)

# Calls erased lately (DELETE /api/admin/calls/{call_id}): every worker drops what it holds.
ERASURES: Section[frozenset[str]] = Section("erasures", load_recent, initial=frozenset())


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
    privacy: Privacy
    canaries: CanaryService
    split: CanarySplit

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.components: dict[type, object] = {}
        self._stoppers: list[Callable[[], Awaitable[Any]]] = []
        # Shutdown has begun (api/connections.py calls begin()): open streams end now.
        self.closing = self._provide(Closing())

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
        # What is stored and logged from here on is redacted ([privacy], docs/privacy.md).
        self.privacy = self._provide(privacy_from_settings(s))
        install(self.privacy)
        await self._migrate_if_embedded()
        self.db = Database(s.database.effective_url, pool_size=s.database.pool_size,
                           connect_timeout_s=s.database.connect_timeout_s,
                           statement_timeout_s=s.database.statement_timeout_s)
        self._stoppers.append(self.db.dispose)
        self.llm = self._provide(LLMClient(locale=s.server.locale, pools=s.limits.pools(),
                                           targets=s.targets), self._stop_llm)
        # Replicas, failover, hedging and endpoint health: in memory, per worker; with
        # Redis, cool-downs and probe verdicts are shared by the workers.
        self.upstreams = self._provide(Upstreams(self.llm))
        await self._share_upstream_health()
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
        self._start_erasure()
        await self._canary_monitor.start()  # after the call log it reads
        self._stoppers.append(self._canary_monitor.stop)

    async def _stop_llm(self) -> None:
        await self.llm.aclose()

    async def _share_upstream_health(self) -> None:
        r = self.settings.redis
        if not r.url:
            return
        channel = RedisHealthChannel(r.url, r.channel_prefix)
        shared = self.upstreams.share_health(channel)
        await channel.start(shared.receive)
        self._stoppers.append(shared.aclose)
        self._stoppers.append(channel.stop)

    async def _share_chat_sessions(self) -> None:
        """With Redis, chat sessions live there between turns: any worker serves any turn."""
        r, c = self.settings.redis, self.settings.chat
        if not r.url:
            return
        shared = await chat_calls.share_in_redis(
            self.chat, r.url, r.channel_prefix, self.secrets, ttl_s=c.session_ttl_s,
            lease_s=c.total_timeout_s + 10.0)
        self._stoppers.append(shared.store.aclose)
        self._stoppers.append(shared.bus.stop)

    async def _migrate_if_embedded(self) -> None:
        db = self.settings.database
        if not db.should_auto_migrate:
            return
        from callout_server.db.migrate import upgrade_to_head  # alembic: only when needed

        await asyncio.to_thread(upgrade_to_head, db.effective_url)

    async def _start_config(self) -> None:
        s = self.settings
        # Live state beside the configurations, loaded with every snapshot (config/live.py).
        self.intents_section = intents_section(s.global_intents.defaults())
        canaries = canary_section(self.secrets)  # running canaries: the split's state
        self.split = CanarySplit(lambda: self.store.current.section(canaries))
        loader = SnapshotLoader(self.db, self.secrets, s.file_llm_configs,
                                sections=[DRAINS, ERASURES, LEXICONS, self.intents_section,
                                          canaries, SERVICE_KEYS])
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
        # Every configuration's cap on a shared base URL counts from the snapshot on.
        self.upstreams.prepare(self.store.current.routes())
        self.store.add_listener(lambda snapshot: self.upstreams.prepare(snapshot.routes()))
        # Lexicons of the speech guard: compiled with the snapshot that carries them.
        self._provide(LexiconService(self.writes, lambda: self.store.current.section(LEXICONS)))
        # Global intents: operators' list, compiled once per change, read by every decision.
        self._provide(GlobalIntentService(self.writes, self.global_intents))
        self.canaries = self._provide(CanaryService(self.writes, self.config, self.secrets))
        self.config.add_guard(self.canaries.guard)  # no delete or re-tier of a candidate
        self._canary_monitor = CanaryMonitor(
            self.canaries, self.writes, lambda: self.store.current.section(canaries),
            interval_s=s.canary.check_interval_s)
        self.tester = self._provide(ConnectionTester(self.llm, self.config, THINKING_DEFAULT))
        self._provide(ModelLister(self.config))
        await self.sync.start()
        self._stoppers.append(self.sync.stop)

    def global_intents(self) -> CompiledIntents:
        return self.store.current.section(self.intents_section)

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
        limiter = KeyLimiter(r.url, r.channel_prefix, workers=k.workers, lease_s=k.lease_s,
                             window_s=k.window_s, reserve_s=k.reserve_s,
                             reserve_max=k.reserve_max)
        self._stoppers.append(limiter.aclose)
        self._provide(KeyGuard(last_used, limiter))

    async def _start_people(self) -> None:
        audit = self.settings.audit.model_copy(
            update={"retention_days": self.settings.retention_days["audit"]})
        self.audit = self._provide(AuditLog(self.db, audit))
        await self.audit.start()
        self._stoppers.append(self.audit.stop)
        self.people = self._provide(PeopleService(self.db, self.auth))

    async def _start_call_log(self) -> None:
        d, keep = self.settings.diagnostics, self.settings.retention_days
        self.recorder = self._provide(DiagnosticsRecorder(
            self.db, queue_size=d.queue_size, batch_size=d.batch_size,
            flush_interval_s=d.flush_interval_s, retention_days=keep["call_log"],
            stalled_after_s=d.stalled_after_s, nlu_inputs_days=keep["nlu_inputs"],
            privacy=self.privacy, purge_batch=self.settings.privacy.purge_batch,
            purge_interval_s=self.settings.privacy.purge_interval_s))
        await self.recorder.start()
        self._stoppers.append(self.recorder.stop)
        watch_writer(self.recorder.health)
        self.diagnostics = self._provide(DiagnosticsQueries(self.db, self.recorder))
        self._provide(UsageQueries(self.db))

    async def _start_tiers(self) -> None:
        s, store, locale = self.settings, self.store, self.settings.server.locale
        ups = self.upstreams
        self.nlu = self._provide(NluService(
            ups, lambda: store.current.route_for("nlu"), self.recorder, locale,
            self.global_intents, split=self.split.chooser("nlu")))
        self._provide(ScreenService(
            ups, lambda: store.current.route_for("nlu"), self.recorder, locale))
        self.drafts = self._provide(DraftStore(self.db))
        self.scripts = self._provide(ScriptService(
            ups, lambda: store.current.route_for("script"), self.drafts, self.recorder, locale))
        self.chat = self._provide(ChatService(
            ups, lambda: store.current.route_for("chat"), s.chat, self.recorder, locale,
            lexicons=lambda: store.current.section(LEXICONS), split=self.split.chooser("chat")))
        self.closing.on_begin(self.chat.end_all)  # SIGTERM: turns end `cancelled` at once
        await self._share_chat_sessions()
        await self.chat.start()
        self._stoppers.append(self.chat.stop)
        self._provide(UpstreamHealth(self.upstreams, self.store))

    def _start_erasure(self) -> None:
        erasure = self._provide(CallErasure(self.writes, self.recorder, self.privacy))
        erasure.also(EvaluationResult)
        erasure.on_local(self.chat.forget_calls)
        erasure.on_shared(lambda keys: chat_calls.forget_shared(self.chat, keys))
        erasure.apply(self.store.current.section(ERASURES))  # erased before this start
        self.store.add_listener(lambda snapshot: erasure.apply(snapshot.section(ERASURES)))
        self._stoppers.append(erasure.stop)

    async def _start_evaluations(self) -> None:
        e, store = self.settings.evaluation, self.store
        self.evaluations = self._provide(EvaluationService(
            self.db, self.config, self.nlu, lambda: store.current.active("nlu").config.id,
            concurrency=e.concurrency, max_calls=e.max_calls, stale_after_s=e.stale_after_s,
            max_rate=e.max_rate, busy_lag_s=e.busy_lag_ms / 1000,
            inputs_days=self.settings.retention_days["evaluations"],
            purge_batch=self.settings.privacy.purge_batch))
        self.config.add_guard(self.evaluations.guard)  # no delete or re-tier of a candidate
        await self.evaluations.start()
        self._stoppers.append(self.evaluations.stop)

    async def stop(self) -> None:
        for stop in reversed(self._stoppers):
            try:
                await stop()
            except Exception:  # one component's failure must not leave the others running
                log.exception("error while stopping a service")
        self._stoppers.clear()
