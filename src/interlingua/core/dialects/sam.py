"""The Solace Agent Mesh dialect (seed 002; DIALECTS.md §a.5, §i.5).

v0.1 method names (``tasks/send``, ``tasks/cancel``) plus ``tasks/send-streaming``,
carrying v0.2 params and objects under snake_case names with discriminator-less
parts; see ``_sam_wire`` for the object shapes. ``tasks/send`` and
``tasks/cancel`` are also v0.1 methods: which codec reads a payload is decided
by its shape elsewhere; this module only decodes and encodes.

Reading: ``{"message": Message, "configuration"?, "metadata"?}`` for both sends
(a bare Message as params is taken too, DIALECTS.md §i.3); a message without
``message_id`` gets one; ``message.task_id`` continues a task. ``tasks/cancel``
takes ``{"id"}`` (or ``task_id`` / ``taskId``). camelCase spellings are accepted
everywhere. Blocking unless ``configuration.blocking`` is false.

Writing: Task ``{kind: "task", id, context_id, status, history?, artifacts?,
metadata?}``; status ``{state, message?, timestamp}``; stream events
``{kind: "status-update", task_id, context_id, status, final, metadata?}`` and
``{kind: "artifact-update", task_id, context_id, artifact, append?, last_chunk?,
metadata?}``; messages with ``kind: "message"``.

What SAM cannot say, and what is sent instead: seed 002 lists only the states
submitted/working/completed/failed/canceled — the others go out under their
lowercase v0.2 names (``input-required``, ``auth-required``, ``rejected``,
``unknown``); a status without a timestamp (which SAM calls required) goes out
without one, since the core has no clock to invent it; media type and filename
of text/data parts, artifact ``index``, ``tenant`` and a v0.1 client-chosen task
id are dropped. Errors are ``{code, message, data?}``; seed 002 lists only the
JSON-RPC standard codes, so A2A-specific errors carry their v0.2 codes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import msgspec

from ..calls import Call, CancelTask, Result, SendConfig, SendMessage
from ..errors import (
    A2AError,
    InvalidAgentResponse,
    InvalidParams,
    MethodNotFound,
    UnsupportedOperation,
)
from ..lifecycle import RETURN_STATES
from ..model import ArtifactUpdate, Message, StatusUpdate, Task
from ._common import V03_ERROR_CLASSES, decode_error_member, decode_params, encode_error_member
from ._common import at_root as _at
from ._sam_wire import (
    SArtifactEvent,
    SCancelParams,
    SMessage,
    SSendConfig,
    SSendParams,
    SStatusEvent,
    SStreamItem,
    STask,
    artifact_event_in,
    artifact_event_out,
    message_in,
    message_out,
    pick,
    push_config_in,
    push_config_out,
    status_event_in,
    status_event_out,
    task_in,
    task_out,
)
from ._v03_wire import FieldError
from .base import Codec, StreamItem

__all__ = ["SAMCodec"]

T = TypeVar("T")

DIALECT = "sam"
# SAM documents no A2A-specific codes; they are sent as v0.2/v0.3 would send them.
_CODES_OF = "0.3"

SEND = "tasks/send"
STREAM = "tasks/send-streaming"
CANCEL = "tasks/cancel"

_encoder = msgspec.json.Encoder()
_any = msgspec.json.Decoder()

_send_params = msgspec.json.Decoder(SSendParams)
_cancel_params = msgspec.json.Decoder(SCancelParams)
_stream_item: msgspec.json.Decoder[SStreamItem] = msgspec.json.Decoder(SStreamItem)

_ERRORS = V03_ERROR_CLASSES


def _unsupported(what: object) -> UnsupportedOperation:
    name = type(what).__name__
    return UnsupportedOperation(f"{name} is not part of the Solace Agent Mesh dialect")


# ------------------------------------------------------------------ lenient reading


def _send_fallback(method: str) -> Callable[[Any], SSendParams]:
    def fallback(doc: Any) -> SSendParams:
        if not isinstance(doc, dict):
            raise InvalidParams(f"Invalid params for {method}: params must be a JSON object")
        if "message" not in doc and "role" in doc and "parts" in doc:
            doc = {"message": doc}  # a bare Message as params (DIALECTS.md §i.3)
        try:
            return msgspec.convert(doc, SSendParams)
        except msgspec.ValidationError as exc:
            raise InvalidParams(f"Invalid params for {method}: {_at(str(exc), 'params')}") from None

    return fallback


_SEND_FALLBACKS = {SEND: _send_fallback(SEND), STREAM: _send_fallback(STREAM)}


def _infer_kind(doc: Any) -> None:
    """Name the union member of a result that came without ``kind``, by its fields."""
    if isinstance(doc, dict) and "kind" not in doc:
        if "artifact" in doc:
            doc["kind"] = "artifact-update"
        elif "status" in doc:
            event = "task_id" in doc or "taskId" in doc or "final" in doc
            doc["kind"] = "status-update" if event else "task"
        elif "role" in doc or "parts" in doc:
            doc["kind"] = "message"


def _read_item(data: bytes) -> SStreamItem:
    """A peer's result as one of the four shapes; InvalidAgentResponse if none fits."""
    try:
        return _stream_item.decode(data)
    except msgspec.ValidationError as exc:
        first = exc
    except msgspec.DecodeError as exc:
        raise InvalidAgentResponse(f"Invalid agent response: result is not JSON: {exc}") from None
    doc = _any.decode(data)
    _infer_kind(doc)
    try:
        item: SStreamItem = msgspec.convert(doc, SStreamItem)
    except msgspec.ValidationError:
        raise InvalidAgentResponse(f"Invalid agent response: {_at(str(first), 'result')}") from None
    return item


