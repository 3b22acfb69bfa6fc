"""Arbitrary and mutated input never escapes the v0.1 codec as anything but an A2AError.

And whatever it accepts it can write back, and reads back the same (modulo
the message ids v0.1 does not carry).
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.calls import (
    CancelTask,
    GetPushConfig,
    GetTask,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects.v0_1 import V01Codec, decode_card_v01, encode_card_v01
from interlingua.core.model import AgentCard, Message, PushConfig, Role, TextPart
from tests.dialects.fuzzing import FUZZ as SHARED_FUZZ
from tests.dialects.fuzzing import client_safely, decode_call_safely, json_like, mutations
from tests.dialects.v0_1_strategies import (
    any_stream_items,
    any_tasks,
    calls,
    json_values,
    same_modulo_message_ids,
)

codec = V01Codec()
METHODS = sorted(codec.methods)
SEND = SendMessage(
    message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]),
    client_task_id="t",
)
CLIENT_CALLS = [
    SEND,
    GetTask(id="t"),
    CancelTask(id="t"),
    SubscribeToTask(id="t"),
    SetPushConfig(task_id="t", config=PushConfig(url="u", task_id="t")),
    GetPushConfig(task_id="t"),
]

FUZZ = settings(SHARED_FUZZ, max_examples=250)

# JSON with the key names this dialect uses, so fuzzing reaches past the first check.
_KEY_NAMES = [
    "id",
    "sessionId",
    "message",
    "messageId",
    "role",
    "parts",
    "type",
    "kind",
    "text",
    "file",
    "bytes",
    "uri",
    "name",
    "mimeType",
    "data",
    "value",
    "data_part_compat",
    "metadata",
    "pushNotification",
    "pushNotificationConfig",
    "url",
    "token",
    "authentication",
    "schemes",
    "historyLength",
    "status",
    "state",
    "timestamp",
    "artifacts",
    "artifact",
    "index",
    "append",
    "lastChunk",
    "history",
    "final",
]
_VALUES = [
    "user",
    "agent",
    "text",
    "file",
    "data",
    "working",
    "completed",
    "input-required",
    "rejected",
    "aGk=",
    "",
    "2024-01-01T00:00:00Z",
    "9999-12-31T23:59:59-23:59",
]
KEYS, a2a_json = json_like(_KEY_NAMES, _VALUES)
mutated = mutations(KEYS, a2a_json)


def _decode_call_safely(method: str, raw: bytes | None) -> None:
    decode_call_safely(codec, method, raw, same=same_modulo_message_ids)


@FUZZ
@given(st.sampled_from(METHODS), a2a_json)
def test_arbitrary_json_params(method: str, doc: Any) -> None:
    _decode_call_safely(method, msgspec.json.encode(doc))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([*METHODS, "message/send", "x"]), st.binary(max_size=64))
def test_arbitrary_bytes_params(method: str, raw: bytes) -> None:
    _decode_call_safely(method, raw)


# ------------------------------------------------------------------------- mutations


@FUZZ
@given(st.data(), calls)
def test_mutated_requests(data: st.DataObject, call: Any) -> None:
    method, params = codec.encode_call(call)
    doc = data.draw(mutated(msgspec.json.decode(params)))
    _decode_call_safely(method, msgspec.json.encode(doc))
    # The shared method names may also bring another method's params.
    _decode_call_safely(data.draw(st.sampled_from(METHODS)), msgspec.json.encode(doc))


# ---------------------------------------------------------------------- client side


def _client_safely(call: Any, raw: bytes) -> None:
    client_safely(codec, call, raw, same=same_modulo_message_ids, items_round_trip=True)


@FUZZ
@given(st.sampled_from(CLIENT_CALLS), a2a_json)
def test_arbitrary_results(call: Any, doc: Any) -> None:
    _client_safely(call, msgspec.json.encode(doc))


@FUZZ
@given(st.data(), any_stream_items)
def test_mutated_stream_items(data: st.DataObject, item: Any) -> None:
    doc = data.draw(mutated(msgspec.json.decode(codec.encode_stream_item(item))))
    _client_safely(SEND, msgspec.json.encode(doc))


@FUZZ
@given(st.data(), any_tasks)
def test_mutated_tasks(data: st.DataObject, task: Any) -> None:
    doc = data.draw(mutated(msgspec.json.decode(codec.encode_result(SEND, task))))
    raw = msgspec.json.encode(doc)
    _client_safely(GetTask(id="t"), raw)
    _client_safely(SetPushConfig(task_id="t", config=PushConfig(url="u")), raw)


@settings(max_examples=200, deadline=None)
@given(json_values | a2a_json)
def test_arbitrary_error_members(doc: Any) -> None:
    err = codec.decode_error(doc)
    assert isinstance(err, errors.A2AError)
    codec.encode_error(err)  # and it can be passed on


@settings(max_examples=150, deadline=None)
@given(a2a_json)
def test_arbitrary_cards(doc: Any) -> None:
    try:
        card = decode_card_v01(doc)
    except errors.InvalidAgentResponse:
        return
    assert isinstance(card, AgentCard)
    encode_card_v01(card, url=card.interfaces[0].url)


@settings(max_examples=150, deadline=None)
@given(
    st.data(),
    st.fixed_dictionaries(
        {
            "name": st.text(max_size=5),
            "url": st.text(max_size=5),
            "version": st.text(max_size=5),
            "capabilities": st.fixed_dictionaries({"streaming": st.booleans()}),
            "authentication": st.fixed_dictionaries(
                {
                    "schemes": st.lists(
                        st.sampled_from(["Bearer", "Basic", "ApiKey", "OAuth2", "mTLS", "X"])
                    ),
                    "credentials": st.sampled_from(
                        [
                            '{"in": "query", "name": "k"}',
                            '{"tokenUrl": "https://t"}',
                            "[1]",
                            "{",
                            "",
                        ]
                    ),
                }
            ),
            "skills": st.lists(
                st.fixed_dictionaries({"id": st.text(max_size=3), "name": st.text(max_size=3)}),
                max_size=2,
            ),
        }
    ),
)
def test_mutated_cards(data: st.DataObject, doc: Any) -> None:
    try:
        card = decode_card_v01(data.draw(mutated(doc)))
    except errors.InvalidAgentResponse:
        return
    assert isinstance(card, AgentCard)
    assert [i.protocol_version for i in card.interfaces] == ["0.1"]
