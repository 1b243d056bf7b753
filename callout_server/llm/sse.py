"""A small incremental Server-Sent Events parser.

Feed it the response body in whatever chunks the transport delivers; it returns complete
events. It follows the WHATWG event-stream rules that matter for LLM vendors: `\\n`, `\\r\\n`
and `\\r` line ends (also split across chunks), multi-line `data:`, an optional single space
after the colon, `:` comment lines. Comments are never events, but they are counted, because a
server trickling `: keep-alive` is alive yet not producing anything: the stream object decides
what that means for its stall timeout.
"""

from __future__ import annotations

from dataclasses import dataclass

DONE = "[DONE]"


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

    __slots__ = ("_buf", "_data", "_event", "_id", "_skip_lf", "comments", "events")

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[bytes] = []
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
        buf = self._buf + chunk if self._buf else chunk
        if not buf:
            return []
        # bytes.splitlines() splits on exactly \n, \r\n and \r: the SSE line ends.
        lines = buf.splitlines()
        last = buf[-1:]
        if last == b"\n" or last == b"\r":
            self._buf = b""
            self._skip_lf = last == b"\r"
        else:
            self._buf = lines.pop()  # an incomplete line waits for the next chunk
        out: list[SSEEvent] = []
        for line in lines:
            self._line(line, out)
        return out

    def close(self) -> list[SSEEvent]:
        """End of body: dispatch what is pending, even without the final blank line.

        The spec says to drop an unterminated event, but several vendors end the body right
        after `data: [DONE]` without a blank line; losing that would turn a clean end into a
        "disconnect".
        """
        out: list[SSEEvent] = []
        if self._buf:
            self._line(self._buf, out)
            self._buf = b""
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
            self._data = []
        # An event with no data lines is not dispatched; its type does not leak into the next.
        self._event = None
