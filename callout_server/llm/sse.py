"""A small incremental Server-Sent Events parser, linear in what it is fed, bounded.

Feed it the response body in whatever chunks the transport delivers; it returns complete
events. It follows the WHATWG event-stream rules that matter for LLM vendors: `\\n`, `\\r\\n`
and `\\r` line ends (also split across chunks), multi-line `data:`, an optional single space
after the colon, `:` comment lines. Comments are never events, but they are counted, because a
server trickling `: keep-alive` is alive yet not producing anything: the stream object decides
what that means for its stall timeout.

Each byte is looked at a bounded number of times: a line that has not ended yet is kept as
the pieces it came in and joined once, when its end arrives (joining the whole buffer to
every new chunk made one 48 MB line without a newline cost seconds of a worker's loop).
A line, or an event's data lines together, longer than `max_line_bytes` raises
`SSELineTooLong` as soon as it passes the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

DONE = "[DONE]"
# A line is one chunk of a streamed answer (a few hundred bytes), or in the Responses API the
# closing event, which repeats the whole answer: 4 MB holds 200,000 tokens of JSON-escaped
# Chinese.
MAX_LINE_BYTES = 4 * 1024 * 1024


class SSELineTooLong(ValueError):
    """A line (or one event's data) longer than the parser's bound; `limit` is the bound."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"event-stream line longer than {limit} bytes")
        self.limit = limit


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None

    @property
    def is_done(self) -> bool:
        """The OpenAI-style end-of-stream sentinel (`data: [DONE]`)."""
        return self.data == DONE


class SSEParser:
    """Bytes in, `SSEEvent`s out. Not thread-safe; one parser per response."""

    __slots__ = ("_data", "_data_bytes", "_event", "_id", "_max", "_pending", "_pending_bytes",
                 "_skip_lf", "comments", "events")

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._max = max_line_bytes
        self._pending: list[bytes] = []  # the line not ended yet, in the pieces it came in
        self._pending_bytes = 0
        self._data: list[bytes] = []
        self._data_bytes = 0
        self._event: str | None = None
        self._id: str | None = None
        self._skip_lf = False  # the previous chunk ended in "\r": a leading "\n" is its pair
        self.comments = 0  # comment lines seen (keep-alives)
        self.events = 0  # events dispatched

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not chunk:
            return []
        end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if end < 0:  # still inside one line: keep the piece, look at it again only once
            self._keep(chunk)
            return []
        if end == len(chunk) - 1:  # the usual chunk: whole lines, no copy
            head, tail = chunk, b""
        else:
            head, tail = chunk[: end + 1], chunk[end + 1 :]
        if self._pending:
            head = b"".join((*self._pending, head))
            self._pending, self._pending_bytes = [], 0
        # A "\r" that ends the chunk may be the first half of "\r\n" (only when nothing follows).
        self._skip_lf = not tail and head[-1:] == b"\r"
        out: list[SSEEvent] = []
        # bytes.splitlines() splits on exactly \n, \r\n and \r: the SSE line ends; `head`
        # ends with one, so every piece is a whole line.
        for line in head.splitlines():
            if len(line) > self._max:
                raise SSELineTooLong(self._max)
            self._line(line, out)
        if tail:
            self._keep(tail)
        return out

    def _keep(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._pending_bytes += len(piece)
        if self._pending_bytes > self._max:
            raise SSELineTooLong(self._max)

    def close(self) -> list[SSEEvent]:
        """End of body: dispatch what is pending, even without the final blank line.

        The spec says to drop an unterminated event, but several vendors end the body right
        after `data: [DONE]` without a blank line; losing that would turn a clean end into a
        "disconnect".
        """
        out: list[SSEEvent] = []
        if self._pending:
            line = b"".join(self._pending)
            self._pending, self._pending_bytes = [], 0
            self._line(line, out)
        self._dispatch(out)
        return out

    def _line(self, line: bytes, out: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line[0] == 0x3A:  # ":" comment
            self.comments += 1
            return
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data_bytes += len(value) + 1
            if self._data_bytes > self._max:  # data lines without the blank line that ends them
                raise SSELineTooLong(self._max)
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id":
            self._id = value.decode("utf-8", "replace")
        # "retry" and unknown fields are ignored, as the spec says.

    def _dispatch(self, out: list[SSEEvent]) -> None:
        if self._data:
            data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
            out.append(
                SSEEvent(data.decode("utf-8", "replace"), self._event or "message", self._id)
            )
            self.events += 1
            self._data, self._data_bytes = [], 0
        # An event with no data lines is not dispatched; its type does not leak into the next.
        self._event = None
