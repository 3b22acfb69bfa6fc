"""Round trips through the tutorial codec, and its answers against the v0.3.0 JSON schema.

The tutorial's own form (seed 003) carries text parts only; the codec answers in
the v0.2/v0.3 shape with echoes, so everything v0.3 can represent round-trips,
and the seed's text-only form is checked on its own.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core.calls import SendMessage, SubscribeToTask
from interlingua.core.dialects.tutorial import TutorialCodec
from interlingua.core.model import (
    ArtifactUpdate,
    Message,
    Role,
    StatusUpdate,
    Task,
    TextPart,
)
from tests.dialects.v0_3_strategies import (
    assert_valid,
    history_lengths,
    ids,
    messages,
    metadata,
    send_configs,
    stream_items,
    tasks,
    texts,
)
from tests.hypothesis_budget import examples

codec = TutorialCodec()
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))

tutorial_calls = st.one_of(
    st.builds(SendMessage, message=messages, config=send_configs, metadata=metadata),
    st.builds(SubscribeToTask, id=ids, history_length=history_lengths),
)
text_messages = st.builds(
    Message,
    message_id=ids,
    role=st.sampled_from(Role),
    # the seed's parts are just type and text
    parts=st.lists(st.builds(TextPart, text=texts), min_size=1, max_size=3),
)


def _echoes(doc: Any) -> None:
    """Every part has ``type`` == ``kind``; every message ``message_id`` == ``messageId``."""
    if isinstance(doc, list):
        for item in doc:
            _echoes(item)
    elif isinstance(doc, dict):
        if "role" in doc:
            assert doc["message_id"] == doc["messageId"]
        for part in doc.get("parts", ()):
            assert part["type"] == part["kind"]
        for key in ("status", "message", "history", "artifacts", "artifact"):
            if key in doc:
                _echoes(doc[key])


def test_echo_check_can_fail() -> None:
    with pytest.raises(AssertionError):
        _echoes({"role": "user", "messageId": "a", "message_id": "b", "parts": []})
    with pytest.raises(KeyError):
        _echoes({"artifactId": "a", "parts": [{"kind": "text", "text": "t"}]})


@settings(max_examples=examples(150))
@given(tasks)
def test_task_round_trip(task: Task) -> None:
    wire = codec.encode_result(SEND, task)
    _echoes(msgspec.json.decode(wire))
    assert codec.decode_result(SEND, wire) == task
    assert codec.decode_result(SubscribeToTask(id=task.id), wire) == task


@settings(max_examples=examples(150))
@given(messages)
def test_message_round_trip(message: Message) -> None:
    wire = codec.encode_result(SEND, message)
    _echoes(msgspec.json.decode(wire))
    assert codec.decode_result(SEND, wire) == message


@settings(max_examples=examples(150))
@given(stream_items)
def test_stream_item_round_trip(item: Task | Message | StatusUpdate | ArtifactUpdate) -> None:
    wire = codec.encode_stream_item(item)
    _echoes(msgspec.json.decode(wire))
    assert codec.decode_stream_item(wire) == item
    assert codec.encode_stream_item(codec.decode_stream_item(wire)) == wire


@settings(max_examples=examples(150))
@given(tutorial_calls)
def test_call_round_trip(call: SendMessage | SubscribeToTask) -> None:
    method, params = codec.encode_call(call)
    assert method in codec.methods
    assert codec.decode_call(method, params) == call
    assert codec.encode_call(codec.decode_call(method, params)) == (method, params)


@settings(max_examples=examples(100))
@given(text_messages, st.sampled_from(["messageId", "message_id"]), st.booleans())
def test_seed_003_form_round_trip(message: Message, id_key: str, with_kind: bool) -> None:
    """Seed 003's own spelling: ``type`` parts, one id member, maybe no ``kind``."""
    doc: dict[str, Any] = {
        "role": message.role.value,
        "parts": [
            {"type": "text", "text": p.text} for p in message.parts if isinstance(p, TextPart)
        ],
        id_key: message.message_id,
    }
    if with_kind:
        doc["kind"] = "message"
    assert codec.decode_result(SEND, msgspec.json.encode(doc)) == message
    assert codec.decode_stream_item(msgspec.json.encode(doc)) == message
    call = codec.decode_call("message/send", msgspec.json.encode({"message": doc}))
    assert isinstance(call, SendMessage) and call.message == message


# --------------------------------------------------------------- v0.3.0 JSON schema


def _response(result: bytes) -> Any:
    return msgspec.json.decode(b'{"jsonrpc":"2.0","id":1,"result":' + result + b"}")


_EVENT_DEFINITIONS = {
    Task: "Task",
    Message: "Message",
    StatusUpdate: "TaskStatusUpdateEvent",
    ArtifactUpdate: "TaskArtifactUpdateEvent",
}


@settings(max_examples=examples(100), deadline=None)
@given(tasks)
def test_tasks_validate(task: Task) -> None:
    wire = codec.encode_result(SEND, task)
    for version in ("v0.3.0", "v0.2.6"):
        assert_valid(msgspec.json.decode(wire), "Task", version)
        assert_valid(_response(wire), "SendMessageSuccessResponse", version)


@settings(max_examples=examples(100), deadline=None)
@given(messages)
def test_messages_validate(message: Message) -> None:
    wire = codec.encode_result(SEND, message)
    for version in ("v0.3.0", "v0.2.6"):
        assert_valid(msgspec.json.decode(wire), "Message", version)
        assert_valid(_response(wire), "SendMessageSuccessResponse", version)


@settings(max_examples=examples(100), deadline=None)
@given(stream_items)
def test_stream_items_validate(item: Task | Message | StatusUpdate | ArtifactUpdate) -> None:
    wire = codec.encode_stream_item(item)
    for version in ("v0.3.0", "v0.2.6"):
        assert_valid(msgspec.json.decode(wire), _EVENT_DEFINITIONS[type(item)], version)
        assert_valid(_response(wire), "SendStreamingMessageSuccessResponse", version)


@settings(max_examples=examples(100), deadline=None)
@given(tutorial_calls)
def test_requests_validate(call: SendMessage | SubscribeToTask) -> None:
    method, params = codec.encode_call(call)
    doc = msgspec.json.decode(params)
    if method == "message/send":
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": doc}
        assert_valid(request, "SendMessageRequest")
        assert_valid(request, "SendMessageRequest", "v0.2.6")
    else:  # task/subscribe is in no schema; its params are v0.3's TaskQueryParams
        assert_valid(doc, "TaskQueryParams")
