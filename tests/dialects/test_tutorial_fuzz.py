"""Arbitrary and mutated input never escapes the tutorial codec as anything but an A2AError.

And whatever it accepts it can write back, and reads back the same.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.calls import SendMessage, SubscribeToTask
from interlingua.core.dialects.tutorial import TutorialCodec
from interlingua.core.model import Message, Role, TextPart
from tests.dialects.test_sam_fuzz import mutated
from tests.dialects.test_tutorial_roundtrip import tutorial_calls
from tests.dialects.v0_3_strategies import json_values, stream_items

codec = TutorialCodec()
METHODS = sorted(codec.methods)
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))
CLIENT_CALLS = [SEND, SubscribeToTask(id="t")]

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = st.sampled_from(
    [
        "message",
        "messageId",
        "message_id",
        "role",
        "parts",
        "kind",
        "type",
        "text",
        "file",
        "bytes",
        "uri",
        "data",
        "metadata",
        "configuration",
        "blocking",
        "historyLength",
        "id",
        "taskId",
        "contextId",
        "status",
        "state",
        "timestamp",
        "artifacts",
        "artifact",
        "artifactId",
        "history",
        "value",
        "data_part_compat",
        "final",
    ]
) | st.text(max_size=4)
VALUES = st.sampled_from(
    [
        "user",
        "agent",
        "text",
        "file",
        "data",
        "message",
        "task",
        "status-update",
        "working",
        "aGk=",
        "",
    ]
)
a2a_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=5)
    | VALUES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)


def _decode_call_safely(method: str, raw: bytes | None) -> None:
    try:
        call = codec.decode_call(method, raw)
    except errors.A2AError:
        return
    out_method, out = codec.encode_call(call)
    assert out_method == method
    assert codec.decode_call(out_method, out) == call


@FUZZ
@given(st.sampled_from(METHODS), a2a_json)
def test_arbitrary_json_params(method: str, doc: Any) -> None:
    _decode_call_safely(method, msgspec.json.encode(doc))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([*METHODS, "message/stream", "x"]), st.binary(max_size=64))
def test_arbitrary_bytes_params(method: str, raw: bytes) -> None:
    _decode_call_safely(method, raw)


@FUZZ
@given(st.data(), tutorial_calls)
def test_mutated_requests(data: st.DataObject, call: Any) -> None:
    method, params = codec.encode_call(call)
    doc = data.draw(mutated(msgspec.json.decode(params)))
    _decode_call_safely(method, msgspec.json.encode(doc))
    _decode_call_safely(data.draw(st.sampled_from(METHODS)), msgspec.json.encode(doc))


def _client_safely(call: Any, raw: bytes) -> None:
    try:
        result = codec.decode_result(call, raw)
    except errors.A2AError:
        pass
    else:
        assert codec.decode_result(call, codec.encode_result(call, result)) == result
    try:
        codec.decode_stream_item(raw)
    except errors.A2AError:
        pass


@FUZZ
@given(st.sampled_from(CLIENT_CALLS), a2a_json)
def test_arbitrary_results(call: Any, doc: Any) -> None:
    _client_safely(call, msgspec.json.encode(doc))


@FUZZ
@given(st.data(), stream_items)
def test_mutated_results(data: st.DataObject, item: Any) -> None:
    doc = data.draw(mutated(msgspec.json.decode(codec.encode_stream_item(item))))
    raw = msgspec.json.encode(doc)
    for call in CLIENT_CALLS:
        _client_safely(call, raw)
    try:
        back = codec.decode_stream_item(raw)
    except errors.A2AError:
        return
    assert codec.decode_stream_item(codec.encode_stream_item(back)) == back


@settings(max_examples=200, deadline=None)
@given(json_values | a2a_json)
def test_arbitrary_error_members(doc: Any) -> None:
    assert isinstance(codec.decode_error(doc), errors.A2AError)
