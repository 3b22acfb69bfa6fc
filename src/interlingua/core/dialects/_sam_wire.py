"""Wire objects of the Solace Agent Mesh dialect (seed 002) and their mapping to the canonical model.

SAM sends the v0.2 objects under their Python (snake_case) names: ``message_id``,
``task_id``, ``context_id``, ``mime_type``; parts carry no discriminator and are
told apart by their member (``text``, ``data`` or ``file``). Peers built on the
same SDK may send the camelCase aliases instead, so each Struct also holds the
camelCase spelling of a field as a second, input-only member: either spelling
decodes straight into the Struct (no dict pass), the snake_case one wins when
both are given, and output sets only the snake_case members.

Artifacts: seed 002 shows ``{id, name, uri, mime_type, inline_data: {data}}``
without ``parts``; we write ``{id, name?, description?, parts, metadata?}`` and,
when the artifact is exactly one file part, the seed's flat ``uri`` /
``mime_type`` / ``inline_data`` as well, so readers of either form find the
file. On input ``parts`` wins; without it the flat members become one file part
named after the artifact (none at all: no parts). An artifact without ``id`` is
identified by its ``name``, which seed 002 makes the required member.

Conversions that can fail raise ``FieldError`` (shared with the v0.3 wire) with
the path of the bad field in the snake_case spelling.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, TypeAlias

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
from ._v03_wire import DATA_COMPAT_KEY, FieldError

Metadata: TypeAlias = dict[str, Any]
NonNegativeInt = Annotated[int, Meta(ge=0, le=2**31 - 1)]


def _camel(name: str) -> Any:
    """An input-only member holding the camelCase spelling of a field."""
    return msgspec.field(default=None, name=name)


# ----------------------------------------------------------------------------- parts


class SFile(Struct, omit_defaults=True):
    data: str | None = msgspec.field(default=None, name="bytes")
    uri: str | None = None
    name: str | None = None
    mime_type: str | None = None
    mime_type_c: str | None = _camel("mimeType")


class SPart(Struct, omit_defaults=True):
    """One of ``text``, ``data`` or ``file``, plus ``metadata``."""

    text: str | None = None
    data: dict[str, Any] | None = None
    file: SFile | None = None
    metadata: Metadata | None = None
    # SAM parts have no discriminator; a peer that adds one (v0.2 ``kind``,
    # v0.1 ``type``) has it checked against the member present.
    kind: str | None = None
    type: str | None = None


# -------------------------------------------------------------------- task objects


class SMessage(Struct, tag="message", tag_field="kind", kw_only=True, omit_defaults=True):
    role: Role
    parts: Annotated[list[SPart], Meta(min_length=1)]
    # Seed 002 requires it but leaves it out of its own status messages: generated when absent.
    message_id: str | None = None
    task_id: str | None = None
    context_id: str | None = None
    reference_task_ids: list[str] | None = None
    extensions: list[str] | None = None
    metadata: Metadata | None = None
    message_id_c: str | None = _camel("messageId")
    task_id_c: str | None = _camel("taskId")
    context_id_c: str | None = _camel("contextId")
    reference_task_ids_c: list[str] | None = _camel("referenceTaskIds")


class SInlineData(Struct):
    data: str


class SArtifact(Struct, kw_only=True, omit_defaults=True):
    id: str | None = None
    name: str | None = None
    description: str | None = None
    parts: list[SPart] | None = None
    uri: str | None = None
    mime_type: str | None = None
    inline_data: SInlineData | None = None
    metadata: Metadata | None = None
    extensions: list[str] | None = None
    # the v0.2 identity member, as SDK-made peers spell it
    artifact_id: str | None = None
    artifact_id_c: str | None = _camel("artifactId")
    mime_type_c: str | None = _camel("mimeType")
    inline_data_c: SInlineData | None = _camel("inlineData")


class SStatus(Struct, kw_only=True, omit_defaults=True):
    state: TaskState
    message: SMessage | None = None
    timestamp: str | None = None


class STask(Struct, tag="task", tag_field="kind", kw_only=True, omit_defaults=True):
    id: str
    context_id: str | None = None
    status: SStatus
    history: list[SMessage] | None = None
    artifacts: list[SArtifact] | None = None
    metadata: Metadata | None = None
    context_id_c: str | None = _camel("contextId")


class SStatusEvent(Struct, tag="status-update", tag_field="kind", kw_only=True, omit_defaults=True):
    task_id: str | None = None
    context_id: str | None = None
    status: SStatus
    # Always written (v0.2 requires it); a peer that leaves it out means "not final".
    final: bool | None = None
    metadata: Metadata | None = None
    task_id_c: str | None = _camel("taskId")
    context_id_c: str | None = _camel("contextId")


class SArtifactEvent(
    Struct, tag="artifact-update", tag_field="kind", kw_only=True, omit_defaults=True
):
    task_id: str | None = None
    context_id: str | None = None
    artifact: SArtifact
    append: bool | None = None
    last_chunk: bool | None = None
    metadata: Metadata | None = None
    task_id_c: str | None = _camel("taskId")
    context_id_c: str | None = _camel("contextId")
    last_chunk_c: bool | None = _camel("lastChunk")


SSendResult: TypeAlias = STask | SMessage
SStreamItem: TypeAlias = STask | SMessage | SStatusEvent | SArtifactEvent


# --------------------------------------------------------------------------- params


class SPushAuth(Struct, omit_defaults=True):
    schemes: list[str]
    credentials: str | None = None


class SPushConfig(Struct, omit_defaults=True):
    url: str
    id: str | None = None
    token: str | None = None
    authentication: SPushAuth | None = None


class SSendConfig(Struct, kw_only=True, omit_defaults=True):
    accepted_output_modes: list[str] | None = None
    history_length: NonNegativeInt | None = None
    blocking: bool | None = None
    push_notification_config: SPushConfig | None = None
    accepted_output_modes_c: list[str] | None = _camel("acceptedOutputModes")
    history_length_c: NonNegativeInt | None = _camel("historyLength")
    push_notification_config_c: SPushConfig | None = _camel("pushNotificationConfig")


class SSendParams(Struct, omit_defaults=True):
    message: SMessage
    configuration: SSendConfig | None = None
    metadata: Metadata | None = None


class SCancelParams(Struct, kw_only=True, omit_defaults=True):
    id: str | None = None
    metadata: Metadata | None = None
    task_id: str | None = None
    task_id_c: str | None = _camel("taskId")



def pick(*spellings: Any) -> Any:
    """The first of a field's spellings that was given."""
    for value in spellings:
        if value is not None:
            return value
    return None


