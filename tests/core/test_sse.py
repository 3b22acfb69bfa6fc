"""The SSE decoder reads the fields A2A uses as the event-stream grammar has them."""

from __future__ import annotations

from interlingua.core.sse import SSEDecoder


def _events(raw: bytes) -> list[tuple[str, str | None, int | None]]:
    return [(e.data, e.id, e.retry) for e in SSEDecoder().feed(raw)]


def test_retry_is_taken_in_ascii_digits_only() -> None:
    # "²" passes str.isdigit(), which int() refuses
    assert _events(b"retry: 1500\ndata: a\n\n") == [("a", None, 1500)]
    assert _events("retry: \u00b2\ndata: a\n\n".encode()) == [("a", None, None)]
    assert _events("retry: \u0661\u0662\ndata: a\n\n".encode()) == [("a", None, None)]


def test_an_id_with_a_nul_is_ignored_and_others_kept_as_text() -> None:
    assert _events(b"id: 7\ndata: a\n\n") == [("a", "7", None)]
    assert _events(b"id: 7\x00\ndata: a\n\n") == [("a", None, None)]
    assert _events("id: \u00b2\ndata: a\n\n".encode()) == [("a", "\u00b2", None)]


def test_one_leading_byte_order_mark_is_ignored_even_split_across_chunks() -> None:
    bom = b"\xef\xbb\xbf"
    assert _events(bom + b"id: 1\ndata: a\n\n") == [("a", "1", None)]
    decoder = SSEDecoder()
    got = [e.data for chunk in (bom[:1], bom[1:2], bom[2:] + b"data: b\n", b"\n")
           for e in decoder.feed(chunk)]
    assert got == ["b"]
    # only the stream's first: one later is a character of the line it opens
    assert _events(b"data: a\n\n" + bom + b"data: c\n\n") == [("a", None, None)]
    assert _events(b"data: x\n\n") == [("x", None, None)]


def test_an_event_ended_by_the_stream_s_last_byte_a_cr_is_read_at_its_end() -> None:
    # a CR at the very end is held (a LF may follow, making it one CRLF); the stream's
    # end says it will not: the event it completes is read then, not lost
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data: a\r\rdata: b\r\r")] == ["a"]
    assert [e.data for e in decoder.end()] == ["b"]
    assert list(decoder.end()) == []
    # a CRLF split across chunks is one line end, not two
    decoder = SSEDecoder()
    assert [e.data for c in (b"data: c\r", b"\ndata: d\r\n\r\n") for e in decoder.feed(c)] \
        == ["c\nd"]
    # an event left without its blank line is dropped, as the format says
    decoder = SSEDecoder()
    assert list(decoder.feed(b"data: e\r")) == [] and list(decoder.end()) == []
