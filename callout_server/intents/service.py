"""Operators' reads and writes of the global intents, and the console's "try a sentence".

    intents = GlobalIntentService(writes, lambda: store.current.section(section))
    intents.current()                                   # the list every worker serves
    await intents.replace(GlobalIntentsPut(items=[...], version=3), actor)
    intents.try_sentence(TryRequest(utterance="我不投诉就问问"))

A save replaces the whole list in one unit of work (`LiveWrites.unit()`: the cluster's
generation bumped first, which orders concurrent writers), compares the `version` read
(stale -> 409 `version_conflict`, nothing written), records the audit event and publishes:
every worker serves the new list within a second.
"""

from __future__ import annotations

from collections.abc import Callable

from callout_server.audit.trail import Actor, record
from callout_server.config.live import LiveWrites
from callout_server.intents.compiled import CompiledIntents, compile_intents
from callout_server.intents.errors import IntentsVersionConflict
from callout_server.intents.repository import IntentsRepository
from callout_server.intents.schemas import (
    GlobalIntentsOut,
    GlobalIntentsPut,
    TriedHit,
    TriedStop,
    TryRequest,
    TryResult,
)
from callout_server.phrases import IntentHit


class GlobalIntentService:
    def __init__(self, writes: LiveWrites, current: Callable[[], CompiledIntents]) -> None:
        self._writes = writes
        self._current = current

    def current(self) -> GlobalIntentsOut:
        return GlobalIntentsOut.model_validate(self._current().view())

    async def replace(self, body: GlobalIntentsPut, actor: Actor) -> GlobalIntentsOut:
        items = [i.value() for i in body.items]
        async with self._writes.unit() as (session, generation):
            repo = IntentsRepository(session)
            state = await repo.state(for_update=True)
            current = state.version if state is not None else 0
            if body.version != current:
                raise IntentsVersionConflict(body.version, current)
            before = {i.name for i in self._current().items}
            await repo.replace(items, current + 1, actor.name)
            record(session, actor, "global_intents.update", target="global_intents", detail={
                "version": current + 1, "generation": generation,
                "names": [i.name for i in items],
                "enabled": [i.name for i in items if i.enabled],
                "added": sorted({i.name for i in items} - before),
                "removed": sorted(before - {i.name for i in items}),
                "phrases": sum(len(i.phrases) for i in items)})
        await self._writes.committed(generation)
        saved = self._current()
        if saved.version < current + 1:  # this worker's reload has not landed (a DB hiccup)
            saved = compile_intents(items, version=current + 1, updated_by=actor.name)
        return GlobalIntentsOut.model_validate(saved.view())

    def try_sentence(self, body: TryRequest) -> TryResult:
        compiled = self._current() if body.items is None else compile_intents(
            [i.value() for i in body.items], version=self._current().version)
        if compiled.rules is None:
            return TryResult(global_intent=None, hits=[], stopped=[], version=compiled.version)
        verdict = compiled.rules.check(body.utterance)

        def hit(h: IntentHit) -> TriedHit:
            return TriedHit(intent=h.intent, action=compiled.action(h.intent), phrase=h.phrase,
                            start=h.start, end=h.end, text=h.text)

        return TryResult(
            global_intent=hit(verdict.hit) if verdict.hit else None,
            hits=[hit(h) for h in verdict.hits],
            stopped=[TriedStop(intent=s.intent, phrase=s.phrase, start=s.start, end=s.end,
                               reason=s.reason, cue=s.cue, cue_start=s.cue_start,
                               cue_end=s.cue_end) for s in verdict.stopped],
            version=compiled.version)