# ===================================================================== wire -> canonical


def _file_part_in(f: SFile, metadata: Metadata | None) -> FilePart:
    if f.data is None and f.uri is None:
        raise FieldError(["file"], "must have `uri` or `bytes`")
    raw: bytes | None = None
    if f.data is not None:
        try:
            raw = b64decode(f.data)
        except InvalidParams:
            raise FieldError(["file", "bytes"], "is not valid base64") from None
    return FilePart(
        raw=raw,
        uri=f.uri,
        media_type=pick(f.mime_type, f.mime_type_c),
        filename=f.name,
        metadata=metadata,
    )


def _part_in(p: SPart) -> Part:
    present = (p.text is not None) + (p.data is not None) + (p.file is not None)
    if present != 1:
        raise FieldError([], "must have exactly one of `text`, `data` or `file`")
    member = "text" if p.text is not None else "data" if p.data is not None else "file"
    for tag_name, tag in (("kind", p.kind), ("type", p.type)):
        if tag is not None and tag != member:
            raise FieldError([tag_name], f"is {tag!r} but the part holds `{member}`")
    if p.text is not None:
        return TextPart(text=p.text, metadata=p.metadata)
    if p.data is not None:
        meta = p.metadata
        if meta is not None and meta.get(DATA_COMPAT_KEY) is True and "value" in p.data:
            # A non-object value wrapped as {"value": X} (DIALECTS.md §i.27): unwrap it.
            rest = {k: v for k, v in meta.items() if k != DATA_COMPAT_KEY}
            return DataPart(data=p.data["value"], metadata=rest or None)
        return DataPart(data=p.data, metadata=meta)
    assert p.file is not None
    return _file_part_in(p.file, p.metadata)


