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
