"""Wire objects of the v0.1 JSON-RPC dialect and their mapping to the canonical model.

The Structs spell every name as the v0.1.0 JSON schema and spec do (camelCase,
parts tagged ``type``, ``sessionId``, artifact ``index``/``append``/``lastChunk``)
so params decode straight into them; the ``*_in`` / ``*_out`` functions move
between them and the canonical model without passing through dicts.

What v0.1 has no place for is filled in on the way in and dropped on the way
out: messages get a fresh ``message_id`` (v0.1 messages have none), artifacts
get ``artifact_id = "artifact-{index}"``, events and tasks without a session get
``context_id = ""``.

Conversions that can fail raise ``WireError`` carrying the path of the bad
field relative to the object converted; callers prepend their own segment as
the error unwinds, so building paths costs nothing on success.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, TypeAlias, TypeVar

import msgspec
from msgspec import Meta, Struct

from ..errors import InvalidParams
from ..model import (
    Artifact,
    ArtifactUpdate,
    AuthInfo,
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
from ..parts import new_id
from ._common import b64decode, b64encode, format_timestamp, normalize_timestamp

# Part metadata flag marking a non-object DataPart value wrapped as {"value": X}
# (the schema types DataPart.data as an object; DIALECTS.md §i.27 spelling).
DATA_COMPAT_KEY = "data_part_compat"

NonEmptyStr = Annotated[str, Meta(min_length=1)]
NonNegativeInt = Annotated[int, Meta(ge=0, le=2**31 - 1)]
Metadata: TypeAlias = dict[str, Any]
T = TypeVar("T")
U = TypeVar("U")


class WireError(Exception):
    """A value that decoded but breaks a rule of the dialect, with its field path."""

    def __init__(self, path: list[str], reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason

    def describe(self, root: str) -> str:
        text = root
        for seg in self.path:
            text += seg if seg.startswith("[") else "." + seg
        return f"{text} {self.reason}"


def _at(name: str, conv: Callable[[T], U], value: T) -> U:
    try:
        return conv(value)
    except WireError as exc:
        exc.path.insert(0, name)
        raise


def _each(name: str, items: list[T], conv: Callable[[T], U]) -> list[U]:
    out = []
    for i, item in enumerate(items):
        try:
            out.append(conv(item))
        except WireError as exc:
            exc.path[:0] = [name, f"[{i}]"]
            raise
    return out


# ----------------------------------------------------------------------------- parts


class WTextPart(Struct, tag="text", tag_field="type", omit_defaults=True):
    text: str
    metadata: Metadata | None = None


class WFile(Struct, rename="camel", omit_defaults=True):
    """``FileContent``: at most one of bytes/uri; both may be absent (a bare reference)."""

    name: str | None = None
    mime_type: str | None = None
    data: str | None = msgspec.field(default=None, name="bytes")
    uri: str | None = None


class WFilePart(Struct, tag="file", tag_field="type", omit_defaults=True):
    file: WFile
    metadata: Metadata | None = None


class WDataPart(Struct, tag="data", tag_field="type", omit_defaults=True):
    # The schema says object; the spec's prose (and its §9.6 example) allows arrays.
    data: dict[str, Any] | list[Any]
    metadata: Metadata | None = None


WPart: TypeAlias = WTextPart | WFilePart | WDataPart


# -------------------------------------------------------------------- task objects


class WState(enum.Enum):
    """The seven states of v0.1 (no ``rejected``, no ``auth-required``)."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    UNKNOWN = "unknown"


# Canonical states v0.1 lacks are sent as their nearest v0.1 state (DIALECTS.md §i.18).
_STATE_OUT: dict[TaskState, WState] = {
    TaskState.SUBMITTED: WState.SUBMITTED,
    TaskState.WORKING: WState.WORKING,
    TaskState.INPUT_REQUIRED: WState.INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED: WState.INPUT_REQUIRED,
    TaskState.COMPLETED: WState.COMPLETED,
    TaskState.CANCELED: WState.CANCELED,
    TaskState.FAILED: WState.FAILED,
    TaskState.REJECTED: WState.FAILED,
    TaskState.UNKNOWN: WState.UNKNOWN,
}
_STATE_IN: dict[WState, TaskState] = {w: TaskState(w.value) for w in WState}