def parts_in(parts: list[SPart]) -> list[Part]:
    out: list[Part] = []
    for i, p in enumerate(parts):
        try:
            out.append(_part_in(p))
        except FieldError as exc:
            exc.path[:0] = ["parts", f"[{i}]"]
            raise
    return out


def message_in(w: SMessage) -> Message:
    return Message(
        message_id=pick(w.message_id, w.message_id_c) or new_id(),
        role=w.role,
        parts=parts_in(w.parts),
        context_id=pick(w.context_id, w.context_id_c),
        task_id=pick(w.task_id, w.task_id_c),
        reference_task_ids=pick(w.reference_task_ids, w.reference_task_ids_c),
        extensions=w.extensions,
        metadata=w.metadata,
    )


def artifact_in(w: SArtifact) -> Artifact:
    artifact_id = pick(w.id, w.artifact_id, w.artifact_id_c, w.name)
    if artifact_id is None:
        raise FieldError(["id"], "is required (or `name`)")
    if w.parts is not None:
        parts = parts_in(w.parts)
    else:
        parts = []
        inline = pick(w.inline_data, w.inline_data_c)
        if inline is not None or w.uri is not None:
            raw: bytes | None = None
            if inline is not None:
                try:
                    raw = b64decode(inline.data)
                except InvalidParams:
                    raise FieldError(["inline_data", "data"], "is not valid base64") from None
            parts.append(
                FilePart(
                    raw=raw, uri=w.uri, media_type=pick(w.mime_type, w.mime_type_c), filename=w.name
                )
            )
    return Artifact(
        artifact_id=artifact_id,
        parts=parts,
        name=w.name,
        description=w.description,
        metadata=w.metadata,
        extensions=w.extensions,
    )


def _timestamp_in(value: str) -> str:
    try:
        return normalize_timestamp(value)
    except InvalidParams:
        pass
    except OverflowError:  # a valid instant that falls outside years 1-9999 in UTC
        raise FieldError(["timestamp"], "is out of range") from None
    # Seed 002 says only "ISO 8601": also take its other forms.
    try:
        return format_timestamp(datetime.fromisoformat(value))
    except (ValueError, OverflowError):
        raise FieldError(["timestamp"], "is not an ISO 8601 timestamp") from None


def status_in(w: SStatus) -> TaskStatus:
    msg = None
    if w.message is not None:
        try:
            msg = message_in(w.message)
        except FieldError as exc:
            exc.path.insert(0, "message")
            raise
    ts = w.timestamp
    return TaskStatus(
        state=w.state, message=msg, timestamp=None if ts is None else _timestamp_in(ts)
    )


def _in_field(name: str, conv: Any, value: Any) -> Any:
    try:
        return conv(value)
    except FieldError as exc:
        exc.path.insert(0, name)
        raise


def _each_in(name: str, items: list[Any], conv: Any) -> list[Any]:
    out = []
    for i, item in enumerate(items):
        try:
            out.append(conv(item))
        except FieldError as exc:
            exc.path[:0] = [name, f"[{i}]"]
            raise
    return out


def _required(value: str | None, name: str) -> str:
    if value is None:
        raise FieldError([name], "is required")
    return value


def task_in(w: STask) -> Task:
    return Task(
        id=w.id,
        context_id=_required(pick(w.context_id, w.context_id_c), "context_id"),
        status=_in_field("status", status_in, w.status),
        artifacts=_each_in("artifacts", w.artifacts, artifact_in) if w.artifacts else [],
        history=_each_in("history", w.history, message_in) if w.history else [],
        metadata=w.metadata,
    )


def status_event_in(w: SStatusEvent) -> StatusUpdate:
    return StatusUpdate(
        task_id=_required(pick(w.task_id, w.task_id_c), "task_id"),
        context_id=_required(pick(w.context_id, w.context_id_c), "context_id"),
        status=_in_field("status", status_in, w.status),
        metadata=w.metadata,
    )


