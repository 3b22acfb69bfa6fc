"""The tutorial dialect (seed 003; DIALECTS.md §a.5, §i.4).

A tutorial page's mix of generations: v0.2's ``message/send`` whose message has
v0.1-style ``"type"`` parts and no ``messageId``, a reply that names the id
``message_id``, and ``task/subscribe`` (a code sample's name, in no spec) to
re-attach to a task. ``message/send`` is also a v0.3 method; which codec reads
a payload is decided by its shape elsewhere.

Reading: parts tagged ``type`` (or ``kind``), a message id under ``messageId``
or ``message_id`` — generated when neither is given — and otherwise what the
v0.2/v0.3 codec reads (configuration, metadata, a bare Message as params).
``task/subscribe`` takes ``{"id", "historyLength"?}``.

Writing: the v0.2/v0.3 objects, with two echoes (§i.4): every part carries
``type`` next to ``kind`` and every message ``message_id`` next to
``messageId``. Seed 003's client reads ``type`` and ``message_id``, a v0.2
client reads ``kind`` and ``messageId``, and the v0.3.0 JSON schema allows the
extra members, so all three accept the same bytes. Errors are v0.3's.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, TypeAlias

import msgspec
from msgspec import Meta, Struct

from ..calls import Call, Result, SendConfig, SendMessage, SubscribeToTask
from ..errors import (
    A2AError,
    InvalidAgentResponse,
    InvalidParams,
    MethodNotFound,
    UnsupportedOperation,
)
from ..lifecycle import RETURN_STATES
from ..model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    Part,
    Role,
    StatusUpdate,
    Task,
    TaskStatus,
    TextPart,
)
from ..parts import new_id
from ._common import at_root as _at
from ._common import b64encode, decode_params
from ._v03_wire import (
    DATA_COMPAT_KEY,
    FieldError,
    WArtifact,
    WArtifactEvent,
    WDataPart,
    WFile,
    WFilePart,
    WMessage,
    WPart,
    WSendConfig,
    WSendParams,
    WStatus,
    WStatusEvent,
    WTask,
    WTaskQuery,
    WTextPart,
    artifact_event_in,
    message_in,
    push_config_in,
    push_config_out,
    status_event_in,
    task_in,
)
from .base import Codec, StreamItem
from .v0_3 import V03Codec

__all__ = ["TutorialCodec"]

DIALECT = "tutorial"
SEND = "message/send"
SUBSCRIBE = "task/subscribe"
#: the tutorial's message without a messageId, sent by a v0.3 streaming client
STREAM = "message/stream"

Metadata: TypeAlias = dict[str, Any]

_encoder = msgspec.json.Encoder()
_any = msgspec.json.Decoder()
_v03 = V03Codec()


# ------------------------------------------------------------------ request objects
# What seed 003's client sends: parts tagged ``type``, the id optional. Decoded
# straight from the bytes; anything else goes through the lenient path.


class TTextPart(Struct, tag="text", tag_field="type"):
    text: str
    metadata: Metadata | None = None


class TFilePart(Struct, tag="file", tag_field="type"):
    file: WFile
    metadata: Metadata | None = None


class TDataPart(Struct, tag="data", tag_field="type"):
    data: dict[str, Any]
    metadata: Metadata | None = None


TPart: TypeAlias = TTextPart | TFilePart | TDataPart


class TMessage(Struct, tag="message", tag_field="kind", rename="camel", kw_only=True):
    role: Role
    parts: Annotated[list[TPart], Meta(min_length=1)]
    message_id: str | None = None
    message_id_snake: str | None = msgspec.field(default=None, name="message_id")
    context_id: str | None = None
    task_id: str | None = None
    reference_task_ids: list[str] | None = None
    extensions: list[str] | None = None
    metadata: Metadata | None = None


class TSendParams(Struct):
    message: TMessage
    configuration: WSendConfig | None = None
    metadata: Metadata | None = None


_send_params = msgspec.json.Decoder(TSendParams)
_task_query = msgspec.json.Decoder(WTaskQuery)


def _part_to_v03(p: TPart) -> WPart:
    if type(p) is TTextPart:
        return WTextPart(text=p.text, metadata=p.metadata)
    if type(p) is TDataPart:
        return WDataPart(data=p.data, metadata=p.metadata)
    assert type(p) is TFilePart
    return WFilePart(file=p.file, metadata=p.metadata)


def _message_to_v03(m: TMessage) -> WMessage:
    return WMessage(
        message_id=m.message_id or m.message_id_snake or new_id(),
        role=m.role,
        parts=[_part_to_v03(p) for p in m.parts],
        context_id=m.context_id,
        task_id=m.task_id,
        reference_task_ids=m.reference_task_ids,
        extensions=m.extensions,
        metadata=m.metadata,
    )


# ------------------------------------------------------------- documents, leniently


def _tag_parts(parts: Any) -> None:
    """Give ``type``-tagged parts the ``kind`` v0.3 needs."""
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, dict) and "kind" not in part and isinstance(part.get("type"), str):
                part["kind"] = part["type"]


def _as_v03_message(doc: dict[str, Any]) -> None:
    """Give a message document what v0.3 requires: ``kind`` on parts and a ``messageId``."""
    _tag_parts(doc.get("parts"))
    if doc.get("messageId") in (None, ""):
        snake = doc.get("message_id")
        doc["messageId"] = snake if isinstance(snake, str) and snake else new_id()


_NESTED = ("status", "message", "history", "artifacts", "artifact")


def _as_v03(doc: Any) -> None:
    """Walk a result where messages and artifacts sit and make them v0.3 documents."""
    if isinstance(doc, list):
        for item in doc:
            _as_v03(item)
    elif isinstance(doc, dict):
        if "role" in doc:
            _as_v03_message(doc)
        else:
            _tag_parts(doc.get("parts"))
        for key in _NESTED:
            if key in doc:
                _as_v03(doc[key])


def _infer_kind(doc: Any) -> None:
    """Name the union member of a result that came without ``kind``, by its fields."""
    if isinstance(doc, dict) and "kind" not in doc:
        if "artifact" in doc:
            doc["kind"] = "artifact-update"
        elif "status" in doc:
            doc["kind"] = "status-update" if "taskId" in doc else "task"
        elif "role" in doc or "parts" in doc:
            doc["kind"] = "message"


def _send_fallback(doc: Any) -> WSendParams:
    if not isinstance(doc, dict):
        raise InvalidParams(f"Invalid params for {SEND}: params must be a JSON object")
    if "message" not in doc and "role" in doc and "parts" in doc:
        doc = {"message": doc}  # a bare Message as params (DIALECTS.md §i.3)
    message = doc.get("message")
    if isinstance(message, dict):
        _as_v03_message(message)
    try:
        return msgspec.convert(doc, WSendParams)
    except msgspec.ValidationError as exc:
        raise InvalidParams(f"Invalid params for {SEND}: {_at(str(exc), 'params')}") from None


_SendShape: TypeAlias = TSendParams | WSendParams


def _read_send(params: bytes | None, method: str = SEND) -> _SendShape:
    # decode_params types its fallback's result as the decoder's; both shapes are handled.
    fallback: Any = _send_fallback
    shape: _SendShape = decode_params(_send_params, params, method=method, fallback=fallback)
    return shape


_WSendResult: TypeAlias = WTask | WMessage
_WStreamItem: TypeAlias = WTask | WMessage | WStatusEvent | WArtifactEvent
_send_result: msgspec.json.Decoder[_WSendResult] = msgspec.json.Decoder(_WSendResult)
_stream_item: msgspec.json.Decoder[_WStreamItem] = msgspec.json.Decoder(_WStreamItem)


def _read_result(decoder: msgspec.json.Decoder[Any], data: bytes) -> Any:
    """A peer's result as v0.3 objects.

    Our own echoing writers' bytes decode at once; seed 003's (``type`` parts,
    ``message_id``, maybe no ``kind``) are made v0.3 documents first.
    """
    try:
        return decoder.decode(data)
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError as exc:
        raise InvalidAgentResponse(f"Invalid agent response: result is not JSON: {exc}") from None
    doc = _any.decode(data)
    _infer_kind(doc)
    _as_v03(doc)
    try:
        return msgspec.convert(doc, decoder.type)
    except msgspec.ValidationError as exc:
        # The tutorial's own spelling is what the reader expects: report its fault.
        raise InvalidAgentResponse(f"Invalid agent response: {_at(str(exc), 'result')}") from None


# ----------------------------------------------------------------- answer objects
# The v0.3 objects with the echoes: subclasses add the members, so every
# v0.3 Struct that holds a part or a message holds these unchanged.


class _TextOut(WTextPart, kw_only=True):
    type: str


class _FileOut(WFilePart, kw_only=True):
    type: str


class _DataOut(WDataPart, kw_only=True):
    type: str


class _MessageOut(WMessage, kw_only=True):
    message_id_echo: str = msgspec.field(name="message_id")


def _part_out(p: Part) -> WPart:
    # media_type / filename of text and data parts have no v0.3 spelling: dropped.
    if type(p) is TextPart:
        return _TextOut(text=p.text, metadata=p.metadata, type="text")
    if type(p) is DataPart:
        if isinstance(p.data, dict):
            return _DataOut(data=p.data, metadata=p.metadata, type="data")
        # Non-object data as v0.3 sends it (DIALECTS.md §i.27).
        meta = dict(p.metadata) if p.metadata else {}
        meta[DATA_COMPAT_KEY] = True
        return _DataOut(data={"value": p.data}, metadata=meta, type="data")
    assert type(p) is FilePart
    file = WFile(
        data=b64encode(p.raw) if p.raw is not None else None,
        uri=p.uri,
        mime_type=p.media_type,
        name=p.filename,
    )
    return _FileOut(file=file, metadata=p.metadata, type="file")


def _message_out(m: Message) -> WMessage:
    return _MessageOut(
        message_id=m.message_id,
        message_id_echo=m.message_id,
        role=m.role,
        parts=[_part_out(p) for p in m.parts],
        context_id=m.context_id,
        task_id=m.task_id,
        reference_task_ids=m.reference_task_ids,
        extensions=m.extensions,
        metadata=m.metadata,
    )


def _artifact_out(a: Artifact) -> WArtifact:
    return WArtifact(
        artifact_id=a.artifact_id,
        parts=[_part_out(p) for p in a.parts],
        name=a.name,
        description=a.description,
        metadata=a.metadata,
        extensions=a.extensions,
    )


def _status_out(s: TaskStatus) -> WStatus:
    return WStatus(
        state=s.state,
        message=_message_out(s.message) if s.message is not None else None,
        timestamp=s.timestamp,
    )


def _task_out(t: Task) -> WTask:
    return WTask(
        id=t.id,
        context_id=t.context_id,
        status=_status_out(t.status),
        artifacts=[_artifact_out(a) for a in t.artifacts] if t.artifacts else None,
        history=[_message_out(m) for m in t.history] if t.history else None,
        metadata=t.metadata,
    )


# -------------------------------------------------------------------------- the codec


class TutorialCodec(Codec):
    """JSON-RPC as seed 003's tutorial writes it."""

    name: ClassVar[str] = DIALECT
    methods: ClassVar[frozenset[str]] = frozenset({SEND, STREAM, SUBSCRIBE})
    streaming_methods: ClassVar[frozenset[str]] = frozenset({STREAM, SUBSCRIBE})

    # ---------------------------------------------------------------- server side

    def decode_call(self, method: str, params: bytes | None) -> Call:
        try:
            if method == SEND or method == STREAM:
                return _decode_send(params, method)
            if method == SUBSCRIBE:
                q = decode_params(_task_query, params, method=method)
                return SubscribeToTask(id=q.id, history_length=q.history_length)
        except RecursionError:
            raise InvalidParams(f"Invalid params for {method}: nested too deeply") from None
        raise MethodNotFound(f"Method not found: {method}")

    def encode_result(self, call: Call, result: Result) -> bytes:
        if isinstance(result, Task):
            return _encoder.encode(_task_out(result))
        if isinstance(result, Message):
            return _encoder.encode(_message_out(result))
        # Nothing else holds parts or messages: v0.3's own shapes.
        return _v03.encode_result(call, result)

    def encode_error(self, error: A2AError) -> bytes:
        return _v03.encode_error(error)

    def encode_stream_item(self, item: StreamItem) -> bytes:
        if isinstance(item, StatusUpdate):
            # The last status event of a stream says so (DIALECTS.md §i.17).
            return _encoder.encode(
                WStatusEvent(
                    task_id=item.task_id,
                    context_id=item.context_id,
                    status=_status_out(item.status),
                    final=item.status.state in RETURN_STATES,
                    metadata=item.metadata,
                )
            )
        if isinstance(item, ArtifactUpdate):
            return _encoder.encode(
                WArtifactEvent(
                    task_id=item.task_id,
                    context_id=item.context_id,
                    artifact=_artifact_out(item.artifact),
                    append=True if item.append else None,
                    last_chunk=True if item.last_chunk else None,
                    metadata=item.metadata,
                )
            )
        if isinstance(item, Task):
            return _encoder.encode(_task_out(item))
        return _encoder.encode(_message_out(item))

    # ---------------------------------------------------------------- client side

    def encode_call(self, call: Call) -> tuple[str, bytes]:
        if isinstance(call, SendMessage):
            return (STREAM if call.streaming else SEND), _encoder.encode(_send_params_out(call))
        if isinstance(call, SubscribeToTask):
            return SUBSCRIBE, _encoder.encode(
                WTaskQuery(id=call.id, history_length=call.history_length)
            )
        raise UnsupportedOperation(f"{type(call).__name__} is not part of the tutorial dialect")

    def decode_result(self, call: Call, result: bytes) -> Result:
        if not isinstance(call, (SendMessage, SubscribeToTask)):
            raise UnsupportedOperation(f"{type(call).__name__} is not part of the tutorial dialect")
        try:
            w = _read_result(_send_result, result)
            return task_in(w) if type(w) is WTask else message_in(w)
        except FieldError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent response: {exc.describe('result')}"
            ) from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def decode_stream_item(self, result: bytes) -> StreamItem:
        try:
            w = _read_result(_stream_item, result)
            if type(w) is WStatusEvent:
                return status_event_in(w)
            if type(w) is WArtifactEvent:
                return artifact_event_in(w)
            if type(w) is WTask:
                return task_in(w)
            assert type(w) is WMessage
            return message_in(w)
        except FieldError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent response: {exc.describe('result')}"
            ) from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def decode_error(self, error: Any) -> A2AError:
        return _v03.decode_error(error)