class WMessage(Struct, omit_defaults=True):
    role: Role
    parts: Annotated[list[WPart], Meta(min_length=1)]
    metadata: Metadata | None = None
    # Not part of v0.1: read when a newer peer sends one (so retries keep their
    # id), never written.
    message_id: str | None = msgspec.field(default=None, name="messageId")


class WArtifact(Struct, rename="camel", omit_defaults=True, kw_only=True):
    name: str | None = None
    description: str | None = None
    parts: list[WPart]
    index: NonNegativeInt | None = None
    append: bool | None = None
    last_chunk: bool | None = None
    metadata: Metadata | None = None


class WStatus(Struct, omit_defaults=True):
    state: WState
    message: WMessage | None = None
    timestamp: str | None = None


class WTask(Struct, rename="camel", omit_defaults=True, kw_only=True):
    id: str
    session_id: str | None = None
    status: WStatus
    artifacts: list[WArtifact] | None = None
    history: list[WMessage] | None = None
    metadata: Metadata | None = None


class WStatusEvent(Struct, omit_defaults=True, kw_only=True):
    id: str
    status: WStatus
    # Optional in the schema (default false); always written, as the spec's examples do.
    final: bool
    metadata: Metadata | None = None


class WArtifactEvent(Struct, omit_defaults=True, kw_only=True):
    id: str
    artifact: WArtifact
    metadata: Metadata | None = None


class WStreamEvent(Struct):
    """Either event, for reading: v0.1 has no discriminator, so members tell them apart."""

    id: str
    status: WStatus | None = None
    artifact: WArtifact | None = None
    final: bool | None = None
    metadata: Metadata | None = None


# --------------------------------------------------------------------------- params


class WAuthInfo(Struct, omit_defaults=True):
    schemes: list[str]
    credentials: str | None = None


class WPushConfig(Struct, omit_defaults=True):
    url: str
    token: str | None = None
    authentication: WAuthInfo | None = None


class WSendParams(Struct, rename="camel", omit_defaults=True, kw_only=True):
    """``TaskSendParams``: the client names the task (``id``) and, optionally, the session."""

    id: NonEmptyStr
    session_id: str | None = None
    message: WMessage
    push_notification: WPushConfig | None = None
    history_length: NonNegativeInt | None = None
    metadata: Metadata | None = None


class WTaskQuery(Struct, rename="camel", omit_defaults=True):
    """``TaskQueryParams`` (``tasks/get``, ``tasks/resubscribe``)."""

    id: NonEmptyStr
    history_length: NonNegativeInt | None = None
    metadata: Metadata | None = None


class WTaskIdParams(Struct, omit_defaults=True):
    id: NonEmptyStr
    metadata: Metadata | None = None


class WTaskPushConfig(Struct, rename="camel"):
    """``TaskPushNotificationConfig``: params of ``set`` and result of ``set``/``get``.

    The config is required but may be ``null`` (spec §6.10: "might clear").
    """

    id: str
    push_notification_config: WPushConfig | None



# ------------------------------------------------------------------------------ card
# Decoding only: every member a sloppy peer may leave out (or send as null, as
# the spec's interfaces allow) has a default.


class WAuthentication(Struct):
    schemes: list[str] = msgspec.field(default_factory=list)
    credentials: str | None = None


class WCapabilities(Struct, rename="camel"):
    streaming: bool | None = None
    push_notifications: bool | None = None
    state_transition_history: bool | None = None


class WProvider(Struct):
    organization: str = ""
    url: str | None = None


class WSkill(Struct, rename="camel"):
    id: str
    name: str
    description: str | None = None
    tags: list[str] | None = None
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None


