"""Arbitrary and mutated input never escapes the v0.2/v0.3 codec as anything but an A2AError.

And whatever it accepts it can write back, and reads back the same.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
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

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# JSON with the key names this dialect uses, so fuzzing reaches past the first check.
KEYS = st.sampled_from(
    [
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
    assert codec.decode_call(out_method, out) == call


@FUZZ
@given(st.sampled_from(METHODS), a2a_json)
def test_arbitrary_json_params(method: str, doc: Any) -> None:
    _decode_call_safely(method, msgspec.json.encode(doc))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([*METHODS, "tasks/list", "x"]), st.binary(max_size=64))
def test_arbitrary_bytes_params(method: str, raw: bytes) -> None:
    _decode_call_safely(method, raw)


# ------------------------------------------------------------------------- mutations


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
@given(st.data(), calls)
def test_mutated_requests(data: st.DataObject, call: Any) -> None:
    method, params = codec.encode_call(call)
    doc = data.draw(mutated(msgspec.json.decode(params)))
    _decode_call_safely(method, msgspec.json.encode(doc))
    # A mutated request may also arrive bare (seed 000) or under another method.
    _decode_call_safely(data.draw(st.sampled_from(METHODS)), msgspec.json.encode(doc))


# ---------------------------------------------------------------------- client side


def _client_safely(call: Any, raw: bytes) -> None:
    try:
        codec.decode_result(call, raw)
    except errors.A2AError:
        pass
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
