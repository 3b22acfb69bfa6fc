"""Round trips through the v0.2/v0.3 JSON-RPC codec: decode(encode(x)) == x, and fixpoints."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

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
from interlingua.core.dialects.v0_3 import V03Codec
from interlingua.core.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from tests.dialects.v0_3_strategies import (
    calls,
    ids,
    messages,
    push_configs,
    stream_items,
    tasks,
)
from tests.hypothesis_budget import examples

codec = V03Codec()
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))


@settings(max_examples=examples(150))
@given(tasks)
def test_task_round_trip(task: Task) -> None:
    wire = codec.encode_result(GetTask(id=task.id), task)
    assert codec.decode_result(GetTask(id=task.id), wire) == task
    assert codec.decode_result(SEND, wire) == task  # message/send answers a bare Task


@settings(max_examples=examples(150))
@given(messages)
def test_message_round_trip(message: Message) -> None:
    wire = codec.encode_result(SEND, message)
    assert codec.decode_result(SEND, wire) == message


@settings(max_examples=examples(150))
@given(stream_items)
def test_stream_item_round_trip(item: Task | Message | StatusUpdate | ArtifactUpdate) -> None:
    wire = codec.encode_stream_item(item)
    assert codec.decode_stream_item(wire) == item
    # encode(decode(y)) == y for what we emit
    assert codec.encode_stream_item(codec.decode_stream_item(wire)) == wire


@settings(max_examples=examples(200))
@given(calls)
def test_call_round_trip(call: object) -> None:
    method, params = codec.encode_call(call)  # type: ignore[arg-type]
    assert method in codec.methods
    assert codec.decode_call(method, params) == call
    again = codec.encode_call(codec.decode_call(method, params))
    assert again == (method, params)


@given(push_configs(ids))
def test_push_config_result_round_trip(config: PushConfig) -> None:
    assert config.task_id is not None
    for call in (
        SetPushConfig(task_id=config.task_id, config=config),
        GetPushConfig(task_id=config.task_id),
    ):
        wire = codec.encode_result(call, config)
        assert codec.decode_result(call, wire) == config


@given(st.lists(push_configs(ids), max_size=3))
def test_push_config_list_round_trip(configs: list[PushConfig]) -> None:
    call = ListPushConfigs(task_id="t")
    wire = codec.encode_result(call, configs)
    assert msgspec.json.decode(wire) == [
        msgspec.json.decode(codec.encode_result(GetPushConfig(task_id="t"), c)) for c in configs
    ]
    assert codec.decode_result(call, wire) == configs


def test_push_config_result_takes_task_id_from_the_call() -> None:
    wire = codec.encode_result(GetPushConfig(task_id="t9"), PushConfig(url="https://x/hook"))
    assert msgspec.json.decode(wire) == {
        "taskId": "t9",
        "pushNotificationConfig": {"url": "https://x/hook"},
    }


def test_delete_result_is_null_and_reads_back_as_none() -> None:
    call = DeletePushConfig(task_id="t", config_id="c")
    assert codec.encode_result(call, None) == b"null"
    assert codec.decode_result(call, b"null") is None
    assert codec.decode_result(call, b"{}") is None  # DIALECTS §i.30


def test_status_event_final_follows_the_state() -> None:
    # final = true on terminal and interrupted states only (DIALECTS §i.17, §c)
    for state in TaskState:
        event = StatusUpdate(task_id="t", context_id="c", status=TaskStatus(state=state))
        doc = msgspec.json.decode(codec.encode_stream_item(event))
        expected = state in {
            TaskState.COMPLETED,
            TaskState.CANCELED,
            TaskState.FAILED,
            TaskState.REJECTED,
            TaskState.INPUT_REQUIRED,
            TaskState.AUTH_REQUIRED,
        }
        assert doc["final"] is expected, state
        assert doc["status"]["state"] == state.value


def test_non_object_data_goes_out_wrapped_and_comes_back() -> None:
    part = DataPart(data=[1, "two", None], metadata={"k": 1})
    msg = Message(message_id="m", role=Role.AGENT, parts=[part])
    doc = msgspec.json.decode(codec.encode_result(SEND, msg))
    assert doc["parts"] == [
        {
            "kind": "data",
            "data": {"value": [1, "two", None]},
            "metadata": {"k": 1, "data_part_compat": True},
        }
    ]
    assert codec.decode_result(SEND, codec.encode_result(SEND, msg)) == msg
    assert part.metadata == {"k": 1}  # the canonical object is not touched


def test_fields_v03_cannot_carry_are_dropped() -> None:
    msg = Message(
        message_id="m",
        role=Role.AGENT,
        parts=[
            TextPart(text="t", media_type="text/markdown", filename="a.md"),
            DataPart(data={"a": 1}, media_type="application/json", filename="d.json"),
        ],
    )
    task = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.WORKING),
        artifacts=[Artifact(artifact_id="a", parts=[TextPart(text="x")], index=3)],
        history=[msg],
    )
    doc = msgspec.json.decode(codec.encode_result(GetTask(id="t"), task))
    assert doc["history"][0]["parts"] == [
        {"kind": "text", "text": "t"},
        {"kind": "data", "data": {"a": 1}},
    ]
    assert doc["artifacts"] == [{"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]}]


def test_file_parts_spell_bytes_and_uri() -> None:
    msg = Message(
        message_id="m",
        role=Role.USER,
        parts=[
            FilePart(raw=b"hello", media_type="text/plain", filename="h.txt"),
            FilePart(uri="https://x/f.pdf", media_type="application/pdf"),
        ],
    )
    doc = msgspec.json.decode(codec.encode_result(SEND, msg))
    assert doc["parts"] == [
        {"kind": "file", "file": {"bytes": "aGVsbG8=", "mimeType": "text/plain", "name": "h.txt"}},
        {"kind": "file", "file": {"uri": "https://x/f.pdf", "mimeType": "application/pdf"}},
    ]


def test_timestamps_are_emitted_as_given_and_normalized_on_input() -> None:
    given_ts = "2024-05-01T12:00:00.000Z"
    task = Task(
        id="t", context_id="c", status=TaskStatus(state=TaskState.SUBMITTED, timestamp=given_ts)
    )
    doc = msgspec.json.decode(codec.encode_result(GetTask(id="t"), task))
    assert doc["status"]["timestamp"] == given_ts
    doc["status"]["timestamp"] = "2024-05-01T14:00:00+02:00"
    back = codec.decode_result(GetTask(id="t"), msgspec.json.encode(doc))
    assert isinstance(back, Task)
    assert back.status.timestamp == given_ts
    # other ISO 8601 spellings of the same instant
    for spelling in ("2024-05-01T12:00Z", "20240501T120000Z", "2024-05-01T12:00:00,000+00:00"):
        doc["status"]["timestamp"] = spelling
        back = codec.decode_stream_item(msgspec.json.encode(doc))
        assert isinstance(back, Task)
        assert back.status.timestamp == given_ts, spelling


def test_method_names_per_call() -> None:
    assert codec.encode_call(SEND)[0] == "message/send"
    streaming = SendMessage(message=SEND.message, streaming=True)
    assert codec.encode_call(streaming)[0] == "message/stream"
    assert codec.encode_call(GetTask(id="t"))[0] == "tasks/get"
    assert codec.encode_call(CancelTask(id="t"))[0] == "tasks/cancel"
    assert codec.encode_call(SubscribeToTask(id="t"))[0] == "tasks/resubscribe"
    assert codec.encode_call(GetExtendedCard())[0] == "agent/getAuthenticatedExtendedCard"
    assert codec.decode_call("message/stream", codec.encode_call(streaming)[1]).streaming is True