class WCard(Struct, rename="camel"):
    name: str
    url: str
    description: str | None = None
    version: str | None = None
    provider: WProvider | None = None
    documentation_url: str | None = None
    capabilities: WCapabilities | None = None
    authentication: WAuthentication | None = None
    default_input_modes: list[str] | None = None
    default_output_modes: list[str] | None = None
    skills: list[WSkill] | None = None


# ===================================================================== wire -> canonical


def _part_in(w: WPart) -> Part:
    if type(w) is WTextPart:
        return TextPart(text=w.text, metadata=w.metadata)
    if type(w) is WDataPart:
        meta = w.metadata
        data: Any = w.data
        if meta is not None and DATA_COMPAT_KEY in meta:
            # The flag is ours, never user metadata: it is dropped, and a value
            # wrapped by a peer (or by us) is unwrapped.
            if meta[DATA_COMPAT_KEY] is True and isinstance(data, dict) and "value" in data:
                data = data["value"]
            meta = {k: v for k, v in meta.items() if k != DATA_COMPAT_KEY}
        # Empty metadata reads as none: our own wrapping may add and remove a key.
        return DataPart(data=data, metadata=meta or None)
    assert type(w) is WFilePart
    f = w.file
    if f.data is not None and f.uri is not None:
        raise WireError(["file"], "must not have both `bytes` and `uri`")
    raw: bytes | None = None
    if f.data is not None:
        try:
            raw = b64decode(f.data)
        except InvalidParams:
            raise WireError(["file", "bytes"], "is not valid base64") from None
    return FilePart(
        raw=raw, uri=f.uri, media_type=f.mime_type, filename=f.name, metadata=w.metadata
    )


def parts_in(parts: list[WPart]) -> list[Part]:
    return _each("parts", parts, _part_in)


def message_in(
    w: WMessage, *, task_id: str | None = None, context_id: str | None = None
) -> Message:
    return Message(
        message_id=w.message_id or new_id(),
        role=w.role,
        parts=parts_in(w.parts),
        context_id=context_id,
        task_id=task_id,
        metadata=w.metadata,
    )


def artifact_in(w: WArtifact, position: int = 0) -> Artifact:
    """``position`` stands in for an absent ``index`` (the schema's default is 0)."""
    index = position if w.index is None else w.index
    return Artifact(
        artifact_id=f"artifact-{index}",
        parts=parts_in(w.parts),
        name=w.name,
        description=w.description,
        metadata=w.metadata,
        index=index,
    )


def _timestamp_in(value: str) -> str:
    try:
        return normalize_timestamp(value)
    except InvalidParams:
        pass
    except OverflowError:  # a valid instant that falls outside years 1-9999 in UTC
        raise WireError(["timestamp"], "is out of range") from None
    # v0.1 says only "ISO 8601": also take its other forms (basic, week dates, no seconds).
    try:
        return format_timestamp(datetime.fromisoformat(value))
    except (ValueError, OverflowError):
        raise WireError(["timestamp"], "is not an ISO 8601 timestamp") from None


def status_in(w: WStatus) -> TaskStatus:
    msg = _at("message", message_in, w.message) if w.message is not None else None
    ts = w.timestamp
    return TaskStatus(
        state=_STATE_IN[w.state],
        message=msg,
        timestamp=None if ts is None else _timestamp_in(ts),
    )


def task_in(w: WTask) -> Task:
    artifacts: list[Artifact] = []
    for i, a in enumerate(w.artifacts or ()):
        try:
            # Without an index, an artifact of a task is known by its position.
            artifacts.append(artifact_in(a, i))
        except WireError as exc:
            exc.path[:0] = ["artifacts", f"[{i}]"]
            raise
    return Task(
        id=w.id,
        context_id=w.session_id or "",
        status=_at("status", status_in, w.status),
        artifacts=artifacts,
        history=_each("history", w.history, message_in) if w.history else [],
        metadata=w.metadata,
    )


