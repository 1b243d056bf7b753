"""One generation of a chat turn: a producer task feeding an event queue the HTTP stream reads.

    run = TurnRun(session.history, ...); run.start()
    async for frame in run.events(): ...          # SSE bytes, the last one is `end`
    run.stop("cancelled" | "superseded")          # barge-in, from any request handler

Why a producer task and a queue (`Outbox`, bounded: a reader that falls behind past
`[chat] max_unread_bytes` ends the turn `error` `slow_consumer`) rather than generating
inside the HTTP generator: barge-in
arrives on *another* request. `stop()` runs there, synchronously: it settles the history,
puts the one `end` event on the queue and only then cancels the producer, whose
`async with stream` closes the upstream response on the way out. The caller therefore hears
`end` at once, however long the upstream takes to hang up, and the session is released
before `stop()` returns, so a session can never stay "in response".

Exactly one `end`: `_finish()` is the only writer of `end` and runs once (`done` guards it);
the producer's outer `finally` calls it if nothing else did, so an exception anywhere in our
code still ends the stream (reason `error`, code `internal_error`, and so does its record).

History rule: a completed generation stores the model's whole text; an interrupted or failed
one stores only what was already sent (sentences in audio mode, deltas in text mode), marked
interrupted. Text before a tool call is stored (and spoken) before the call itself.

Who holds what: the stream owns the model's text (what it has handed to this turn, so a
segment is the stream's text since the last commit) and its verdict (`Finish.usable`); the
turn keeps only the sentences it sent in audio mode (cleaned for speech, so not the model's
text). In text mode every delta is forwarded as it comes: what was sent is the segment.
A turn's counters (the next sentence index, whether anything was said) are one
`TurnProgress`, shared by the turn's first run and its continuations after a tool output.

Speech guard and filler (guard.py, filler.py): the guard is the batcher's clean step, so a
hit is never spoken (`guard` events, reason `guarded` for `end_turn`) and a guarded segment
is stored as spoken. An `end_turn` ends the turn wherever the batcher gives the hit out: on
a delta, in the tail flushed at the end, or before a tool call (the call is then not made).
A filler is one timer per run, disarmed by the first sentence.

A run knows nothing of the session that owns it: it writes to the session's history, and
tells its owner of a tool call (`on_tool_call`) and of its end (`on_end`, once, whatever the
way); the model call's report goes to `record` when the run is over, with what the guard and
the filler did in this run (`SpeechNotes.value()`, counts only: the record's `speech`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from callout_server.i18n import text
from callout_server.llm import (
    Diagnostic,
    Event,
    Finish,
    LLMCallError,
    Locale,
    SentenceBatcher,
    TextDelta,
    ToolCall,
    join_sentences,
    speakable,
)
from callout_server.streams import StreamEvent
from callout_server.tiers.chat.filler import FillerPlan
from callout_server.tiers.chat.guard import SpeechGuard
from callout_server.tiers.chat.history import ChatHistory
from callout_server.tiers.chat.outbox import SLOW_CONSUMER, Outbox
from callout_server.tiers.chat.speech_notes import SpeechNotes
from callout_server.tiers.chat.turn_parts import TurnProgress, internal_diagnostic, internal_error
from callout_server.tiers.errors import TIMEOUT_CODES
from callout_server.upstream import CallReport, PoolStream

log = logging.getLogger(__name__)

OpenStream = Callable[[], PoolStream]
# (tool call id, turn id, output mode) of a call the model made
OnToolCall = Callable[[str, str, str], None]


class TurnRun:
    """A single model stream for one turn (a first answer, or a continuation after a tool)."""

    def __init__(
        self,
        history: ChatHistory,
        *,
        call_id: str,
        turn_id: str,
        output: str,
        progress: TurnProgress,
        open_stream: OpenStream,
        record: Callable[[CallReport, dict[str, Any] | None], object],
        on_tool_call: OnToolCall,
        on_end: Callable[[TurnRun], None],
        batch_sentences: int,
        first_clause_min_chars: int | None,
        apology: str,
        locale: Locale = "zh",  # the caller's: the language of the `end` event's error
        guard: SpeechGuard | None = None,
        filler: FillerPlan | None = None,
        max_unread_bytes: int = 256 * 1024,  # [chat] max_unread_bytes (outbox.py)
    ) -> None:
        self.history = history
        self.call_id = call_id
        self.turn_id = turn_id
        self.output = output
        self.progress = progress
        self._open_stream = open_stream
        self._record = record
        self._note_tool_call = on_tool_call
        self._on_end = on_end
        self._apology = apology
        self._locale: Locale = locale
        # The speech guard checks each sentence in the batcher's clean step (guard.py); with
        # a guard, text output is released a sentence at a time too.
        self._guard = guard.for_run(self._note_guard) if guard is not None else None
        self._batcher: SentenceBatcher | None = None
        if output == "audio":
            self._batcher = SentenceBatcher(
                batch_sentences=batch_sentences, first_clause_min_chars=first_clause_min_chars,
                clean=self._guard.over(speakable) if self._guard else speakable)
        elif self._guard is not None:
            self._batcher = SentenceBatcher(batch_sentences=1, first_clause_min_chars=None,
                                            clean=self._guard)
        self._filler = filler if output == "audio" else None
        self._filler_timer: asyncio.TimerHandle | None = None
        self._said = False  # this run has sent a sentence (a filler is then too late)
        self.notes = SpeechNotes()  # what the guard and the filler did (the record's `speech`)
        self._outbox = Outbox(max_unread_bytes)
        self._stream: PoolStream | None = None
        self._mark = 0  # where the current segment starts in the stream's text
        self._sentences: list[str] = []  # audio: the sentences sent in the current segment
        self._refused = 0  # text: characters of the delta a slow reader had no room for
        self._finish_event: Finish | None = None
        self.done = False
        self.reason: str | None = None
        self.task: asyncio.Task[None] | None = None

    # -- control --------------------------------------------------------------------------

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(self._produce(), name=f"chat-turn-{self.turn_id}")
        if self._filler is not None and not self.progress.filler:
            self._filler_timer = loop.call_later(self._filler.after_s, self._speak_filler)

    def stop(self, reason: str) -> None:
        """End now with `reason` (cancelled / superseded); closes the upstream request."""
        if self.done:
            return
        self._finish(reason, interrupted=True)
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def wait(self) -> None:
        """Wait for the producer to be gone (upstream closed); never raises."""
        if self.task is not None:
            await asyncio.wait({self.task})

    async def events(self) -> AsyncIterator[StreamEvent]:
        """The turn's events until `end`. A client that goes away stops the run (reason
        cancelled), which closes the upstream request: nobody would hear the rest."""
        try:
            while True:
                event = await self._outbox.get()
                if event is None:
                    return
                yield event
        finally:
            self.stop("cancelled")

    # -- the producer ---------------------------------------------------------------------

    async def _produce(self) -> None:
        stream: PoolStream | None = None
        diagnostic: Diagnostic | None = None
        try:
            stream = self._stream = self._open_stream()
            async with stream:
                async for event in stream:
                    self._on_event(event)
                    if self.done:  # the guard ended the turn, or a slow consumer: leaving
                        diagnostic = Diagnostic.make("cancelled", self._locale)  # closes upstream
                        break
            diagnostic = self._complete() or diagnostic
        except asyncio.CancelledError:
            # stop() has normally settled everything; a cancellation from elsewhere (shutdown)
            # is treated the same. We own this task, so the cancellation ends here.
            diagnostic = Diagnostic.make("cancelled", self._locale)
            self._finish("cancelled", interrupted=True)
        except LLMCallError as exc:
            diagnostic = exc.diagnostic
            self._fail(exc.diagnostic)
        except Exception as exc:
            log.exception("chat turn failed", extra={"call_id": self.call_id})
            diagnostic = internal_diagnostic(exc, self._locale)  # the call log must not say ok
            self._finish("error", interrupted=True, error=internal_error(self._locale))
        finally:
            if not self.done:  # belt and braces: never leave a stream without its `end`
                self._finish("error", interrupted=True, error=internal_error(self._locale))
            try:
                if stream is not None:  # no stream, no model call (the route lookup failed)
                    self._record(stream.report(diagnostic), self.notes.value())
            except Exception:
                log.exception("could not record a chat call")

    def _on_event(self, event: Event) -> None:
        if self.done:
            return
        if isinstance(event, TextDelta):
            if not event.text:
                return
            if self._batcher is None:
                self._send_text(event.text)
            else:
                for chunk in self._batcher.push(event.text):
                    self._deliver(chunk)
                self._stopped()
        elif isinstance(event, ToolCall):
            self._on_tool_call(event)
        elif isinstance(event, Finish):
            self._finish_event = event
        # ReasoningDelta: never spoken, never stored; Usage: the stream keeps it.

    def _on_tool_call(self, call: ToolCall) -> None:
        # Say what was said so far first ("我帮您查一下"), store it, then the call; unless
        # that text ended the turn (an `end_turn` hit): then there is no call at all.
        self._flush_batcher()
        if self._stopped():
            return
        self._commit_segment()
        self.progress.spoke = True  # an apology must never follow a call (turn_parts.py)
        arguments: dict[str, Any] | str = call.arguments
        if not call.arguments and call.raw_arguments.strip():
            arguments = call.raw_arguments  # unparseable: let the model see what it sent
        self.history.add_tool_call(call.call_id, call.name, arguments)
        self._note_tool_call(call.call_id, self.turn_id, self.output)
        self._put("tool_call", {"turn_id": self.turn_id, "call_id": call.call_id,
                                "name": call.name, "arguments": call.arguments})

    def _complete(self) -> Diagnostic | None:
        if self.done:  # a guarded end closed the stream: the call log says we cut it
            return Diagnostic.make("cancelled", self._locale) if self.reason == "guarded" else None
        finish = self._finish_event  # the stream's verdict: no second look at the text
        diagnostic = finish.diagnostic if finish is not None else None
        if finish is not None and not finish.usable:
            assert diagnostic is not None
            self._fail(diagnostic)
            return diagnostic
        self._flush_batcher()
        if self._stopped():  # the held tail hit an `end_turn` term (the call itself was whole)
            return diagnostic
        self._commit_segment()
        self.history.trim_if_needed()
        self._finish("completed", interrupted=False)
        return diagnostic

    def _fail(self, diagnostic: Diagnostic) -> None:
        if self.done:
            return
        # Held sentences and the unfinished one are not flushed: the answer is broken off.
        reason = "timeout" if diagnostic.code in TIMEOUT_CODES else "error"
        if reason == "timeout" and not self.progress.spoke and self._apology:
            self._say(self._apology)
            self.history.add_assistant_message(self._apology)
            self._sentences.clear()  # stored above as a complete message, not as interrupted
        self._finish(reason, interrupted=True,
                     error={"code": diagnostic.code,
                            "message": diagnostic.message_in(self._locale)})

    # -- output ---------------------------------------------------------------------------

    def _flush_batcher(self) -> None:
        if self._batcher is not None:
            for chunk in self._batcher.flush():
                self._deliver(chunk)

    def _stopped(self) -> bool:
        """After the batcher gave out text: an `end_turn` hit in it ends the turn now (what
        was held before it is spoken); True when the turn is over (so is a slow reader's)."""
        if self._guard is not None and self._guard.ended and not self.done:
            self._flush_batcher()
            self._finish("guarded", interrupted=True)
        return self.done

    def _note_guard(self, action: str, lexicon: str | None) -> None:
        # Never the term itself: the dialer learns what was done, and where.
        self.notes.guarded(action, lexicon)
        self._put("guard", {"turn_id": self.turn_id, "index": self.progress.index,
                            "action": action, "lexicon": lexicon})

    def _speak_filler(self) -> None:
        self._filler_timer = None
        progress = self.progress
        if self.done or self._said or progress.filler or self._filler is None:
            return
        progress.filler = self.notes.filler = True
        self._put("sentence", {"turn_id": self.turn_id, "index": progress.index,
                               "text": self._filler.next_text(), "filler": True})
        progress.index += 1

    def _segment(self) -> str:
        """The model's text since the last commit."""
        return self._stream.text[self._mark:] if self._stream is not None else ""

    def _sent(self) -> str:
        """What the caller got in the current segment."""
        if self._batcher is None:  # text mode forwards every delta as it comes
            segment = self._segment()
            return segment[:len(segment) - self._refused]
        if self.output != "audio":
            return "".join(self._sentences)  # guarded text: the deltas sent
        return join_sentences(self._sentences)

    def _commit_segment(self) -> None:
        text = self._segment()
        # A guarded segment keeps what was spoken; any other, the model's own text.
        altered = self._guard is not None and self._guard.take_altered()
        self.history.add_assistant_message(self._sent() if altered else text)
        self._mark += len(text)
        self._sentences.clear()

    def _say(self, text: str) -> None:
        if self.output != "audio":
            self._send_text(text)
        else:
            self._send_sentence(text)

    def _deliver(self, chunk: str) -> None:
        """A chunk of the batcher: a sentence (audio), or a guarded sentence of text."""
        if self.output == "audio":
            self._send_sentence(chunk)
            return
        last = self._sentences[-1] if self._sentences else ""
        chunk = join_sentences((last, chunk))[len(last):]  # a space between Latin sentences
        if self._send_text(chunk):
            self._sentences.append(chunk)

    def _send_sentence(self, text: str) -> None:
        progress = self.progress
        if self._put("sentence", {"turn_id": self.turn_id, "index": progress.index,
                                  "text": text}):
            self._said = True
            self._sentences.append(text)
            progress.spoke = True
            progress.index += 1

    def _send_text(self, text: str) -> bool:
        if self._put("text_delta", {"turn_id": self.turn_id, "text": text}):
            self.progress.spoke = True
            return True
        self._refused = len(text)  # the tail of the stream's text that was never sent
        return False

    def _put(self, name: str, data: dict[str, Any]) -> bool:
        """Hand an event to the reader; one too far behind ends the turn (False)."""
        if self._outbox.put(StreamEvent(name, data)):
            return True
        self._slow_consumer()
        return False

    def _slow_consumer(self) -> None:
        log.warning("chat reader too slow: turn ended", extra={
            "call_id": self.call_id, "unread_bytes": self._outbox.pending_bytes})
        self._finish("error", interrupted=True,
                     error={"code": SLOW_CONSUMER, "message": text("chat_slow_consumer",
                                                                   self._locale)})
        # Inside the producer the loop sees `done` and leaves; elsewhere, stop the producer.
        task = self.task
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()

    def _finish(self, reason: str, *, interrupted: bool,
                error: dict[str, str] | None = None) -> None:
        """The one way out: settle the history, release the session, send `end` once."""
        if self.done:
            return
        self.done = True
        self.reason = reason
        if self._filler_timer is not None:
            self._filler_timer.cancel()
        try:
            sent = self._sent() if interrupted else ""
            if sent:
                self.history.record_interrupted_assistant(sent)
        except Exception:
            log.exception("could not store an interrupted answer")
        finally:
            self._sentences.clear()
            self._on_end(self)
            usage = self._stream.usage if self._stream is not None else None
            end = StreamEvent("end", {"turn_id": self.turn_id, "reason": reason,
                                      "error": error})
            if usage is not None:
                self._outbox.close(StreamEvent("usage", usage.to_dict()), end)
            else:
                self._outbox.close(end)