def artifact_event_in(w: SArtifactEvent) -> ArtifactUpdate:
    return ArtifactUpdate(
        task_id=_required(pick(w.task_id, w.task_id_c), "task_id"),
        context_id=_required(pick(w.context_id, w.context_id_c), "context_id"),
        artifact=_in_field("artifact", artifact_in, w.artifact),
        append=bool(w.append),
        last_chunk=bool(pick(w.last_chunk, w.last_chunk_c)),
        metadata=w.metadata,
    )


def push_config_in(w: SPushConfig) -> PushConfig:
    auth = None
    if w.authentication is not None:
        auth = AuthInfo(schemes=w.authentication.schemes, credentials=w.authentication.credentials)
    return PushConfig(url=w.url, id=w.id, token=w.token, authentication=auth)


# ===================================================================== canonical -> wire


def _part_out(p: Part) -> SPart:
    # media_type / filename of text and data parts have no SAM spelling: dropped.
    if type(p) is TextPart:
        return SPart(text=p.text, metadata=p.metadata)
    if type(p) is DataPart:
        if isinstance(p.data, dict):
            return SPart(data=p.data, metadata=p.metadata)
        meta = dict(p.metadata) if p.metadata else {}
        meta[DATA_COMPAT_KEY] = True
        return SPart(data={"value": p.data}, metadata=meta)
    assert type(p) is FilePart
    # A file with neither bytes nor uri (v0.1 allows it) goes out as empty bytes.
    data = b64encode(p.raw) if p.raw is not None else None if p.uri is not None else ""
    return SPart(
        file=SFile(data=data, uri=p.uri, name=p.filename, mime_type=p.media_type),
        metadata=p.metadata,
    )


def message_out(m: Message) -> SMessage:
    return SMessage(
        role=m.role,
        parts=[_part_out(p) for p in m.parts],
        message_id=m.message_id,
        task_id=m.task_id,
        context_id=m.context_id,
        reference_task_ids=m.reference_task_ids,
        extensions=m.extensions,
        metadata=m.metadata,
    )


def artifact_out(a: Artifact) -> SArtifact:
    # ``index`` is v0.1's artifact identity; SAM identifies by ``id`` only.
    out = SArtifact(
        id=a.artifact_id,
        name=a.name,
        description=a.description,
        parts=[_part_out(p) for p in a.parts],
        metadata=a.metadata,
        extensions=a.extensions,
    )
    if len(a.parts) == 1 and type(a.parts[0]) is FilePart:
        # The seed's flat form too, for readers that look only there.
        f = a.parts[0]
        out.uri = f.uri
        out.mime_type = f.media_type
        if f.raw is not None:
            out.inline_data = SInlineData(data=b64encode(f.raw))
    return out


def status_out(s: TaskStatus) -> SStatus:
    # SAM calls the timestamp required; a status that has none is sent without one.
    return SStatus(
        state=s.state,
        message=message_out(s.message) if s.message is not None else None,
        timestamp=s.timestamp,
    )


def task_out(t: Task) -> STask:
    return STask(
        id=t.id,
        context_id=t.context_id,
        status=status_out(t.status),
        history=[message_out(m) for m in t.history] if t.history else None,
        artifacts=[artifact_out(a) for a in t.artifacts] if t.artifacts else None,
        metadata=t.metadata,
    )


def status_event_out(e: StatusUpdate, final: bool) -> SStatusEvent:
    return SStatusEvent(
        task_id=e.task_id,
        context_id=e.context_id,
        status=status_out(e.status),
        final=final,
        metadata=e.metadata,
    )


def artifact_event_out(e: ArtifactUpdate) -> SArtifactEvent:
    return SArtifactEvent(
        task_id=e.task_id,
        context_id=e.context_id,
        artifact=artifact_out(e.artifact),
        append=True if e.append else None,
        last_chunk=True if e.last_chunk else None,
        metadata=e.metadata,
    )


def push_config_out(c: PushConfig) -> SPushConfig:
    auth = None
    if c.authentication is not None:
        auth = SPushAuth(schemes=c.authentication.schemes, credentials=c.authentication.credentials)
    return SPushConfig(url=c.url, id=c.id, token=c.token, authentication=auth)
