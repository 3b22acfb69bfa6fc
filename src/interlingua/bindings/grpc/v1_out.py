"""Canonical results and stream items straight into ``lf.a2a.v1`` messages.

What the v1.0 codec writes as ProtoJSON (``core/dialects/_v1_wire.py``:
``task_out``, ``message_out``, ``part_out``, ``stream_item_out``), built here as
protobuf messages without the JSON in between: the results and events every
request and stream produces. Building them directly is much faster than
parsing the codec's JSON into protobuf (``pbjson.fill``); writing the wire bytes
by hand in Python gained nothing over this (upb builds and serializes them in C).
The rarer answers (push configs, the card) still go through the codec's JSON.
A test holds the two ways to the same bytes.
"""

from __future__ import annotations

import calendar
from datetime import datetime
from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2

from ...core import model as m
from ...core.calls import ListTasksResult
from ...grpc_wire.pbjson import set_value
from ...grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb

__all__ = ["list_tasks_pb", "message_pb", "send_response_pb", "stream_item_pb", "task_pb"]

_ROLES = {m.Role.USER: pb.ROLE_USER, m.Role.AGENT: pb.ROLE_AGENT}
_STATES = {
    m.TaskState.SUBMITTED: pb.TASK_STATE_SUBMITTED,
    m.TaskState.WORKING: pb.TASK_STATE_WORKING,
    m.TaskState.COMPLETED: pb.TASK_STATE_COMPLETED,
    m.TaskState.FAILED: pb.TASK_STATE_FAILED,
    m.TaskState.CANCELED: pb.TASK_STATE_CANCELED,
    m.TaskState.INPUT_REQUIRED: pb.TASK_STATE_INPUT_REQUIRED,
    m.TaskState.REJECTED: pb.TASK_STATE_REJECTED,
    m.TaskState.AUTH_REQUIRED: pb.TASK_STATE_AUTH_REQUIRED,
}


def _value(data: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    set_value(out, data)
    return out


def _part(p: m.Part) -> pb.Part:
    kind = type(p)
    if kind is m.TextPart:
        assert isinstance(p, m.TextPart)
        return pb.Part(text=p.text, metadata=p.metadata, filename=p.filename,
                       media_type=p.media_type)
    if kind is m.FilePart:
        assert isinstance(p, m.FilePart)
        if p.raw is not None or p.uri is None:
            # inline content wins when a part carries both; neither: empty bytes
            return pb.Part(raw=p.raw or b"", metadata=p.metadata, filename=p.filename,
                           media_type=p.media_type)
        return pb.Part(url=p.uri, metadata=p.metadata, filename=p.filename,
                       media_type=p.media_type)
    assert isinstance(p, m.DataPart)
    return pb.Part(data=_value(p.data), metadata=p.metadata, filename=p.filename,
                   media_type=p.media_type)


def message_pb(msg: m.Message) -> pb.Message:
    return pb.Message(
        message_id=msg.message_id,
        context_id=msg.context_id,
        task_id=msg.task_id,
        role=_ROLES.get(msg.role, pb.ROLE_UNSPECIFIED),
        parts=[_part(p) for p in msg.parts],
        metadata=msg.metadata,
        extensions=msg.extensions,
        reference_task_ids=msg.reference_task_ids,
    )


def _artifact(a: m.Artifact) -> pb.Artifact:
    return pb.Artifact(
        artifact_id=a.artifact_id,
        name=a.name,
        description=a.description,
        parts=[_part(p) for p in a.parts],
        metadata=a.metadata,
        extensions=a.extensions,
    )


def _status(s: m.TaskStatus) -> pb.TaskStatus:
    return pb.TaskStatus(
        state=_STATES.get(s.state, pb.TASK_STATE_UNSPECIFIED),
        message=message_pb(s.message) if s.message is not None else None,
        timestamp=_timestamp(s.timestamp) if s.timestamp else None,
    )


def _timestamp(stamp: str) -> timestamp_pb2.Timestamp:
    # protobuf's own conversion from a datetime costs several times this
    when = datetime.fromisoformat(stamp)
    return timestamp_pb2.Timestamp(seconds=calendar.timegm(when.utctimetuple()),
                                   nanos=when.microsecond * 1000)


def task_pb(t: m.Task) -> pb.Task:
    return pb.Task(
        id=t.id,
        context_id=t.context_id,
        status=_status(t.status),
        artifacts=[_artifact(a) for a in t.artifacts],
        history=[message_pb(h) for h in t.history],
        metadata=t.metadata,
    )


def send_response_pb(result: m.Task | m.Message) -> pb.SendMessageResponse:
    if type(result) is m.Task:
        return pb.SendMessageResponse(task=task_pb(result))
    assert isinstance(result, m.Message)
    return pb.SendMessageResponse(message=message_pb(result))


def list_tasks_pb(result: ListTasksResult) -> pb.ListTasksResponse:
    return pb.ListTasksResponse(tasks=[task_pb(t) for t in result.tasks],
                                next_page_token=result.next_page_token,
                                page_size=result.page_size, total_size=result.total_size)


def stream_item_pb(item: m.Task | m.Message | m.StatusUpdate | m.ArtifactUpdate,
                   event_key: str, seq: int) -> pb.StreamResponse:
    """One stream event, its sequence number under ``event_key`` in its metadata."""
    kind = type(item)
    seen = {event_key: str(seq)}
    if kind is m.StatusUpdate:
        assert isinstance(item, m.StatusUpdate)
        return pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
            task_id=item.task_id, context_id=item.context_id, status=_status(item.status),
            metadata={**item.metadata, **seen} if item.metadata else seen))
    if kind is m.ArtifactUpdate:
        assert isinstance(item, m.ArtifactUpdate)
        return pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
            task_id=item.task_id, context_id=item.context_id,
            artifact=_artifact(item.artifact), append=item.append,
            last_chunk=item.last_chunk,
            metadata={**item.metadata, **seen} if item.metadata else seen))
    if kind is m.Task:
        assert isinstance(item, m.Task)
        task = task_pb(item)
        task.metadata[event_key] = str(seq)
        return pb.StreamResponse(task=task)
    assert isinstance(item, m.Message)
    message = message_pb(item)
    message.metadata[event_key] = str(seq)
    return pb.StreamResponse(message=message)

