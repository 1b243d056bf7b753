"""The long-lived services of one worker process, started and stopped with the app.

Each component is a plain async object; `start()` brings them up in dependency order and
`stop()` takes them down in reverse, so a failing shutdown of one never skips the others.

    secrets  -> (SQLite: migrate) -> db -> llm client -> config store/sync -> auth
             -> call-log recorder -> tiers (nlu, scripts, chat)

Attributes other packages use: `settings`, `db`, `secrets`, `store` (the hot path reads
`store.current` only), `config` (ConfigService), `sync`, `auth`, `llm`, `recorder`,
`nlu`, `scripts`, `chat`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from callout_server.config.bus import ConfigSync
from callout_server.config.secrets import SecretBox, secret_box_from_settings
from callout_server.config.service import ConfigService
from callout_server.config.settings import Settings
from callout_server.config.snapshot import ConfigStore, file_snapshot
from callout_server.db.engine import Database

if TYPE_CHECKING:
    from callout_server.auth.service import AuthService
    from callout_server.calllog.recorder import DiagnosticsRecorder
    from callout_server.llm.client import LLMClient
    from callout_server.tiers.chat.service import ChatService
    from callout_server.tiers.nlu.service import NluService
    from callout_server.tiers.script.service import ScriptService

log = logging.getLogger(__name__)


class Services:
    db: Database
    secrets: SecretBox
    store: ConfigStore
    config: ConfigService
    sync: ConfigSync
    auth: AuthService
    llm: LLMClient
    recorder: DiagnosticsRecorder
    nlu: NluService
    scripts: ScriptService
    chat: ChatService

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stoppers: list[Any] = []

    async def start(self) -> None:
        s = self.settings
        auth = s.auth
        # First: a bad CALLOUT_SECRET_KEY stops the worker here, with a clear message.
        self.secrets = secret_box_from_settings(
            auth.secret_key.get_secret_value(), auth.secret_key_file, s.database.sqlite_path)
        await self._migrate_if_embedded()
        self.db = Database(s.database.effective_url, pool_size=s.database.pool_size,
                           connect_timeout_s=s.database.connect_timeout_s)
        self._stoppers.append(self.db.dispose)
        self._start_llm()
        await self._start_config()
        await self._start_auth()
        await self._start_tiers()

    async def _migrate_if_embedded(self) -> None:
        db = self.settings.database
        if not db.should_auto_migrate:
            return
        from callout_server.db.migrate import upgrade_to_head

        await asyncio.to_thread(upgrade_to_head, db.effective_url)

    def _start_llm(self) -> None:
        from callout_server.llm.client import LLMClient

        self.llm = LLMClient(locale=self.settings.server.locale)
        self._stoppers.append(self.llm.aclose)

    async def _start_config(self) -> None:
        s = self.settings
        files = s.file_llm_configs
        holder: dict[str, ConfigService] = {}
        # The store's loader is the service's; the service needs the store: tie the knot.
        self.store = ConfigStore(file_snapshot(files), lambda: holder["svc"].load_snapshot())
        self.config = holder["svc"] = ConfigService(
            self.db, self.secrets, self.store, files, llm=self.llm)
        self.sync = ConfigSync(
            self.store, self.config.read_generation, redis_url=s.redis.url,
            channel_prefix=s.redis.channel_prefix, poll_interval_s=s.redis.poll_interval_s,
            db_timeout_s=max(2.0, s.database.connect_timeout_s + 1.0))
        self.config.after_commit = self.sync.committed
        self.config.on_db_error = self.sync.db_failed
        await self.sync.start()
        self._stoppers.append(self.sync.stop)

    async def _start_auth(self) -> None:
        # Auth needs the database (and its migrations) only at start: afterwards bearer
        # checks run from the in-memory token table.
        from callout_server.auth.service import AuthService

        self.auth = AuthService(self.settings.auth, self.db)
        await self.auth.start()
        self._stoppers.append(self.auth.stop)

    async def _start_tiers(self) -> None:
        from callout_server.calllog.recorder import DiagnosticsRecorder
        from callout_server.tiers.chat.service import ChatService
        from callout_server.tiers.nlu.service import NluService
        from callout_server.tiers.script.drafts import DraftStore
        from callout_server.tiers.script.service import ScriptService

        s, store = self.settings, self.store
        d = s.diagnostics
        self.recorder = DiagnosticsRecorder(
            self.db, queue_size=d.queue_size, batch_size=d.batch_size,
            flush_interval_s=d.flush_interval_s, retention_days=d.retention_days,
            stalled_after_s=d.stalled_after_s)
        await self.recorder.start()
        self._stoppers.append(self.recorder.stop)
        locale = s.server.locale
        # The tiers read the configuration through the store on every call: an operator's
        # save swaps the snapshot and the very next call uses it, with no query.
        self.nlu = NluService(self.llm, lambda: store.current.config_for("nlu"),
                              self.recorder, locale)
        self.scripts = ScriptService(self.llm, lambda: store.current.config_for("script"),
                                     DraftStore(self.db), self.recorder, locale)
        self.chat = ChatService(self.llm, lambda: store.current.config_for("chat"), s.chat,
                                self.recorder, locale)
        await self.chat.start()
        self._stoppers.append(self.chat.stop)

    async def health(self) -> dict[str, Any]:
        """Bounded: states cached by the background loops, no I/O here."""
        db, redis = self.sync.db_state, self.sync.redis_state
        writer = self.recorder.health()
        # Redis unset ("disabled") is a supported single-node mode, not a degradation.
        ok = db == "ok" and redis != "down" and writer["diagnostics_writer"] == "ok"
        return {"status": "ok" if ok else "degraded", "db": db, "redis": redis,
                "config_generation": self.store.current.generation,
                "diagnostics_dropped": self.recorder.dropped,
                "diagnostics_rejected": self.recorder.rejected,
                "diagnostics_pending": self.recorder.pending, **writer}

    async def stop(self) -> None:
        for stop in reversed(self._stoppers):
            try:
                await stop()
            except Exception:  # one component's failure must not leave the others running
                log.exception("error while stopping a service")
        self._stoppers.clear()
