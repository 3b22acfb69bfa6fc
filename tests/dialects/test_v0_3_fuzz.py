"""Arbitrary and mutated input never escapes the v0.2/v0.3 codec as anything but an A2AError.

And whatever it accepts it can write back, and reads back the same.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.calls import (
    CancelTask,
    DeletePushConfig,
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects.v0_3 import V03Codec, decode_card_v03, encode_card_v03
from interlingua.core.model import AgentCard, Message, PushConfig, Role, TextPart
from tests.dialects.fuzzing import FUZZ, client_safely, decode_call_safely, json_like, mutations
from tests.dialects.v0_3_strategies import calls, cards, json_values, stream_items

codec = V03Codec()
METHODS = sorted(codec.methods)
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))
CLIENT_CALLS = [
    SEND,
    GetTask(id="t"),
    CancelTask(id="t"),
    SubscribeToTask(id="t"),
    SetPushConfig(task_id="t", config=PushConfig(url="u", task_id="t")),
    GetPushConfig(task_id="t"),
    ListPushConfigs(task_id="t"),
    DeletePushConfig(task_id="t", config_id="c"),
    GetExtendedCard(),
]


# JSON with the key names this dialect uses, so fuzzing reaches past the first check.
_KEY_NAMES = [
    "message",
    "messageId",
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
    "history",
    "pushNotificationConfig",
    "pushNotificationConfigId",
    "url",
    "value",
    "data_part_compat",
    "final",
    "append",
    "lastChunk",
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
    "completed",
    "aGk=",
    "",
    "2024-01-01T00:00:00Z",
    "9999-12-31T23:59:59-23:59",
]
KEYS, a2a_json = json_like(_KEY_NAMES, _VALUES)
mutated = mutations(KEYS, a2a_json)


def _decode_call_safely(method: str, raw: bytes | None) -> None:
    decode_call_safely(codec, method, raw, keeps_method=False)


@FUZZ
@given(st.sampled_from(METHODS), a2a_json)
def test_arbitrary_json_params(method: str, doc: Any) -> None:
    _decode_call_safely(method, msgspec.json.encode(doc))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([*METHODS, "tasks/list", "x"]), st.binary(max_size=64))
def test_arbitrary_bytes_params(method: str, raw: bytes) -> None:
    _decode_call_safely(method, raw)


# ------------------------------------------------------------------------- mutations


@FUZZ
@given(st.data(), calls)
def test_mutated_requests(data: st.DataObject, call: Any) -> None:
    method, params = codec.encode_call(call)
    doc = data.draw(mutated(msgspec.json.decode(params)))
    _decode_call_safely(method, msgspec.json.encode(doc))
    # A mutated request may also arrive bare (seed 000) or under another method.
    _decode_call_safely(data.draw(st.sampled_from(METHODS)), msgspec.json.encode(doc))


# ---------------------------------------------------------------------- client side


def _client_safely(call: Any, raw: bytes) -> None:
    client_safely(codec, call, raw, results_round_trip=False)


@FUZZ
@given(st.sampled_from(CLIENT_CALLS), a2a_json)
def test_arbitrary_results(call: Any, doc: Any) -> None:
    _client_safely(call, msgspec.json.encode(doc))


@FUZZ
@given(st.data(), stream_items)
def test_mutated_results(data: st.DataObject, item: Any) -> None:
    doc = data.draw(mutated(msgspec.json.decode(codec.encode_stream_item(item))))
    raw = msgspec.json.encode(doc)
    _client_safely(SEND, raw)
    _client_safely(GetTask(id="t"), raw)
    try:
        back = codec.decode_stream_item(raw)
    except errors.A2AError:
        return
    assert codec.decode_stream_item(codec.encode_stream_item(back)) == back


@settings(max_examples=200, deadline=None)
@given(json_values | a2a_json)
def test_arbitrary_error_members(doc: Any) -> None:
    assert isinstance(codec.decode_error(doc), errors.A2AError)


@settings(max_examples=150, deadline=None)
@given(st.data(), cards)
def test_mutated_cards(data: st.DataObject, card: AgentCard) -> None:
    doc = data.draw(mutated(encode_card_v03(card, jsonrpc_url="https://a/rpc")))
    try:
        back = decode_card_v03(doc)
    except errors.InvalidAgentResponse:
        return
    assert isinstance(back, AgentCard)
    # one write-and-read settles a card: after it, round trips are exact
    settled = decode_card_v03(encode_card_v03(back, jsonrpc_url=back.interfaces[0].url))
    assert (
        decode_card_v03(encode_card_v03(settled, jsonrpc_url=settled.interfaces[0].url)) == settled
    )


@settings(max_examples=150, deadline=None)
@given(a2a_json)
def test_arbitrary_cards(doc: Any) -> None:
    try:
        decode_card_v03(doc)
    except errors.InvalidAgentResponse:
        pass
