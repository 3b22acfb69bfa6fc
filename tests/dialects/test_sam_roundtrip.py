"""Round trips through the Solace Agent Mesh codec: decode(encode(x)) == x, and fixpoints.

The strategies are the v0.3 ones: SAM can represent the same objects (all nine
states go out under their v0.2 names, non-object data is wrapped as in v0.3).
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core.calls import CancelTask, SendConfig, SendMessage
from interlingua.core.dialects.sam import SAMCodec
from interlingua.core.model import (
    ArtifactUpdate,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from tests.dialects.v0_3_strategies import (
    ids,
    messages,
    metadata,
    send_configs,
    stream_items,
    tasks,
)
from tests.hypothesis_budget import examples

codec = SAMCodec()
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))

sam_calls = st.one_of(
    st.builds(
        SendMessage,
        message=messages,
        config=send_configs,
        metadata=metadata,
        streaming=st.booleans(),
    ),
    st.builds(CancelTask, id=ids, metadata=metadata),
)

# snake_case member -> the camelCase spelling SDK-made peers send
CAMEL = {
    "message_id": "messageId",
    "task_id": "taskId",
    "context_id": "contextId",
    "reference_task_ids": "referenceTaskIds",
    "mime_type": "mimeType",
    "last_chunk": "lastChunk",
    "accepted_output_modes": "acceptedOutputModes",
    "history_length": "historyLength",
    "push_notification_config": "pushNotificationConfig",
}


def camelize(doc: Any) -> Any:
    # The strategies' metadata and data keys are at most 6 characters long, so
    # only the members above are renamed.
    if isinstance(doc, dict):
        return {CAMEL.get(k, k): camelize(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [camelize(v) for v in doc]
    return doc


def test_camelize_renames() -> None:
    assert camelize({"message_id": 1, "parts": [{"file": {"mime_type": "x"}}]}) == {
        "messageId": 1,
        "parts": [{"file": {"mimeType": "x"}}],
    }


@settings(max_examples=examples(150))
@given(tasks)
def test_task_round_trip(task: Task) -> None:
    wire = codec.encode_result(SEND, task)
    assert codec.decode_result(SEND, wire) == task
    assert codec.decode_result(CancelTask(id=task.id), wire) == task
    assert (
        codec.decode_result(SEND, msgspec.json.encode(camelize(msgspec.json.decode(wire)))) == task
    )


@settings(max_examples=examples(150))
@given(messages)
def test_message_round_trip(message: Message) -> None:
    wire = codec.encode_result(SEND, message)
    assert codec.decode_result(SEND, wire) == message
    camel = msgspec.json.encode(camelize(msgspec.json.decode(wire)))
    assert codec.decode_result(SEND, camel) == message


@settings(max_examples=examples(150))
@given(stream_items)
def test_stream_item_round_trip(item: Task | Message | StatusUpdate | ArtifactUpdate) -> None:
    wire = codec.encode_stream_item(item)
    assert codec.decode_stream_item(wire) == item
    # encode(decode(y)) == y for what we emit
    assert codec.encode_stream_item(codec.decode_stream_item(wire)) == wire
    camel = msgspec.json.encode(camelize(msgspec.json.decode(wire)))
    assert codec.decode_stream_item(camel) == item


@settings(max_examples=examples(200))
@given(sam_calls)
def test_call_round_trip(call: SendMessage | CancelTask) -> None:
    method, params = codec.encode_call(call)
    assert method in codec.methods
    assert codec.decode_call(method, params) == call
    assert codec.encode_call(codec.decode_call(method, params)) == (method, params)
    camel = msgspec.json.encode(camelize(msgspec.json.decode(params)))
    assert codec.decode_call(method, camel) == call


@settings(max_examples=examples(60))
@given(ids, ids, st.sampled_from(TaskState))
def test_status_event_final_flag(task_id: str, context_id: str, state: TaskState) -> None:
    update = StatusUpdate(task_id=task_id, context_id=context_id, status=TaskStatus(state=state))
    doc = msgspec.json.decode(codec.encode_stream_item(update))
    # v0.2 meaning: the stream ends at a terminal or interrupted state
    ends = state.value in {
        "completed",
        "canceled",
        "failed",
        "rejected",
        "input-required",
        "auth-required",
    }
    assert doc["final"] is ends
    assert doc["status"]["state"] == state.value  # every state under its v0.2 name


def test_default_send_writes_no_configuration() -> None:
    method, params = codec.encode_call(SEND)
    assert method == "tasks/send"
    assert "configuration" not in msgspec.json.decode(params)
    call = SendMessage(message=SEND.message, config=SendConfig(blocking=False))
    doc = msgspec.json.decode(codec.encode_call(call)[1])
    assert doc["configuration"] == {"blocking": False}
