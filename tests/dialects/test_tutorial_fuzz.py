"""Arbitrary and mutated input never escapes the tutorial codec as anything but an A2AError.

And whatever it accepts it can write back, and reads back the same.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.calls import SendMessage, SubscribeToTask
from interlingua.core.dialects.tutorial import TutorialCodec
from interlingua.core.model import Message, Role, TextPart
from tests.dialects.fuzzing import FUZZ, client_safely, decode_call_safely, json_like, mutations
from tests.dialects.test_tutorial_roundtrip import tutorial_calls
from tests.dialects.v0_3_strategies import json_values, stream_items

codec = TutorialCodec()
METHODS = sorted(codec.methods)
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))
CLIENT_CALLS = [SEND, SubscribeToTask(id="t")]


_KEY_NAMES = [
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
_VALUES = [
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
KEYS, a2a_json = json_like(_KEY_NAMES, _VALUES)
mutated = mutations(KEYS, a2a_json)


def _decode_call_safely(method: str, raw: bytes | None) -> None:
    decode_call_safely(codec, method, raw)


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
    client_safely(codec, call, raw)


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
