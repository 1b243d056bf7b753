"""Text deltas in, chunks for TTS out: when each sentence goes to the speech synthesiser.

    batcher = SentenceBatcher(batch_sentences=3, first_clause_min_chars=10, clean=speakable)
    for chunk in batcher.push(delta): ...       # during the stream
    for chunk in batcher.flush(): ...           # at the end, and before a tool call

The sentence rules are `sentences.SentenceSplitter`'s; this is the batching policy on top:
time to the first audio, then prosody (bench/bench_sentences.py measures both).
"""

from __future__ import annotations

from collections.abc import Callable

from callout_server.llm.sentences import SentenceSplitter, join_sentences


class SentenceBatcher:
    """Turns a stream of text deltas into chunks for TTS.

    - The first sentence goes out alone the moment its boundary arrives (time to first audio).
    - While no chunk has gone out, a long opening with no sentence end yet is cut after a
      clause mark (，、：) once `first_clause_min_chars` characters have built up; the rest of
      that first sentence then goes out alone at its boundary.
    - Later sentences go out `batch_sentences` at a time (smoother prosody); `flush()` sends
      the rest. Call `flush()` at the end of the stream and before forwarding a tool call.
    - `clean` (e.g. `speakable`) is applied to each completed sentence, never to a raw delta,
      so a URL or `**` split across deltas is whole when it is filtered. A sentence that
      cleans to nothing is skipped.
    - A tail of marks/closers arriving after an eagerly cut sentence is appended to that
      sentence while it is still held in the batch; if it has gone out already (only possible
      for a chunk just sent) the tail is dropped, since it is silent punctuation.
    `flush()` does not reset the "first chunk" state: a continuation after a tool call comes on
    a new stream, which gets a new batcher.
    """

    def __init__(
        self,
        *,
        batch_sentences: int = 3,
        first_clause_min_chars: int | None = 10,
        clean: Callable[[str], str] | None = None,
    ) -> None:
        if batch_sentences < 1:
            raise ValueError("batch_sentences must be >= 1")
        self._splitter = SentenceSplitter()
        self._batch_size = batch_sentences
        self._clause_min = first_clause_min_chars
        self._clean = clean
        self._batch: list[str] = []
        self._started = False  # a chunk has gone out
        self._first_open = False  # the first chunk was a clause: its sentence is unfinished
        self._splitter.track_clauses = bool(first_clause_min_chars)

    @property
    def started(self) -> bool:
        return self._started

    def push(self, delta: str) -> list[str]:
        tail, sentences = self._splitter.push(delta)
        chunks: list[str] = []
        if tail and self._batch:
            self._batch[-1] += self._clean(tail) if self._clean else tail
        for sentence in sentences:
            self._add(sentence, chunks)
        if not self._started and self._clause_min:
            clause = self._splitter.cut_clause(self._clause_min)
            if clause is not None:
                self._add(clause, chunks)
                # The caller is already hearing that sentence: its rest goes out alone at its
                # boundary too, so the voice does not stop mid-sentence to wait for a batch.
                self._first_open = self._started
        return chunks

    def flush(self) -> list[str]:
        chunks: list[str] = []
        for sentence in self._splitter.finish():
            self._add(sentence, chunks)
        if self._batch:
            chunks.append(join_sentences(self._batch))
            self._batch.clear()
        return chunks

    def _add(self, sentence: str, chunks: list[str]) -> None:
        if self._clean is not None:
            sentence = self._clean(sentence)
            if not sentence:
                return
        if not self._started or self._first_open:
            self._started, self._first_open = True, False
            self._splitter.track_clauses = False
            chunks.append(sentence)
            return
        self._batch.append(sentence)
        if len(self._batch) >= self._batch_size:
            chunks.append(join_sentences(self._batch))
            self._batch.clear()
