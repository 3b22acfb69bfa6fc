"""Arbitrary and mutated input never escapes the Solace Agent Mesh codec as anything but an A2AError.

And whatever it accepts it can write back, and reads back the same.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.calls import CancelTask, SendMessage
from interlingua.core.dialects.sam import SAMCodec
from interlingua.core.model import Message, Role, TextPart
from tests.dialects.test_sam_roundtrip import sam_calls
from tests.dialects.v0_3_strategies import json_values, stream_items

codec = SAMCodec()
METHODS = sorted(codec.methods)
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))
CLIENT_CALLS = [SEND, CancelTask(id="t")]

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# JSON with the key names this dialect uses, so fuzzing reaches past the first check.
KEYS = st.sampled_from(
    [
        "message",
        "message_id",
        "messageId",
        "role",
        "parts",
        "kind",
        "type",
        "text",
        "file",
        "bytes",
        "uri",
        "name",
        "mime_type",
        "data",
        "metadata",
        "configuration",
        "blocking",
        "history_length",
        "id",
        "task_id",
        "taskId",
        "context_id",
        "contextId",
        "status",
        "state",
        "timestamp",
        "artifacts",
        "artifact",
        "artifact_id",
        "inline_data",
        "history",
        "value",
        "data_part_compat",
        "final",
        "append",
        "last_chunk",
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
        "artifact-update",
        "working",
        "completed",
        "aGk=",
        "",
        "2024-01-01T00:00:00Z",
        "9999-12-31T23:59:59-23:59",
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
    # Accepted: it writes back, and reads back the same.
    out_method, out = codec.encode_call(call)
    assert out_method == method
    assert codec.decode_call(out_method, out) == call


@FUZZ
@given(st.sampled_from(METHODS), a2a_json)
def test_arbitrary_json_params(method: str, doc: Any) -> None:
    _decode_call_safely(method, msgspec.json.encode(doc))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([*METHODS, "tasks/get", "x"]), st.binary(max_size=64))
def test_arbitrary_bytes_params(method: str, raw: bytes) -> None:
    _decode_call_safely(method, raw)


def _slots(doc: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key) in ``doc``: the places a mutation can hit."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((doc, k))
            _slots(v, out)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append((doc, i))
            _slots(v, out)
    return out


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> Any:
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        slots = _slots(doc, [])
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        op = draw(st.sampled_from(["delete", "replace", "retype", "add"]))
        if op == "delete":
            del container[key]
        elif op == "replace":
            container[key] = draw(a2a_json)
        elif op == "retype":
            container[key] = draw(st.sampled_from([None, 0, -1, "", [], {}, True, 1.5]))
        elif isinstance(container, dict):
            container[draw(KEYS)] = draw(a2a_json)
        else:
            container.insert(key, draw(a2a_json))
    return doc


@FUZZ
@given(st.data(), sam_calls)
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
        again = codec.encode_result(call, result)
        assert codec.decode_result(call, again) == result
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


def test_deep_nesting_is_refused_not_crashed() -> None:
    deep = b'{"message":{"role":"user","parts":[{"data":' + b'{"a":' * 5000 + b"1" + b"}" * 5000
    deep += b"}]}}"
    with pytest.raises(errors.InvalidParams, match="nested too deeply"):
        codec.decode_call("tasks/send", deep)
    # results too
    deep_result = b'{"kind":"task","id":"t","context_id":"c","status":{"state":"working"},'
    deep_result += b'"metadata":' + b"[" * 100000 + b"]" * 100000 + b"}"
    with pytest.raises(errors.InvalidAgentResponse):
        codec.decode_result(SEND, deep_result)