def _item_in(w: SStreamItem) -> StreamItem:
    if type(w) is STask:
        return task_in(w)
    if type(w) is SMessage:
        return message_in(w)
    if type(w) is SStatusEvent:
        return status_event_in(w)
    assert type(w) is SArtifactEvent
    return artifact_event_in(w)


# -------------------------------------------------------------------------- the codec


class SAMCodec(Codec):
    """JSON-RPC as Solace Agent Mesh writes it (seed 002)."""

    name: ClassVar[str] = DIALECT
    methods: ClassVar[frozenset[str]] = frozenset({SEND, STREAM, CANCEL})
    streaming_methods: ClassVar[frozenset[str]] = frozenset({STREAM})

    # ---------------------------------------------------------------- server side

    def decode_call(self, method: str, params: bytes | None) -> Call:
        try:
            if method == SEND or method == STREAM:
                return _decode_send(method, params)
            if method == CANCEL:
                return _decode_cancel(params)
        except RecursionError:
            raise InvalidParams(f"Invalid params for {method}: nested too deeply") from None
        raise MethodNotFound(f"Method not found: {method}")

    def encode_result(self, call: Call, result: Result) -> bytes:
        if isinstance(result, Task):
            return _encoder.encode(task_out(result))
        if isinstance(result, Message):
            return _encoder.encode(message_out(result))
        if result is None:
            return b"null"
        raise _unsupported(result)

    def encode_error(self, error: A2AError) -> bytes:
        return encode_error_member(error.code_for(_CODES_OF), error.message, error.data)

    def encode_stream_item(self, item: StreamItem) -> bytes:
        if isinstance(item, StatusUpdate):
            # The last status event of a stream says so (DIALECTS.md §i.17).
            return _encoder.encode(status_event_out(item, item.status.state in RETURN_STATES))
        if isinstance(item, ArtifactUpdate):
            return _encoder.encode(artifact_event_out(item))
        if isinstance(item, Task):
            return _encoder.encode(task_out(item))
        return _encoder.encode(message_out(item))

    # ---------------------------------------------------------------- client side

    def encode_call(self, call: Call) -> tuple[str, bytes]:
        if isinstance(call, SendMessage):
            return (STREAM if call.streaming else SEND), _encoder.encode(_send_params_out(call))
        if isinstance(call, CancelTask):
            return CANCEL, _encoder.encode(SCancelParams(id=call.id, metadata=call.metadata))
        raise _unsupported(call)

    def decode_result(self, call: Call, result: bytes) -> Result:
        if not isinstance(call, (SendMessage, CancelTask)):
            raise _unsupported(call)
        try:
            w = _read_item(result)
            if type(w) is SStatusEvent:
                # Seed 002 lists a status event as a possible answer: it says all a Task needs.
                e = status_event_in(w)
                return Task(
                    id=e.task_id, context_id=e.context_id, status=e.status, metadata=e.metadata
                )
            if type(w) is SArtifactEvent or (type(w) is SMessage and isinstance(call, CancelTask)):
                kind = "an artifact update" if type(w) is SArtifactEvent else "a message"
                raise InvalidAgentResponse(
                    f"Invalid agent response: {kind} does not answer {type(call).__name__}"
                )
            item = _item_in(w)
            assert isinstance(item, (Task, Message))
            return item
        except FieldError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent response: {exc.describe('result')}"
            ) from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def decode_stream_item(self, result: bytes) -> StreamItem:
        try:
            return _item_in(_read_item(result))
        except FieldError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent response: {exc.describe('result')}"
            ) from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def decode_error(self, error: Any) -> A2AError:
        return decode_error_member(error, _ERRORS)


# ------------------------------------------------------------------------- requests


def _decode_send(method: str, params: bytes | None) -> SendMessage:
    w = decode_params(_send_params, params, method=method, fallback=_SEND_FALLBACKS[method])
    try:
        message = message_in(w.message)
    except FieldError as exc:
        raise InvalidParams(
            f"Invalid params for {method}: {exc.describe('params.message')}"
        ) from None
    c = w.configuration
    if c is None:
        config = SendConfig()
    else:
        push = pick(c.push_notification_config, c.push_notification_config_c)
        config = SendConfig(
            accepted_output_modes=pick(c.accepted_output_modes, c.accepted_output_modes_c),
            history_length=pick(c.history_length, c.history_length_c),
            # Absent means blocking (DIALECTS.md §i.31).
            blocking=True if c.blocking is None else c.blocking,
            push_config=push_config_in(push) if push is not None else None,
        )
    return SendMessage(
        message=message, config=config, metadata=w.metadata, streaming=method == STREAM
    )


def _decode_cancel(params: bytes | None) -> CancelTask:
    w = decode_params(_cancel_params, params, method=CANCEL)
    task_id = pick(w.id, w.task_id, w.task_id_c)
    if task_id is None:
        raise InvalidParams(f"Invalid params for {CANCEL}: `params.id` is required")
    return CancelTask(id=task_id, metadata=w.metadata)


_DEFAULT_CONFIG = SendConfig()


def _send_params_out(call: SendMessage) -> SSendParams:
    c = call.config
    config = None
    if c != _DEFAULT_CONFIG:
        config = SSendConfig(
            accepted_output_modes=c.accepted_output_modes,
            history_length=c.history_length,
            blocking=c.blocking,
            push_notification_config=push_config_out(c.push_config) if c.push_config else None,
        )
    return SSendParams(
        message=message_out(call.message), configuration=config, metadata=call.metadata
    )