# ------------------------------------------------------------------------- requests


def _decode_send(params: bytes | None, method: str = SEND) -> SendMessage:
    w = _read_send(params, method)
    try:
        if type(w) is TSendParams:
            message = message_in(_message_to_v03(w.message))
        else:
            assert type(w) is WSendParams
            message = message_in(w.message)
    except FieldError as exc:
        raise InvalidParams(
            f"Invalid params for {method}: {exc.describe('params.message')}"
        ) from None
    c = w.configuration
    if c is None:
        config = SendConfig()
    else:
        push = c.push_notification_config
        config = SendConfig(
            accepted_output_modes=c.accepted_output_modes,
            history_length=c.history_length,
            # Absent means blocking (DIALECTS.md §i.31).
            blocking=True if c.blocking is None else c.blocking,
            push_config=push_config_in(push, None) if push is not None else None,
        )
    return SendMessage(message=message, config=config, metadata=w.metadata,
                       streaming=method == STREAM)


_DEFAULT_CONFIG = SendConfig()


def _send_params_out(call: SendMessage) -> WSendParams:
    c = call.config
    config = None
    if c != _DEFAULT_CONFIG:
        config = WSendConfig(
            accepted_output_modes=c.accepted_output_modes,
            history_length=c.history_length,
            push_notification_config=push_config_out(c.push_config) if c.push_config else None,
            blocking=c.blocking,
        )
    return WSendParams(
        message=_message_out(call.message), configuration=config, metadata=call.metadata
    )
