"""Round trips through the v0.1 codec: decode(encode(x)) == x for what v0.1 can say.

Messages are compared modulo their ids (v0.1 messages carry none, so every
read makes one up). What v0.1 cannot say is checked to come back in the
documented form.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings

from interlingua.core.calls import (
    CancelTask,
    GetPushConfig,
    GetTask,
    SendConfig,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects.v0_1 import V01Codec
from interlingua.core.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    Part,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from tests.dialects.v0_1_strategies import (
    any_stream_items,
    any_tasks,
    calls,
    events,
    ids,
    messages,
    push_configs,
    same_modulo_message_ids,
    statuses,
    tasks,
    without_message_ids,
)
from tests.hypothesis_budget import examples

codec = V01Codec()
SEND = SendMessage(
    message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]),
    client_task_id="t-1",
)


@settings(max_examples=examples(150))
@given(tasks())
def test_task_round_trip(task: Task) -> None:
    for call in (SEND, GetTask(id=task.id), CancelTask(id=task.id), SubscribeToTask(id=task.id)):
        wire = codec.encode_result(call, task)
        back = codec.decode_result(call, wire)
        assert same_modulo_message_ids(back, task)
        assert codec.encode_result(call, back) == wire  # encode(decode(y)) == y


@settings(max_examples=examples(150))
@given(events)
def test_event_round_trip(item: StatusUpdate | ArtifactUpdate) -> None:
    wire = codec.encode_stream_item(item)
    back = codec.decode_stream_item(wire)
    assert same_modulo_message_ids(back, item)
    assert codec.encode_stream_item(back) == wire


@settings(max_examples=examples(150))
@given(any_stream_items)
def test_any_stream_item_settles_after_one_write(
    item: Task | Message | StatusUpdate | ArtifactUpdate,
) -> None:
    # Whatever the server holds, what a v0.1 client reads back writes the same bytes.
    wire = codec.encode_stream_item(item)
    back = codec.decode_stream_item(wire)
    assert codec.encode_stream_item(back) == wire


@settings(max_examples=examples(150))
@given(any_tasks)
def test_any_task_settles_after_one_write(task: Task) -> None:
    wire = codec.encode_result(SEND, task)
    back = codec.decode_result(SEND, wire)
    assert isinstance(back, Task)
    assert codec.encode_result(SEND, back) == wire
    # the index v0.1 knows an artifact by is its index, else its position
    assert [a.index for a in back.artifacts] == [
        i if a.index is None else a.index for i, a in enumerate(task.artifacts)
    ]


@settings(max_examples=examples(200))
@given(calls)
def test_call_round_trip(call: object) -> None:
    method, params = codec.encode_call(call)  # type: ignore[arg-type]
    assert method in codec.methods
    back = codec.decode_call(method, params)
    assert same_modulo_message_ids(back, call)
    assert codec.encode_call(back) == (method, params)


@given(push_configs(ids))
def test_push_config_result_round_trip(config: PushConfig) -> None:
    assert config.task_id is not None
    for call in (
        SetPushConfig(task_id=config.task_id, config=config),
        GetPushConfig(task_id=config.task_id),
    ):
        wire = codec.encode_result(call, config)
        # read back named by its task, as v0.1 names a task's one config
        assert codec.decode_result(call, wire) == msgspec.structs.replace(
            config, id=config.task_id)


@settings(max_examples=examples(100))
@given(ids, statuses)
def test_snapshot_goes_out_as_its_status(task_id: str, status: TaskStatus) -> None:
    task = Task(id=task_id, context_id="ctx", status=status, metadata={"task": True})
    back = codec.decode_stream_item(codec.encode_stream_item(task))
    assert same_modulo_message_ids(
        back, StatusUpdate(task_id=task_id, context_id="", status=status)
    )


@settings(max_examples=examples(100))
@given(messages, ids)
def test_bare_message_goes_out_as_completed_status(message: Message, task_id: str) -> None:
    message.task_id = task_id
    back = codec.decode_stream_item(codec.encode_stream_item(message))
    assert isinstance(back, StatusUpdate)
    assert back.task_id == task_id
    assert back.status.state is TaskState.COMPLETED
    assert back.status.message is not None
    expected = Message(
        message_id="", role=message.role, parts=message.parts, metadata=message.metadata
    )
    assert without_message_ids(back.status.message) == without_message_ids(expected)


# ---------------------------------------------------------------- documented forms


def _doc(wire: bytes) -> Any:
    return msgspec.json.decode(wire)


def test_task_shape() -> None:
    message = Message(
        message_id="m-1",
        role=Role.AGENT,
        parts=[TextPart(text="hi", media_type="text/plain")],
        task_id="t",
        context_id="c",
        extensions=["e"],
    )
    task = Task(
        id="t",
        context_id="c",
        status=TaskStatus(
            state=TaskState.WORKING, message=message, timestamp="2024-01-01T00:00:00.000Z"
        ),
        artifacts=[
            Artifact(artifact_id="a", parts=[TextPart(text="x")]),
            Artifact(artifact_id="b", parts=[], index=7, name="n"),
        ],
        history=[message],
        metadata={"k": 1},
    )
    v01_message = {"role": "agent", "parts": [{"type": "text", "text": "hi"}]}
    assert _doc(codec.encode_result(GetTask(id="t"), task)) == {
        "id": "t",
        "sessionId": "c",
        "status": {
            "state": "working",
            "message": v01_message,
            "timestamp": "2024-01-01T00:00:00.000Z",
        },
        "artifacts": [
            {"parts": [{"type": "text", "text": "x"}], "index": 0},
            {"name": "n", "parts": [], "index": 7},
        ],
        "history": [v01_message],
        "metadata": {"k": 1},
    }


def test_task_without_session_and_back() -> None:
    task = Task(id="t", context_id="", status=TaskStatus(state=TaskState.SUBMITTED))
    wire = codec.encode_result(GetTask(id="t"), task)
    assert _doc(wire) == {"id": "t", "status": {"state": "submitted"}}
    assert codec.decode_result(GetTask(id="t"), wire) == task


def test_states_v01_lacks() -> None:
    # DIALECTS §i.18: rejected -> failed, auth-required -> input-required; final on both
    expected = {
        TaskState.REJECTED: ("failed", True),
        TaskState.AUTH_REQUIRED: ("input-required", True),
        TaskState.INPUT_REQUIRED: ("input-required", True),
        TaskState.COMPLETED: ("completed", True),
        TaskState.CANCELED: ("canceled", True),
        TaskState.FAILED: ("failed", True),
        TaskState.SUBMITTED: ("submitted", False),
        TaskState.WORKING: ("working", False),
        TaskState.UNKNOWN: ("unknown", False),
    }
    assert set(expected) == set(TaskState)
    for state, (wire_state, final) in expected.items():
        event = StatusUpdate(task_id="t", context_id="c", status=TaskStatus(state=state))
        assert _doc(codec.encode_stream_item(event)) == {
            "id": "t",
            "status": {"state": wire_state},
            "final": final,
        }
        task = Task(id="t", context_id="c", status=TaskStatus(state=state))
        assert _doc(codec.encode_result(GetTask(id="t"), task))["status"]["state"] == wire_state


def test_artifact_event_carries_chunk_flags_inside() -> None:
    artifact = Artifact(artifact_id="x", parts=[TextPart(text="a")], name="story", index=2)
    for append, last in ((False, False), (True, False), (True, True), (False, True)):
        event = ArtifactUpdate(
            task_id="t",
            context_id="c",
            artifact=artifact,
            append=append,
            last_chunk=last,
            metadata={"e": 1},
        )
        doc = _doc(codec.encode_stream_item(event))
        inner: dict[str, object] = {
            "name": "story",
            "parts": [{"type": "text", "text": "a"}],
            "index": 2,
        }
        if append:
            inner["append"] = True
        if last:
            inner["lastChunk"] = True
        assert doc == {"id": "t", "artifact": inner, "metadata": {"e": 1}}
    # an update from a dialect without index goes out with the schema's default, 0
    event = ArtifactUpdate(
        task_id="t", context_id="c", artifact=Artifact(artifact_id="q", parts=[])
    )
    assert _doc(codec.encode_stream_item(event)) == {
        "id": "t",
        "artifact": {"parts": [], "index": 0},
    }


def test_message_answer_becomes_a_completed_task() -> None:
    reply = Message(message_id="r", role=Role.AGENT, parts=[TextPart(text="done")], context_id="c")
    call = SendMessage(message=SEND.message, client_task_id="task-9")
    assert _doc(codec.encode_result(call, reply)) == {
        "id": "task-9",
        "sessionId": "c",
        "status": {
            "state": "completed",
            "message": {"role": "agent", "parts": [{"type": "text", "text": "done"}]},
        },
    }
    assert _doc(codec.encode_stream_item(reply)) == {
        "id": "",  # the message alone does not name its task
        "status": {
            "state": "completed",
            "message": {"role": "agent", "parts": [{"type": "text", "text": "done"}]},
        },
        "final": True,
    }


def test_parts_spelling() -> None:
    parts: list[Part] = [
        TextPart(text="t", media_type="text/markdown", filename="a.md", metadata={"m": 1}),
        FilePart(raw=b"hello", media_type="text/plain", filename="h.txt"),
        FilePart(uri="https://x/f.pdf", media_type="application/pdf"),
        FilePart(filename="ref.bin"),
        FilePart(raw=b"hi", uri="https://x/both"),  # both: the inline copy wins
        DataPart(data={"a": 1}, media_type="application/json"),
        DataPart(data=[1, 2], metadata={"k": 1}),
        DataPart(data="s"),
    ]
    doc = _doc(codec.encode_result(SEND, Message(message_id="m", role=Role.USER, parts=parts)))
    assert doc["status"]["message"]["parts"] == [
        {"type": "text", "text": "t", "metadata": {"m": 1}},
        {"type": "file", "file": {"name": "h.txt", "mimeType": "text/plain", "bytes": "aGVsbG8="}},
        {"type": "file", "file": {"mimeType": "application/pdf", "uri": "https://x/f.pdf"}},
        {"type": "file", "file": {"name": "ref.bin"}},
        {"type": "file", "file": {"bytes": "aGk="}},
        {"type": "data", "data": {"a": 1}},
        {"type": "data", "data": {"value": [1, 2]}, "metadata": {"k": 1, "data_part_compat": True}},
        {"type": "data", "data": {"value": "s"}, "metadata": {"data_part_compat": True}},
    ]


def test_send_params_shape() -> None:
    call = SendMessage(
        message=Message(
            message_id="m", role=Role.USER, parts=[TextPart(text="x")], context_id="s-1"
        ),
        config=SendConfig(
            history_length=2,
            push_config=PushConfig(url="https://hook", token="tok", id="ignored"),
            accepted_output_modes=["text/plain"],
            blocking=False,
        ),
        metadata={"r": 1},
        client_task_id="t-1",
    )
    method, params = codec.encode_call(call)
    assert method == "tasks/send"
    assert _doc(params) == {
        "id": "t-1",
        "sessionId": "s-1",
        "message": {"role": "user", "parts": [{"type": "text", "text": "x"}]},
        "pushNotification": {"url": "https://hook", "token": "tok"},
        "historyLength": 2,
        "metadata": {"r": 1},
    }
    # v0.1 clients make the task id: the message's own task wins, else one is made
    continuing = SendMessage(
        message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")], task_id="t-7")
    )
    assert _doc(codec.encode_call(continuing)[1])["id"] == "t-7"
    fresh = [_doc(codec.encode_call(SendMessage(message=SEND.message))[1])["id"] for _ in range(2)]
    assert fresh[0] != fresh[1] and all(len(i) == 36 for i in fresh)


def test_push_config_result_takes_task_id_from_the_call() -> None:
    wire = codec.encode_result(
        GetPushConfig(task_id="t9"), PushConfig(url="https://x/hook", id="c")
    )
    assert _doc(wire) == {"id": "t9", "pushNotificationConfig": {"url": "https://x/hook"}}
    # its id is the task's: v0.1 names a task's one config so
    assert codec.decode_result(GetPushConfig(task_id="t9"), wire) == PushConfig(
        url="https://x/hook", id="t9", task_id="t9"
    )
    # null: no (or a cleared) config (spec §6.10)
    null = b'{"id":"t9","pushNotificationConfig":null}'
    assert codec.decode_result(GetPushConfig(task_id="t9"), null) is None


def test_method_names_per_call() -> None:
    assert codec.encode_call(SEND)[0] == "tasks/send"
    streaming = SendMessage(message=SEND.message, streaming=True, client_task_id="t")
    assert codec.encode_call(streaming)[0] == "tasks/sendSubscribe"
    assert codec.encode_call(GetTask(id="t"))[0] == "tasks/get"
    assert codec.encode_call(CancelTask(id="t"))[0] == "tasks/cancel"
    assert codec.encode_call(SubscribeToTask(id="t"))[0] == "tasks/resubscribe"
    assert codec.encode_call(GetPushConfig(task_id="t", config_id="c")) == (
        "tasks/pushNotification/get",
        b'{"id":"t"}',
    )
    back = codec.decode_call("tasks/sendSubscribe", codec.encode_call(streaming)[1])
    assert isinstance(back, SendMessage) and back.streaming is True
