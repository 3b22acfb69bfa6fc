"""Arbitrary and mutated input never escapes a dialect's codec as anything but an A2AError.

And whatever a codec accepts it can write back, and reads back the same. The same checks
for every JSON-RPC dialect but v1.0 (its own property tests are in test_v1_0_properties.py);
each dialect's keys, calls and rules are its ``FUZZED`` in its own fuzz module, beside the
checks only it has (cards, v0.1 tasks, deep nesting).
"""

from __future__ import annotations

import msgspec
import pytest
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
from interlingua.core.dialects.sam import SAMCodec
from interlingua.core.dialects.tutorial import TutorialCodec
from interlingua.core.dialects.v0_1 import V01Codec
from interlingua.core.dialects.v0_3 import V03Codec
from interlingua.core.model import Message, PushConfig, Role, TextPart
from tests.dialects import v0_1_strategies, v0_3_strategies
from tests.dialects.fuzzing import FUZZ, Fuzzed
from tests.dialects.test_sam_roundtrip import sam_calls
from tests.dialects.test_tutorial_roundtrip import tutorial_calls
from tests.dialects.v0_3_strategies import json_values
from tests.hypothesis_budget import examples

SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))
# v0.1 has no bare messages: a send names its task
SEND_V01 = SendMessage(message=SEND.message, client_task_id="t")
PUSH_CALLS = [
    SetPushConfig(task_id="t", config=PushConfig(url="u", task_id="t")),
    GetPushConfig(task_id="t"),
]

# JSON with the key names and values the dialects use, so fuzzing reaches past the first check.
KEYS = [
    "message", "messageId", "role", "parts", "kind", "type", "text", "file", "bytes", "uri",
    "data", "metadata", "id", "status", "state", "timestamp", "artifacts", "artifact",
    "history", "value", "data_part_compat", "final",
]
VALUES = [
    "user", "agent", "text", "file", "data", "working", "completed", "aGk=", "",
    "2024-01-01T00:00:00Z", "9999-12-31T23:59:59-23:59",
]
EVENT_KINDS = ["message", "task", "status-update"]

V0_1 = Fuzzed(
    name="v0.1",
    codec=V01Codec(),
    keys=[*KEYS, "sessionId", "name", "mimeType", "pushNotification", "pushNotificationConfig",
          "url", "token", "authentication", "schemes", "historyLength", "index", "append",
          "lastChunk"],
    values=[*VALUES, "input-required", "rejected"],
    calls=v0_1_strategies.calls,
    stream_items=v0_1_strategies.any_stream_items,
    client_calls=[SEND_V01, GetTask(id="t"), CancelTask(id="t"), SubscribeToTask(id="t"),
                  *PUSH_CALLS],
    result_calls=[SEND_V01],
    foreign_method="message/send",
    same=v0_1_strategies.same_modulo_message_ids,
    items_round_trip=True,
)
V0_3 = Fuzzed(
    name="v0.3",
    codec=V03Codec(),
    keys=[*KEYS, "configuration", "blocking", "historyLength", "taskId", "contextId",
          "pushNotificationConfig", "pushNotificationConfigId", "url", "append", "lastChunk"],
    values=[*VALUES, *EVENT_KINDS],
    calls=v0_3_strategies.calls,
    stream_items=v0_3_strategies.stream_items,
    client_calls=[SEND, GetTask(id="t"), CancelTask(id="t"), SubscribeToTask(id="t"),
                  *PUSH_CALLS, ListPushConfigs(task_id="t"),
                  DeletePushConfig(task_id="t", config_id="c"), GetExtendedCard()],
    result_calls=[SEND, GetTask(id="t")],
    foreign_method="tasks/list",
)
SAM = Fuzzed(
    name="sam",
    codec=SAMCodec(),
    keys=[*KEYS, "message_id", "name", "mime_type", "configuration", "blocking",
          "history_length", "task_id", "taskId", "context_id", "contextId", "artifact_id",
          "inline_data", "append", "last_chunk"],
    values=[*VALUES, *EVENT_KINDS, "artifact-update"],
    calls=sam_calls,
    stream_items=v0_3_strategies.stream_items,
    client_calls=[SEND, CancelTask(id="t")],
    result_calls=[SEND, CancelTask(id="t")],
    foreign_method="tasks/get",
)
TUTORIAL = Fuzzed(
    name="tutorial",
    codec=TutorialCodec(),
    keys=[*KEYS, "message_id", "configuration", "blocking", "historyLength", "taskId",
          "contextId", "artifactId"],
    values=[*VALUES, *EVENT_KINDS],
    calls=tutorial_calls,
    stream_items=v0_3_strategies.stream_items,
    client_calls=[SEND, SubscribeToTask(id="t")],
    result_calls=[SEND, SubscribeToTask(id="t")],
    foreign_method="tasks/get",
)

DIALECTS = [V0_1, V0_3, SAM, TUTORIAL]
each_dialect = pytest.mark.parametrize("d", DIALECTS, ids=[d.name for d in DIALECTS])


@each_dialect
@FUZZ
@given(data=st.data())
def test_arbitrary_json_params(d: Fuzzed, data: st.DataObject) -> None:
    method = data.draw(st.sampled_from(d.methods))
    d.decode_call_safely(method, msgspec.json.encode(data.draw(d.docs)))


@each_dialect
@settings(max_examples=examples(200), deadline=None)
@given(data=st.data())
def test_arbitrary_bytes_params(d: Fuzzed, data: st.DataObject) -> None:
    method = data.draw(st.sampled_from([*d.methods, d.foreign_method, "x"]))
    d.decode_call_safely(method, data.draw(st.binary(max_size=64)))


@each_dialect
@FUZZ
@given(data=st.data())
def test_mutated_requests(d: Fuzzed, data: st.DataObject) -> None:
    method, params = d.codec.encode_call(data.draw(d.calls))
    raw = msgspec.json.encode(data.draw(d.mutated(msgspec.json.decode(params))))
    d.decode_call_safely(method, raw)
    # A mutated request may also arrive bare, or under another method of the dialect.
    d.decode_call_safely(data.draw(st.sampled_from(d.methods)), raw)


@each_dialect
@FUZZ
@given(data=st.data())
def test_arbitrary_results(d: Fuzzed, data: st.DataObject) -> None:
    d.client_safely(data.draw(st.sampled_from(list(d.client_calls))),
                    msgspec.json.encode(data.draw(d.docs)))


@each_dialect
@FUZZ
@given(data=st.data())
def test_mutated_results(d: Fuzzed, data: st.DataObject) -> None:
    item = data.draw(d.stream_items)
    raw = msgspec.json.encode(
        data.draw(d.mutated(msgspec.json.decode(d.codec.encode_stream_item(item)))))
    for call in d.result_calls:
        d.client_safely(call, raw)
    try:
        back = d.codec.decode_stream_item(raw)
    except errors.A2AError:
        return
    assert d.same(d.codec.decode_stream_item(d.codec.encode_stream_item(back)), back)


@each_dialect
@settings(max_examples=examples(200), deadline=None)
@given(data=st.data())
def test_arbitrary_error_members(d: Fuzzed, data: st.DataObject) -> None:
    err = d.codec.decode_error(data.draw(json_values | d.docs))
    assert isinstance(err, errors.A2AError)
    d.codec.encode_error(err)  # and it can be passed on
