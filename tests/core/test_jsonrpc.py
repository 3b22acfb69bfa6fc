"""JSON-RPC envelope parsing and building."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlingua.core import jsonrpc
from interlingua.core.errors import A2AError, InvalidRequest, ParseError


def test_plain_request() -> None:
    req = jsonrpc.parse(b'{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"x"}}')
    assert isinstance(req, jsonrpc.Request)
    assert (req.method, req.id, req.has_id) == ("GetTask", 7, True)
    assert msgspec.json.decode(req.params or b"") == {"id": "x"}


def test_notification_has_no_id() -> None:
    req = jsonrpc.parse(b'{"jsonrpc":"2.0","method":"m"}')
    assert isinstance(req, jsonrpc.Request)
    assert req.has_id is False and req.params is None


def test_null_id_is_an_id() -> None:
    req = jsonrpc.parse(b'{"jsonrpc":"2.0","method":"m","id":null}')
    assert isinstance(req, jsonrpc.Request) and req.has_id and req.id is None


@pytest.mark.parametrize(
    ("body", "exc"),
    [
        (b"{not json", ParseError),
        (b"", ParseError),
        (b'{"jsonrpc":"2.0","id":1}', InvalidRequest),
        (b'{"jsonrpc":"1.0","id":1,"method":"m"}', InvalidRequest),
        (b'{"id":1,"method":"m"}', InvalidRequest),
        (b'{"jsonrpc":"2.0","id":1,"method":5}', InvalidRequest),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"m"}', InvalidRequest),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"m"}', InvalidRequest),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', InvalidRequest),
        (b'{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}', InvalidRequest),
        (b'"just a string"', InvalidRequest),
        (b"[]", InvalidRequest),
    ],
)
def test_bad_envelopes(body: bytes, exc: type[A2AError]) -> None:
    with pytest.raises(exc):
        jsonrpc.parse(body)


def test_a_byte_order_mark_before_the_body_is_read_past_once() -> None:
    # RFC 8259 §8.1: a parser may ignore it; some clients send one
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "t"}}'
    req = jsonrpc.parse(b"\xef\xbb\xbf" + body)
    assert isinstance(req, jsonrpc.Request) and (req.method, req.id) == ("GetTask", 7)
    for bad in (b"\xef\xbb\xbf" * 2 + body, b"\xef\xbb\xbf" * 50_000 + b"{}",
                b"\xef\xbb\xbf"):
        with pytest.raises(ParseError):
            jsonrpc.parse(bad)


def test_invalid_request_keeps_the_id_when_readable() -> None:
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.parse(b'{"jsonrpc":"1.0","id":"abc","method":"m"}')
    assert info.value.data == {"id": "abc"}


def test_batch_mixes_requests_and_errors() -> None:
    out = jsonrpc.parse(b'[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"id":2,"method":"b"}]')
    assert isinstance(out, jsonrpc.Batch)
    first, second, third = out.items
    assert isinstance(first, jsonrpc.Request) and first.id == 1
    assert isinstance(second, tuple) and isinstance(second[1], InvalidRequest)
    assert isinstance(third, tuple) and third[0] == 2


def test_responses_are_valid_json() -> None:
    ok = msgspec.json.decode(jsonrpc.result_response("r1", b'{"a":1}'))
    assert ok == {"jsonrpc": "2.0", "id": "r1", "result": {"a": 1}}
    err = msgspec.json.decode(jsonrpc.error_response(None, b'{"code":-32600,"message":"x"}'))
    assert err == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=15,
)


@given(json_values)
def test_any_json_parses_or_raises_our_errors(value: object) -> None:
    try:
        jsonrpc.parse(msgspec.json.encode(value))
    except A2AError:
        pass


@given(st.binary(max_size=200))
def test_any_bytes_parse_or_raise_our_errors(data: bytes) -> None:
    try:
        jsonrpc.parse(data)
    except A2AError:
        pass
