"""The gRPC binding's fast conversions agree with the slow, general ones:
messages built straight from the model (``v1_out``) and the bytes written
straight from it (``v1_bytes``) are the bytes the v1.0 codec's ProtoJSON gives
through ``google.protobuf.json_format``, and ``pbjson`` reads and writes
ProtoJSON as ``json_format`` does."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from google.protobuf import json_format, struct_pb2

from interlingua.bindings.grpc import EVENT_ID_KEY, v1_bytes, v1_out
from interlingua.bindings.grpc.v1_in import send_in
from interlingua.core import model as m
from interlingua.core.calls import GetTask, ListTasksResult, SendMessage
from interlingua.core.dialects import get_codec
from interlingua.grpc_wire.pbjson import fill, to_doc
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1

V1 = get_codec("1.0")
STAMP = "2026-11-25T18:00:00.123Z"


def _reference(doc: Any, cls: type) -> bytes:
    out = cls()
    json_format.ParseDict(doc, out, ignore_unknown_fields=True)
    return out.SerializeToString(deterministic=True)


def _message(**extra: Any) -> m.Message:
    return m.Message(message_id="m1", role=m.Role.AGENT, parts=[
        m.TextPart(text="hi", metadata={"k": "v"}, media_type="text/plain"),
        m.FilePart(raw=b"\x00\x01", media_type="application/octet-stream", filename="f.bin"),
        m.FilePart(uri="https://x.example/f", media_type="text/plain"),
        m.FilePart(),
        m.DataPart(data={"a": [1, 2.5, None, {"b": True}]}),
        m.DataPart(data=[1, "x"]),
        m.DataPart(data="plain"),
    ], context_id="c1", task_id="t1", reference_task_ids=["t0"], extensions=["urn:e"],
        metadata={"n": 3}, **extra)


TASKS = [
    m.Task(id="t1", context_id="c1", status=m.TaskStatus(m.TaskState.COMPLETED, _message(), STAMP),
           artifacts=[m.Artifact(artifact_id="a1", parts=[m.TextPart(text="x")], name="n",
                                 description="d", metadata={"z": 1}, extensions=["urn:e"])],
           history=[_message()], metadata={"top": {"nested": [1]}}),
    m.Task(id="t2", context_id="c2", status=m.TaskStatus(m.TaskState.UNKNOWN)),
    m.Task(id="t4", context_id="c4", status=m.TaskStatus(m.TaskState.WORKING), metadata={},
           history=[m.Message(message_id="m", role=m.Role.USER, parts=[
               m.DataPart(data={"ключ": -3, "big": 2**40, "f": -0.5, "e": {}, "l": []}),
               m.DataPart(data=None), m.DataPart(data=False)], metadata={})]),
    *[m.Task(id="t3", context_id="c3", status=m.TaskStatus(state, timestamp=STAMP))
      for state in m.TaskState],
]


@pytest.mark.parametrize("task", TASKS)
def test_tasks_as_the_codec_writes_them(task: m.Task) -> None:
    doc = msgspec.json.decode(V1.encode_result(GetTask(id=task.id), task))
    expected = _reference(doc, pb1.Task)
    assert v1_out.task_pb(task).SerializeToString(deterministic=True) == expected
    assert v1_bytes.task_bytes(task) == expected
    send = SendMessage(message=_message())
    doc = msgspec.json.decode(V1.encode_result(send, task))
    expected = _reference(doc, pb1.SendMessageResponse)
    assert v1_out.send_response_pb(task).SerializeToString(deterministic=True) == expected
    assert v1_bytes.send_response_bytes(task) == expected


def test_a_message_answer_and_a_list() -> None:
    send = SendMessage(message=_message())
    doc = msgspec.json.decode(V1.encode_result(send, _message()))
    expected = _reference(doc, pb1.SendMessageResponse)
    assert v1_out.send_response_pb(_message()).SerializeToString(deterministic=True) == expected
    assert v1_bytes.send_response_bytes(_message()) == expected
    assert v1_bytes.message_bytes(_message()) == _reference(
        msgspec.json.decode(V1.encode_stream_item(_message()))["message"], pb1.Message)
    listed = ListTasksResult(tasks=TASKS[:2], next_page_token="p", page_size=2, total_size=9)
    from interlingua.core.calls import ListTasks

    doc = msgspec.json.decode(V1.encode_result(ListTasks(), listed))
    assert v1_out.list_tasks_pb(listed).SerializeToString(deterministic=True) == _reference(doc, pb1.ListTasksResponse)


ITEMS = [
    TASKS[0],
    _message(),
    m.StatusUpdate("t1", "c1", m.TaskStatus(m.TaskState.WORKING, _message(), STAMP)),
    m.StatusUpdate("t1", "c1", m.TaskStatus(m.TaskState.COMPLETED), {"own": "x"}),
    m.ArtifactUpdate("t1", "c1", m.Artifact(artifact_id="a", parts=[m.TextPart(text="chunk")]),
                     append=True, last_chunk=True),
    m.ArtifactUpdate("t1", "c1", m.Artifact(artifact_id="a", parts=[m.TextPart(text="c")]),
                     metadata={"own": 1}),
    m.ArtifactUpdate("t1", "c1", m.Artifact(artifact_id="a", name="n", description="d",
                                            parts=[m.TextPart(text="é"), m.TextPart(text="")])),
    m.ArtifactUpdate("t1", "c1", m.Artifact(artifact_id="a", parts=[]), last_chunk=True),
    m.StatusUpdate("t1", "c1", m.TaskStatus(m.TaskState.INPUT_REQUIRED,
                                            timestamp="2026-11-25T18:00:00Z")),
    m.StatusUpdate("t1", "c1", m.TaskStatus(m.TaskState.UNKNOWN)),
    m.StatusUpdate("t1", "", m.TaskStatus(m.TaskState.FAILED, timestamp="2026-11-25T18:00:00.5+01:00")),
    m.StatusUpdate("t1", "c1", m.TaskStatus(m.TaskState.WORKING, timestamp="1969-12-31T23:59:58.25Z"),
                   {}),
    m.ArtifactUpdate("t" * 200, "c1", m.Artifact(artifact_id="a", parts=[
        m.TextPart(text="x" * 20_000, metadata={}), m.DataPart(data={"k": "é" * 100}),
        m.FilePart(uri="https://x.example/f", filename="f", metadata={"m": [1]})],
        metadata={}, extensions=["", "urn:e"]), metadata={"z": None, "a": {"b": 1}}),
    m.ArtifactUpdate("t1", "c1", m.Artifact(artifact_id="a", parts=[
        m.TextPart(text=t) for t in ("y" * 125, "y" * 126, "z" * 300, "ü" * 63)])),
    # chunks of one text part around the lengths that fit a byte, each flag alone
    *(m.ArtifactUpdate("t1", "c1", m.Artifact(artifact_id="a", parts=[m.TextPart(text=t)]),
                       append=append, last_chunk=last)
      for t, append, last in (("y" * 123, True, False), ("y" * 124, False, True),
                              ("y" * 125, False, False), ("ü" * 61, True, True),
                              ("ü" * 62, True, False), ("ü" * 63, False, True))),
    m.ArtifactUpdate("t1", "c1", m.Artifact(artifact_id="a", parts=[
        m.TextPart(text="t", filename="f.txt")]), append=True),
    # the same artifact id in another task and context
    m.ArtifactUpdate("t2", "c2", m.Artifact(artifact_id="a", parts=[m.TextPart(text="c")]),
                     append=True),
]


@pytest.mark.parametrize("item", ITEMS)
def test_stream_items_as_the_codec_writes_them(item: Any) -> None:
    doc = msgspec.json.decode(V1.encode_stream_item(item))
    payload = next(iter(doc.values()))
    payload["metadata"] = {**(payload.get("metadata") or {}), EVENT_ID_KEY: "17"}
    expected = _reference(doc, pb1.StreamResponse)
    assert v1_out.stream_item_pb(item, EVENT_ID_KEY, 17).SerializeToString(
        deterministic=True) == expected
    assert v1_bytes.stream_item_bytes(item, EVENT_ID_KEY, 17) == expected


@pytest.mark.parametrize("seq", [0, 127, 128, 2**40])
@pytest.mark.parametrize("item", [ITEMS[1], ITEMS[4], ITEMS[-1]])
def test_stream_bytes_carry_any_event_id(item: Any, seq: int) -> None:
    out = pb1.StreamResponse.FromString(v1_bytes.stream_item_bytes(item, "k/id", seq))
    payload = getattr(out, out.WhichOneof("payload"))
    assert payload.metadata["k/id"] == str(seq)
    assert out.SerializeToString(deterministic=True) == v1_out.stream_item_pb(
        item, "k/id", seq).SerializeToString(deterministic=True)


def _request() -> pb1.SendMessageRequest:
    meta = struct_pb2.Struct()
    meta.update({"a": 1, "b": [1.5, "x", {"c": None, "d": False}]})
    return pb1.SendMessageRequest(
        tenant="t", metadata=meta,
        message=pb1.Message(message_id="m", role=pb1.ROLE_USER, parts=[
            pb1.Part(text="hi", filename="a.txt"), pb1.Part(raw=b"\x00\xff", media_type="x/y"),
            pb1.Part(url="https://x.example"), pb1.Part(data=struct_pb2.Value(number_value=2))]),
        configuration=pb1.SendMessageConfiguration(
            history_length=0, return_immediately=True, accepted_output_modes=["text/plain"],
            task_push_notification_config=pb1.TaskPushNotificationConfig(url="https://h")))


def test_pbjson_reads_as_json_format() -> None:
    for message in (_request(), pb1.ListTasksRequest(status=pb1.TASK_STATE_WORKING,
                                                     page_size=0, include_artifacts=False),
                    pb03.SendMessageRequest(request=pb03.Message(content=[pb03.Part(
                        file=pb03.FilePart(file_with_bytes=b"\x01", mime_type="a/b"))]))):
        assert to_doc(message) == json_format.MessageToDict(message)
    odd = pb1.Message()
    odd.role = 9  # type: ignore[assignment]
    assert to_doc(odd) == {"role": 9}  # left for the codec to refuse


def test_pbjson_writes_as_json_format() -> None:
    for message in (_request(), pb1.AgentCard(
            name="n", security_schemes={"k": pb1.SecurityScheme(
                api_key_security_scheme=pb1.APIKeySecurityScheme(location="header", name="X"))},
            security_requirements=[pb1.SecurityRequirement(
                schemes={"k": pb1.StringList(list=["a"])})])):
        doc = json_format.MessageToDict(message)
        assert fill(type(message)(), doc) == message
    status = fill(pb1.TaskStatus(), {"timestamp": "2026-11-25T19:00:00+01:00"})
    assert status.timestamp.ToJsonString() == "2026-11-25T18:00:00Z"


def _send(**message: Any) -> pb1.SendMessageRequest:
    fields: dict[str, Any] = {"message_id": "m", "role": pb1.ROLE_USER,
                              "parts": [pb1.Part(text="hi")]}
    fields.update(message)
    return pb1.SendMessageRequest(message=pb1.Message(**fields))


DIRECT_SENDS = [
    _send(),
    _send(role=pb1.ROLE_AGENT, context_id="c", task_id="t", extensions=["urn:a", ""],
          reference_task_ids=["t0"],
          parts=[pb1.Part(text=""), pb1.Part(text="é", filename="a.txt", media_type="text/x")]),
    pb1.SendMessageRequest(tenant="ten", message=_send().message,
                           configuration=pb1.SendMessageConfiguration(
                               accepted_output_modes=["text/plain"], history_length=0,
                               return_immediately=True)),
    pb1.SendMessageRequest(message=_send().message,
                           configuration=pb1.SendMessageConfiguration(history_length=3)),
    pb1.SendMessageRequest(message=_send().message,
                           configuration=pb1.SendMessageConfiguration()),
]
CODEC_SENDS = [
    _request(),
    pb1.SendMessageRequest(),
    _send(message_id=""),
    _send(role=pb1.ROLE_UNSPECIFIED),
    _send(parts=[]),
    _send(parts=[pb1.Part()]),
    _send(parts=[pb1.Part(text="a", metadata=struct_pb2.Struct())]),
    _send(parts=[pb1.Part(text="a"), pb1.Part(url="https://x.example")]),
    _send(metadata=struct_pb2.Struct()),
    pb1.SendMessageRequest(message=_send().message, metadata=struct_pb2.Struct()),
    pb1.SendMessageRequest(message=_send().message,
                           configuration=pb1.SendMessageConfiguration(history_length=-1)),
]


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("request_", DIRECT_SENDS)
def test_usual_sends_are_read_directly_as_the_codec_reads_them(
        request_: pb1.SendMessageRequest, streaming: bool) -> None:
    method = "SendStreamingMessage" if streaming else "SendMessage"
    direct = send_in(request_, streaming)
    assert direct is not None
    assert direct == V1.decode_call(method, msgspec.json.encode(to_doc(request_)))


@pytest.mark.parametrize("request_", CODEC_SENDS)
def test_other_sends_are_left_to_the_codec(request_: pb1.SendMessageRequest) -> None:
    assert send_in(request_, False) is None


def test_peer_addresses_as_the_front_door_reads_them() -> None:
    from interlingua.bindings.grpc.server import _client_of

    assert _client_of("ipv4:127.0.0.1:5555") == ("127.0.0.1", 5555)
    assert _client_of("ipv6:[::1]:443") == ("::1", 443)
    assert _client_of("unix:/tmp/s") == ()
    assert _client_of("") == ()


def test_stream_events_are_encoded_once_per_service_for_every_reader() -> None:
    from interlingua.bindings.grpc.server import GrpcBinding
    from interlingua.bindings.http.sse_writer import encoded_item
    from interlingua.core.dialects import get_codec as codec_of
    from interlingua.server.streams import Entry
    from interlingua.stores.base import StoredEvent

    binding = GrpcBinding(None, lambda: (None, ""))  # type: ignore[arg-type]
    v1, v03 = binding._v1, binding._v03
    item = ITEMS[4]
    stored = StoredEvent(7, item)
    first = v1.event(Entry(7, item, stored))
    assert v1.event(Entry(7, item, stored)) is first  # the next reader's, from the entry
    assert first == v1_bytes.stream_item_bytes(item, EVENT_ID_KEY, 7)
    # the v0.3 service and an SSE reader of another dialect keep theirs beside it
    sse = encoded_item(Entry(7, item, stored), codec_of("1.0"))
    old = v03.event(Entry(7, item, stored))
    assert v03.event(Entry(7, item, stored)) is old
    assert v1.event(Entry(7, item, stored)) is first
    assert encoded_item(Entry(7, item, stored), codec_of("1.0")) is sse
    update = pb03.StreamResponse.FromString(old).artifact_update
    assert (update.artifact.parts[0].text, update.metadata[EVENT_ID_KEY]) == ("chunk", "7")
    # a lone reader's event is not kept
    assert v1.event(Entry(8, item, None)) is not v1.event(Entry(8, item, None))


@pytest.mark.parametrize("item", [ITEMS[1], ITEMS[4], ITEMS[-1], ITEMS[-3]])
def test_a_snapshots_event_before_its_last_names_no_event_id_on_any_service(item: Any) -> None:
    """A snapshot sent as several events under one id names it on its last alone
    (``Entry.id_follows``): the others carry their own metadata only."""
    from interlingua.bindings.grpc.server import GrpcBinding
    from interlingua.server.streams import Entry

    binding = GrpcBinding(None, lambda: (None, ""))  # type: ignore[arg-type]
    services = [(binding._v1, pb1.StreamResponse), (binding._v03, pb03.StreamResponse),
                *((v11, pb1.StreamResponse) for v11 in binding._v1.newer.values())]
    for service, response in services:
        named = response.FromString(service.event(Entry(9, item)))
        unnamed = response.FromString(service.event(Entry(9, item, id_follows=True)))
        which = named.WhichOneof("payload")
        assert getattr(named, which).metadata[EVENT_ID_KEY] == "9"
        assert EVENT_ID_KEY not in getattr(unnamed, which).metadata, service.name
        del getattr(named, which).metadata[EVENT_ID_KEY]
        if not getattr(named, which).metadata:
            getattr(named, which).ClearField("metadata")
        assert unnamed == named, service.name
