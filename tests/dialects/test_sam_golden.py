"""Golden inputs for the Solace Agent Mesh codec: every JSON example of seed 002.

The examples are read by program from the seed's text (``shared/seeds/002_*.txt``;
``tests/reference/extract.py``, which keeps them in
``tests/reference/extracted/seed-002-examples.json``, checked against the text where
the shared folder is present): each block that opens with a line holding only ``{``
runs until its braces balance. The seed writes ``// …`` comments inside them; they
are removed, and here with them the members whose value was nothing but such a
comment (``"params": { // Method-specific parameters }``), which the seed elides
rather than shows. Its ``<base64-encoded-content>`` placeholders are replaced by
real base64.

Every example is sorted by its shape, decoded with the codec where it is a
request, a result or a piece of one, checked field by field against what the
seed shows, and written back; the written form must contain the seed's
members with the seed's values (see ``assert_shape`` for the few documented
differences).
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

import msgspec
import pytest

from interlingua.core import errors
from interlingua.core.calls import CancelTask, SendMessage
from interlingua.core.dialects.sam import SAMCodec
from interlingua.core.model import (
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TextPart,
)
from tests.reference import extract

codec = SAMCodec()
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))
PLACEHOLDER = "<base64-encoded-content>"
CONTENT = b"seed 002 inline content"
CONTENT_B64 = base64.b64encode(CONTENT).decode()


# ------------------------------------------------------------------------ the examples


def _drop_elided(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _drop_elided(v) for k, v in doc.items() if v != {}}
    if isinstance(doc, list):
        return [_drop_elided(v) for v in doc]
    if doc == PLACEHOLDER:
        return CONTENT_B64
    return doc


def seed_examples(seed: str) -> list[Any]:
    """The JSON examples of seed ``seed`` ("002", "003"), elisions dropped."""
    return [_drop_elided(doc) for doc in extract.load(f"seed-{seed}-examples.json")]


def classify(doc: dict[str, Any]) -> str:
    if "jsonrpc" in doc:
        if "method" in doc:
            return "request"
        return "error" if "error" in doc else "response"
    if doc.get("kind") == "task":
        return "task"
    if "role" in doc:
        return "message"
    if "state" in doc:
        return "status"
    if "id" in doc and ("uri" in doc or "inline_data" in doc):
        return "artifact"
    if set(doc) - {"metadata"} <= {"text", "data", "file"}:
        return "part"
    return "unknown"


@pytest.fixture(scope="module")
def examples() -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for doc in seed_examples("002"):
        out.setdefault(classify(doc), []).append(doc)
    return out


# -------------------------------------------------------------- shape comparison


def _instant(value: Any) -> datetime | None:
    if isinstance(value, str) and len(value) >= 20 and value[4] == "-" and "T" in value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


# Members we add to what the seed shows: a message's id (seed 002 calls it required
# but leaves it out of its status messages) and ``kind``, and an artifact's ``parts``.
EXTRA_ALLOWED = {"message_id", "kind", "parts"}


def assert_shape(seed: Any, ours: Any, path: str = "$") -> None:
    """``ours`` holds every member of ``seed`` with the same value.

    Timestamps compare as instants (we always write milliseconds and ``Z``);
    an empty list in the seed stands for an elided one (``"history": [ // … ]``)
    and may be absent; ``ours`` may add only the members in ``EXTRA_ALLOWED``.
    """
    if isinstance(seed, dict):
        assert isinstance(ours, dict), f"{path}: {ours!r} is not an object"
        for key, value in seed.items():
            if value == [] and key not in ours:
                continue
            assert key in ours, f"{path}.{key} is missing from {sorted(ours)}"
            assert_shape(value, ours[key], f"{path}.{key}")
        extra = set(ours) - set(seed) - EXTRA_ALLOWED
        assert not extra, f"{path}: unexpected members {sorted(extra)}"
    elif isinstance(seed, list):
        assert isinstance(ours, list) and len(ours) == len(seed), f"{path}: {ours!r}"
        for i, (a, b) in enumerate(zip(seed, ours, strict=True)):
            assert_shape(a, b, f"{path}[{i}]")
    elif _instant(seed) is not None:
        assert _instant(ours) == _instant(seed), f"{path}: {ours!r} != {seed!r}"
    else:
        assert ours == seed and type(ours) is type(seed), f"{path}: {ours!r} != {seed!r}"


def test_assert_shape_can_fail() -> None:
    with pytest.raises(AssertionError):
        assert_shape({"a": 1}, {"a": 2})
    with pytest.raises(AssertionError):
        assert_shape({"a": 1}, {"a": 1, "b": 2})
    with pytest.raises(AssertionError):
        assert_shape({"t": "2024-03-04T12:00:00Z"}, {"t": "2024-03-04T12:00:01.000Z"})
    with pytest.raises(AssertionError):
        assert_shape({"a": [1]}, {})
    assert_shape({"t": "2024-03-04T12:00:00Z", "h": []}, {"t": "2024-03-04T12:00:00.000Z"})


def _dump(data: bytes) -> Any:
    return msgspec.json.decode(data)


def _settled(encode: Any, decode: Any, wire: bytes) -> None:
    """One decode settles a document: writing it again and reading it gives the same bytes."""
    once = encode(decode(wire))
    assert encode(decode(once)) == once


# -------------------------------------------------------------------------- the tests


def test_seed_002_was_read(examples: dict[str, list[Any]]) -> None:
    counts = {kind: len(docs) for kind, docs in examples.items()}
    assert counts == {
        "request": 2,
        "response": 2,
        "error": 1,
        "message": 1,
        "part": 4,
        "task": 1,
        "status": 1,
        "artifact": 1,
    }


def test_request_envelopes(examples: dict[str, list[Any]]) -> None:
    elided, flow = examples["request"]
    for envelope in (elided, flow):
        assert envelope["jsonrpc"] == "2.0"
        assert envelope["method"] in codec.methods
    # The first only names the method; its params are a comment, i.e. not a request.
    assert "params" not in elided
    with pytest.raises(errors.InvalidParams, match="`message`"):
        codec.decode_call(elided["method"], None)


def test_flow_request(examples: dict[str, list[Any]]) -> None:
    params = examples["request"][1]["params"]
    raw = msgspec.json.encode(params)
    call = codec.decode_call("tasks/send", raw)
    assert isinstance(call, SendMessage)
    assert call.config.blocking is True and call.streaming is False
    m = call.message
    assert (m.role, m.message_id, m.context_id, m.task_id) == (
        Role.USER,
        "msg_abc",
        "session_456",
        None,
    )
    assert m.parts == [
        TextPart(text="Validate this order"),
        DataPart(data={"order_id": "ORD-123"}),
    ]
    # written back exactly as the seed shows it
    method, out = codec.encode_call(call)
    assert method == "tasks/send"
    assert _dump(out) == params
    streaming = codec.decode_call("tasks/send-streaming", raw)
    assert isinstance(streaming, SendMessage) and streaming.streaming
    assert streaming.message == m
    assert codec.encode_call(streaming)[0] == "tasks/send-streaming"


def test_flow_response(examples: dict[str, list[Any]]) -> None:
    result = next(r["result"] for r in examples["response"] if "result" in r)
    raw = msgspec.json.encode(result)
    task = codec.decode_result(SEND, raw)
    assert isinstance(task, Task)
    assert (task.id, task.context_id) == ("task_abc", "session_456")
    assert task.status.state is TaskState.COMPLETED
    assert task.status.timestamp == "2024-03-04T12:00:00.000Z"
    assert task.status.message is not None
    assert task.status.message.role is Role.AGENT
    assert task.status.message.parts == [
        TextPart(text="Order validated successfully"),
        DataPart(data={"valid": True, "order_id": "ORD-123"}),
    ]
    assert task.metadata == {"agent_name": "OrderValidator"}
    assert task.history == [] and task.artifacts == []
    assert_shape(result, _dump(codec.encode_result(SEND, task)))
    canceled = codec.decode_result(CancelTask(id="task_abc"), raw)
    assert isinstance(canceled, Task) and canceled.status.message is not None
    # the same but for the status message's id, which each read makes up anew
    canceled.status.message.message_id = task.status.message.message_id
    assert canceled == task
    _settled(lambda t: codec.encode_result(SEND, t), lambda b: codec.decode_result(SEND, b), raw)


def test_elided_response(examples: dict[str, list[Any]]) -> None:
    (elided,) = [r for r in examples["response"] if "result" not in r]
    assert elided == {"jsonrpc": "2.0", "id": "req_abc123"}


def test_error_example(examples: dict[str, list[Any]]) -> None:
    (envelope,) = examples["error"]
    error = envelope["error"]
    decoded = codec.decode_error(error)
    assert type(decoded) is errors.InternalError
    assert decoded.message == "Internal error"
    assert decoded.data == {"details": "Additional error context"}
    assert _dump(codec.encode_error(decoded)) == error


def test_message_object(examples: dict[str, list[Any]]) -> None:
    (doc,) = examples["message"]
    call = codec.decode_call("tasks/send", msgspec.json.encode({"message": doc}))
    assert isinstance(call, SendMessage)
    m = call.message
    assert m.message_id == "msg_xyz789"
    assert (m.task_id, m.context_id) == ("task_abc123", "session_456")
    assert m.metadata == {"source": "gateway", "timestamp": "2024-03-04T12:00:00Z"}
    assert m.parts == [
        TextPart(text="Process this order"),
        DataPart(data={"order_id": "ORD-123", "items": [{"sku": "ITEM-1", "quantity": 2}]}),
        FilePart(
            uri="artifact://session_123/order.pdf",
            filename="order.pdf",
            media_type="application/pdf",
        ),
    ]
    # A message answer is written exactly as the seed writes a message.
    assert _dump(codec.encode_result(SEND, m)) == doc
    assert codec.decode_result(SEND, msgspec.json.encode(doc)) == m
    assert codec.decode_stream_item(msgspec.json.encode(doc)) == m


def test_parts(examples: dict[str, list[Any]]) -> None:
    text, data, by_uri, inline = examples["part"]
    expected = [
        TextPart(text="Please validate this order", metadata={"language": "en"}),
        DataPart(
            data={
                "order_id": "ORD-123",
                "customer_id": "CUST-456",
                "items": [{"sku": "ITEM-1", "quantity": 2, "price": 50.00}],
            },
            metadata={"schema": "order_v1", "validated": True},
        ),
        FilePart(
            uri="artifact://session_123/report.pdf",
            filename="report.pdf",
            media_type="application/pdf",
            metadata={"size_bytes": 102400, "version": 3},
        ),
        FilePart(raw=CONTENT, filename="image.png", media_type="image/png"),
    ]
    for doc, part in zip((text, data, by_uri, inline), expected, strict=True):
        message = {"role": "agent", "parts": [doc], "message_id": "m"}
        call = codec.decode_call("tasks/send", msgspec.json.encode({"message": message}))
        assert isinstance(call, SendMessage)
        assert call.message.parts == [part]
        written = _dump(codec.encode_result(SEND, call.message))
        assert written["parts"] == [doc]


def test_task_object(examples: dict[str, list[Any]]) -> None:
    (doc,) = examples["task"]
    raw = msgspec.json.encode(doc)
    task = codec.decode_result(SEND, raw)
    assert isinstance(task, Task)
    item = codec.decode_stream_item(raw)  # the same object as a stream's snapshot
    assert isinstance(item, Task) and item.artifacts == task.artifacts
    assert (task.id, task.context_id) == ("task_abc123", "session_456")
    assert task.status.state is TaskState.WORKING
    assert task.status.message is not None
    assert task.status.message.parts == [TextPart(text="Processing your request...")]
    assert task.status.message.message_id  # seed 002 leaves it out: made up
    assert task.history == []
    # The seed's artifact shape (no parts) is one file part named after the artifact.
    (artifact,) = task.artifacts
    assert artifact.artifact_id == "artifact_xyz"
    assert artifact.name == "result.json"
    assert artifact.parts == [
        FilePart(
            uri="artifact://session_456/result.json",
            media_type="application/json",
            filename="result.json",
        )
    ]
    assert task.metadata == {"agent_name": "OrderProcessor", "workflow_name": "OrderWorkflow"}
    written = _dump(codec.encode_result(SEND, task))
    assert_shape(doc, written)
    assert written["artifacts"][0]["parts"] == [
        {
            "file": {
                "uri": "artifact://session_456/result.json",
                "name": "result.json",
                "mime_type": "application/json",
            }
        }
    ]
    _settled(lambda t: codec.encode_result(SEND, t), lambda b: codec.decode_result(SEND, b), raw)


def test_status_object(examples: dict[str, list[Any]]) -> None:
    (doc,) = examples["status"]
    event = {"kind": "status-update", "task_id": "t", "context_id": "c", "status": doc}
    update = codec.decode_stream_item(msgspec.json.encode(event))
    assert isinstance(update, StatusUpdate)
    assert update.status.state is TaskState.WORKING
    assert update.status.message is None  # the seed's ``message`` is only a comment
    assert update.status.timestamp == "2024-03-04T12:00:00.000Z"
    written = _dump(codec.encode_stream_item(update))
    assert_shape(doc, written["status"])
    assert written == {
        "kind": "status-update",
        "task_id": "t",
        "context_id": "c",
        "status": written["status"],
        "final": False,
    }


def test_artifact_object(examples: dict[str, list[Any]]) -> None:
    (doc,) = examples["artifact"]
    event = {"kind": "artifact-update", "task_id": "t", "context_id": "c", "artifact": doc}
    update = codec.decode_stream_item(msgspec.json.encode(event))
    assert isinstance(update, ArtifactUpdate)
    a = update.artifact
    assert a.artifact_id == "artifact_xyz789"
    assert a.name == "validation_result.json"
    assert a.metadata == {"schema": {"type": "object"}, "version": 2, "source": "agent"}
    # uri and inline data together: one file given both ways
    assert a.parts == [
        FilePart(
            raw=CONTENT,
            uri="artifact://session_456/validation_result.json",
            media_type="application/json",
            filename="validation_result.json",
        )
    ]
    written = _dump(codec.encode_stream_item(update))
    assert_shape(doc, written["artifact"])
    _settled(codec.encode_stream_item, codec.decode_stream_item, msgspec.json.encode(event))
