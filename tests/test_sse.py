"""The incremental SSE parser: line ends, split chunks, multi-line data, comments, [DONE]."""

from __future__ import annotations

import pytest

from callout_server.llm.sse import SSEEvent, SSEParser


def feed_all(chunks: list[bytes]) -> tuple[list[SSEEvent], SSEParser]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events, parser


def test_single_events_and_done() -> None:
    events, _ = feed_all([b'data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n'])
    assert [e.data for e in events] == ['{"a":1}', '{"a":2}', "[DONE]"]
    assert events[-1].is_done and not events[0].is_done
    assert events[0].event == "message"


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_line_endings(newline: bytes) -> None:
    raw = b"event: response.output_text.delta" + newline + b"data: x" + newline + newline
    events, _ = feed_all([raw])
    assert events == [SSEEvent("x", "response.output_text.delta")]


def test_every_split_point_gives_the_same_events() -> None:
    raw = (
        b": keep-alive\r\n\r\n"
        b"event: a\r\ndata: line1\r\ndata: line2\r\n\r\n"
        b'data: {"t":"\xe4\xbd\xa0\xe5\xa5\xbd"}\r\n\r\n'
        b"data: [DONE]\r\n\r\n"
    )
    whole, _ = feed_all([raw])
    assert [e.data for e in whole] == ["line1\nline2", '{"t":"你好"}', "[DONE]"]
    for cut in range(1, len(raw)):
        split, parser = feed_all([raw[:cut], raw[cut:]])
        assert split == whole, cut
        assert parser.comments == 1


def test_byte_by_byte() -> None:
    raw = b"data: a\n\n: ping\n\ndata: b\r\n\r\n"
    events, parser = feed_all([raw[i : i + 1] for i in range(len(raw))])
    assert [e.data for e in events] == ["a", "b"]
    assert parser.comments == 1


def test_comments_are_counted_not_dispatched() -> None:
    parser = SSEParser()
    assert parser.feed(b": keep-alive\n\n: keep-alive\n\n") == []
    assert parser.comments == 2 and parser.events == 0


def test_no_space_after_colon_and_unknown_fields() -> None:
    events, _ = feed_all([b"data:x\nretry: 10\nfoo: bar\nid: 7\n\n"])
    assert events == [SSEEvent("x", "message", "7")]


def test_event_without_data_is_not_dispatched_and_type_does_not_leak() -> None:
    events, _ = feed_all([b"event: ping\n\ndata: y\n\n"])
    assert events == [SSEEvent("y")]


def test_final_event_without_blank_line_is_kept() -> None:
    events, _ = feed_all([b'data: {"a":1}\n\ndata: [DONE]'])
    assert [e.data for e in events] == ['{"a":1}', "[DONE]"]


def test_empty_data_line_is_an_event() -> None:
    events, _ = feed_all([b"data:\n\n"])
    assert events == [SSEEvent("")]


def _cpu_to_feed(chunks: list[bytes], **kw: int) -> float:
    import time

    parser = SSEParser(**kw)
    started = time.process_time()
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    return time.process_time() - started


def test_a_long_line_costs_what_short_lines_cost() -> None:
    # 8 MB in the transport's 16 KB chunks, once as one line without a newline until the
    # end, once as 180,000 short events: linear, the long line is the cheaper of the two
    # (joining the buffer to every chunk made it cost 6x the short ones, 2 s of CPU).
    size = 8 * 1024 * 1024
    long = b"data: " + b"x" * size + b"\n\n"
    event = b'data: {"choices":[{"delta":{"content":"x"}}]}\n\n'
    short = event * (size // len(event))

    def pieces(raw: bytes) -> list[bytes]:
        return [raw[i:i + 16384] for i in range(0, len(raw), 16384)]

    assert _cpu_to_feed(pieces(long), max_line_bytes=2 * size) < _cpu_to_feed(pieces(short))


def test_a_line_past_the_bound_raises_as_soon_as_it_passes() -> None:
    from callout_server.llm.sse import SSELineTooLong

    parser = SSEParser(max_line_bytes=1000)
    assert parser.feed(b"data: " + b"x" * 900) == []
    with pytest.raises(SSELineTooLong) as info:
        parser.feed(b"x" * 200)  # no newline yet: 1,106 bytes pending
    assert info.value.limit == 1000
    with pytest.raises(SSELineTooLong):  # a whole line in one chunk
        SSEParser(max_line_bytes=1000).feed(b"data: " + b"x" * 1000 + b"\n")
    parser = SSEParser(max_line_bytes=1000)  # many data lines, the blank line never comes
    with pytest.raises(SSELineTooLong):
        for _ in range(20):
            parser.feed(b"data: " + b"x" * 90 + b"\n")
    # At the bound is fine, and the parser goes on.
    parser = SSEParser(max_line_bytes=1000)
    events = parser.feed(b"data: " + b"y" * 994 + b"\n\ndata: [DONE]\n\n")
    assert [len(e.data) for e in events] == [994, 6]