def stream_event_in(w: WStreamEvent) -> StatusUpdate | ArtifactUpdate:
    if (w.status is None) == (w.artifact is None):
        raise WireError([], "must hold exactly one of `status` or `artifact`")
    if w.status is not None:
        return StatusUpdate(
            task_id=w.id,
            context_id="",
            status=_at("status", status_in, w.status),
            metadata=w.metadata,
        )
    assert w.artifact is not None
    a = w.artifact
    return ArtifactUpdate(
        task_id=w.id,
        context_id="",
        artifact=_at("artifact", artifact_in, a),
        append=bool(a.append),
        last_chunk=bool(a.last_chunk),
        metadata=w.metadata,
    )


def push_config_in(w: WPushConfig, task_id: str | None) -> PushConfig:
    auth = None
    if w.authentication is not None:
        auth = AuthInfo(schemes=w.authentication.schemes, credentials=w.authentication.credentials)
    return PushConfig(url=w.url, task_id=task_id, token=w.token, authentication=auth)


# ===================================================================== canonical -> wire


def _part_out(p: Part) -> WPart:
    # media_type / filename of text and data parts have no v0.1 spelling: dropped.
    if type(p) is TextPart:
        return WTextPart(text=p.text, metadata=p.metadata)
    if type(p) is DataPart:
        if isinstance(p.data, dict):
            return WDataPart(data=p.data, metadata=p.metadata)
        # Arrays too: the schema (and the v0.1 reference code built from it) wants an object.
        meta = dict(p.metadata) if p.metadata else {}
        meta[DATA_COMPAT_KEY] = True
        return WDataPart(data={"value": p.data}, metadata=meta)
    assert type(p) is FilePart
    # At most one of bytes/uri in v0.1: an inline copy wins over a reference.
    return WFilePart(
        file=WFile(
            name=p.filename,
            mime_type=p.media_type,
            data=b64encode(p.raw) if p.raw is not None else None,
            uri=p.uri if p.raw is None else None,
        ),
        metadata=p.metadata,
    )


def message_out(m: Message) -> WMessage:
    return WMessage(role=m.role, parts=[_part_out(p) for p in m.parts], metadata=m.metadata)


def artifact_out(
    a: Artifact, position: int = 0, *, append: bool = False, last_chunk: bool = False
) -> WArtifact:
    return WArtifact(
        name=a.name,
        description=a.description,
        parts=[_part_out(p) for p in a.parts],
        index=position if a.index is None else a.index,
        append=True if append else None,
        last_chunk=True if last_chunk else None,
        metadata=a.metadata,
    )


def status_out(s: TaskStatus) -> WStatus:
    return WStatus(
        state=_STATE_OUT[s.state],
        message=message_out(s.message) if s.message is not None else None,
        timestamp=s.timestamp,
    )


def task_out(t: Task) -> WTask:
    return WTask(
        id=t.id,
        session_id=t.context_id or None,
        status=status_out(t.status),
        artifacts=[artifact_out(a, i) for i, a in enumerate(t.artifacts)] if t.artifacts else None,
        history=[message_out(m) for m in t.history] if t.history else None,
        metadata=t.metadata,
    )


def status_event_out(
    task_id: str, status: TaskStatus, final: bool, metadata: Metadata | None = None
) -> WStatusEvent:
    return WStatusEvent(id=task_id, status=status_out(status), final=final, metadata=metadata)


def artifact_event_out(e: ArtifactUpdate) -> WArtifactEvent:
    # v0.1 carries the chunk flags inside the artifact; an update without an
    # index (another dialect's) goes out as the schema's default, 0.
    return WArtifactEvent(
        id=e.task_id,
        artifact=artifact_out(e.artifact, append=e.append, last_chunk=e.last_chunk),
        metadata=e.metadata,
    )


def push_config_out(c: PushConfig) -> WPushConfig:
    auth = None
    if c.authentication is not None:
        auth = WAuthInfo(schemes=c.authentication.schemes, credentials=c.authentication.credentials)
    return WPushConfig(url=c.url, token=c.token, authentication=auth)
