"""Arbitrary and mutated input never escapes the v0.1 codec as anything but an A2AError.

And whatever it accepts it can write back, and reads back the same (modulo
the message ids v0.1 does not carry).
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
    GetPushConfig,
    GetTask,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects.v0_1 import V01Codec, decode_card_v01, encode_card_v01
from interlingua.core.model import AgentCard, Message, PushConfig, Role, TextPart
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

FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# JSON with the key names this dialect uses, so fuzzing reaches past the first check.
KEYS = st.sampled_from(
    [
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
) | st.text(max_size=4)
VALUES = st.sampled_from(
    [
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
    assert same_modulo_message_ids(codec.decode_call(out_method, out), call)


@FUZZ
@given(st.sampled_from(METHODS), a2a_json)
def test_arbitrary_json_params(method: str, doc: Any) -> None:
    _decode_call_safely(method, msgspec.json.encode(doc))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([*METHODS, "message/send", "x"]), st.binary(max_size=64))
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
    # The shared method names may also bring another method's params.
    _decode_call_safely(data.draw(st.sampled_from(METHODS)), msgspec.json.encode(doc))


# ---------------------------------------------------------------------- client side


def _client_safely(call: Any, raw: bytes) -> None:
    try:
        back = codec.decode_result(call, raw)
    except errors.A2AError:
        pass
    else:
        if back is not None:
            again = codec.decode_result(call, codec.encode_result(call, back))
            assert same_modulo_message_ids(again, back)
    try:
        item = codec.decode_stream_item(raw)
    except errors.A2AError:
        pass
    else:
        assert same_modulo_message_ids(
            codec.decode_stream_item(codec.encode_stream_item(item)), item
        )


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
