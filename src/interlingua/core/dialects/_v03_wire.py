"""Wire objects of the v0.2/v0.3 JSON-RPC dialect and their mapping to the canonical model.

The Structs spell every name as the v0.3.0 JSON schema does (camelCase, ``kind``
discriminators) so request params decode straight into them; the ``*_in`` /
``*_out`` functions move between them and the canonical model without passing
through dicts. Enum values of ``Role`` and ``TaskState`` are already the v0.3
strings, so the wire Structs use the canonical enums directly.

Conversions that can fail raise ``FieldError`` carrying the path of the bad
field relative to the object converted; callers prepend their own segment as
the error unwinds, so building paths costs nothing on success.
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
from ._common import b64decode, b64encode, format_timestamp, normalize_timestamp

# Part metadata flag marking a non-object DataPart value wrapped as {"value": X}
# (DIALECTS.md §i.27, the same spelling the official SDK uses).
DATA_COMPAT_KEY = "data_part_compat"

NonEmptyStr = Annotated[str, Meta(min_length=1)]
# historyLength: int32 in every version that types it (v1.0 proto)
NonNegativeInt = Annotated[int, Meta(ge=0, le=2**31 - 1)]
Metadata: TypeAlias = dict[str, Any]


class FieldError(Exception):
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


# ----------------------------------------------------------------------------- parts


class WTextPart(Struct, tag="text", tag_field="kind", omit_defaults=True):
    text: str
    metadata: Metadata | None = None


class WFile(Struct, rename="camel", omit_defaults=True):
    # FileWithBytes | FileWithUri: the schema's two shapes, told apart by which key is set
    data: str | None = msgspec.field(default=None, name="bytes")
    uri: str | None = None
    mime_type: str | None = None
    name: str | None = None


class WFilePart(Struct, tag="file", tag_field="kind", omit_defaults=True):
    file: WFile
    metadata: Metadata | None = None


class WDataPart(Struct, tag="data", tag_field="kind", omit_defaults=True):
    data: dict[str, Any]
    metadata: Metadata | None = None


WPart: TypeAlias = WTextPart | WFilePart | WDataPart


# -------------------------------------------------------------------- task objects


class WMessage(Struct, tag="message", tag_field="kind", rename="camel", omit_defaults=True):
    message_id: NonEmptyStr
    role: Role
    parts: Annotated[list[WPart], Meta(min_length=1)]
    context_id: str | None = None
    task_id: str | None = None
    reference_task_ids: list[str] | None = None
    extensions: list[str] | None = None
    metadata: Metadata | None = None


class WArtifact(Struct, rename="camel", omit_defaults=True):
    artifact_id: str
    parts: list[WPart]
    name: str | None = None
    description: str | None = None
    metadata: Metadata | None = None
    extensions: list[str] | None = None


class WStatus(Struct, omit_defaults=True):
    state: TaskState
    message: WMessage | None = None
    timestamp: str | None = None


class WTask(Struct, tag="task", tag_field="kind", rename="camel", omit_defaults=True):
    id: str
    context_id: str
    status: WStatus
    artifacts: list[WArtifact] | None = None
    history: list[WMessage] | None = None
    metadata: Metadata | None = None


class WStatusEvent(
    Struct, tag="status-update", tag_field="kind", rename="camel", omit_defaults=True
):
    task_id: str
    context_id: str
    status: WStatus
    # Required by the schema, so it has no default and is always written.
    final: bool
    metadata: Metadata | None = None


class WArtifactEvent(
    Struct, tag="artifact-update", tag_field="kind", rename="camel", omit_defaults=True
):
    task_id: str
    context_id: str
    artifact: WArtifact
    append: bool | None = None
    last_chunk: bool | None = None
    metadata: Metadata | None = None


WSendResult: TypeAlias = WTask | WMessage
WStreamItem: TypeAlias = WTask | WMessage | WStatusEvent | WArtifactEvent


# --------------------------------------------------------------------------- params


class WPushAuth(Struct, omit_defaults=True):
    schemes: list[str]
    credentials: str | None = None


class WPushConfig(Struct, omit_defaults=True):
    url: str
    id: str | None = None
    token: str | None = None
    authentication: WPushAuth | None = None


class WSendConfig(Struct, rename="camel", omit_defaults=True):
    accepted_output_modes: list[str] | None = None
    history_length: NonNegativeInt | None = None
    push_notification_config: WPushConfig | None = None
    blocking: bool | None = None


class WSendParams(Struct, omit_defaults=True):
    message: WMessage
    configuration: WSendConfig | None = None
    metadata: Metadata | None = None


class WTaskQuery(Struct, rename="camel", omit_defaults=True):
    """``TaskQueryParams``; also read for ``tasks/resubscribe``, where v0.1 sent it."""

    id: str
    history_length: NonNegativeInt | None = None
    metadata: Metadata | None = None


class WTaskIdParams(Struct, omit_defaults=True):
    id: str
    metadata: Metadata | None = None


class WTaskPushConfig(Struct, rename="camel", omit_defaults=True):
    task_id: str
    push_notification_config: WPushConfig


class WGetPushParams(Struct, rename="camel", omit_defaults=True):
    """``TaskIdParams`` or ``GetTaskPushNotificationConfigParams`` (v0.2.5+)."""

    id: str
    push_notification_config_id: str | None = None
    metadata: Metadata | None = None


class WDeletePushParams(Struct, rename="camel", omit_defaults=True):
    id: str
    push_notification_config_id: str
    metadata: Metadata | None = None



# ------------------------------------------------------------------------------ card
# Decoding only (cards are built as dicts by the codec): every field a sloppy
# peer may leave out has a default, so a card is refused only when unusable.


class WInterface(Struct):
    url: str
    transport: str = "JSONRPC"


class WProvider(Struct):
    organization: str = ""
    url: str | None = None


class WExtension(Struct):
    uri: str
    description: str | None = None
    required: bool = False
    params: Metadata | None = None


class WCapabilities(Struct, rename="camel"):
    streaming: bool | None = None
    push_notifications: bool | None = None
    state_transition_history: bool | None = None
    extensions: list[WExtension] | None = None


class WSkill(Struct, rename="camel"):
    id: str
    name: str
    description: str = ""
    tags: list[str] = msgspec.field(default_factory=list)
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None
    security: list[dict[str, list[str]]] | None = None


class WOAuthFlow(Struct, rename="camel"):
    authorization_url: str | None = None
    token_url: str | None = None
    refresh_url: str | None = None
    scopes: dict[str, str] = msgspec.field(default_factory=dict)


class WOAuthFlows(Struct, rename="camel"):
    authorization_code: WOAuthFlow | None = None
    client_credentials: WOAuthFlow | None = None
    implicit: WOAuthFlow | None = None
    password: WOAuthFlow | None = None


class WAPIKeyScheme(Struct, tag="apiKey", tag_field="type"):
    name: str
    location: str = msgspec.field(name="in")
    description: str | None = None


class WHTTPScheme(Struct, tag="http", tag_field="type", rename="camel"):
    scheme: str
    bearer_format: str | None = None
    description: str | None = None


class WOAuth2Scheme(Struct, tag="oauth2", tag_field="type", rename="camel"):
    flows: WOAuthFlows
    oauth2_metadata_url: str | None = None
    description: str | None = None


class WOIDCScheme(Struct, tag="openIdConnect", tag_field="type", rename="camel"):
    open_id_connect_url: str
    description: str | None = None


class WMTLSScheme(Struct, tag="mutualTLS", tag_field="type"):
    description: str | None = None


WSecurityScheme: TypeAlias = WAPIKeyScheme | WHTTPScheme | WOAuth2Scheme | WOIDCScheme | WMTLSScheme
SECURITY_SCHEME_TYPES = frozenset({"apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"})


class WSignature(Struct):
    protected: str
    signature: str
    header: Metadata | None = None


class WCard(Struct, rename="camel"):
    name: str
    url: str
    description: str = ""
    version: str = ""
    protocol_version: str | None = None
    preferred_transport: str | None = None
    additional_interfaces: list[WInterface] | None = None
    capabilities: WCapabilities = msgspec.field(default_factory=WCapabilities)
    default_input_modes: list[str] | None = None
    default_output_modes: list[str] | None = None
    skills: list[WSkill] = msgspec.field(default_factory=list)
    provider: WProvider | None = None
    documentation_url: str | None = None
    icon_url: str | None = None
    # Decoded one by one: a scheme of a type this dialect does not know is skipped.
    security_schemes: dict[str, Any] | None = None
    security: list[dict[str, list[str]]] | None = None
    supports_authenticated_extended_card: bool | None = None
    signatures: list[WSignature] | None = None


# ===================================================================== wire -> canonical


def _part_in(w: WPart) -> Part:
    if type(w) is WTextPart:
        return TextPart(text=w.text, metadata=w.metadata)
    if type(w) is WDataPart:
        meta = w.metadata
        if meta is not None and meta.get(DATA_COMPAT_KEY) is True and "value" in w.data:
            # A non-object value a v1.0-side peer wrapped for us: unwrap it.
            rest = {k: v for k, v in meta.items() if k != DATA_COMPAT_KEY}
            return DataPart(data=w.data["value"], metadata=rest or None)
        return DataPart(data=w.data, metadata=meta)
    assert type(w) is WFilePart
    f = w.file
    if (f.data is None) == (f.uri is None):
        raise FieldError(["file"], "must have exactly one of `bytes` or `uri`")
    raw: bytes | None = None
    if f.data is not None:
        try:
            raw = b64decode(f.data)
        except InvalidParams:
            raise FieldError(["file", "bytes"], "is not valid base64") from None
    return FilePart(
        raw=raw, uri=f.uri, media_type=f.mime_type, filename=f.name, metadata=w.metadata
    )


def parts_in(parts: list[WPart]) -> list[Part]:
    out: list[Part] = []
    for i, p in enumerate(parts):
        try:
            out.append(_part_in(p))
        except FieldError as exc:
            exc.path[:0] = ["parts", f"[{i}]"]
            raise
    return out


def message_in(w: WMessage) -> Message:
    return Message(
        message_id=w.message_id,
        role=w.role,
        parts=parts_in(w.parts),
        context_id=w.context_id,
        task_id=w.task_id,
        reference_task_ids=w.reference_task_ids,
        extensions=w.extensions,
        metadata=w.metadata,
    )


def artifact_in(w: WArtifact) -> Artifact:
    return Artifact(
        artifact_id=w.artifact_id,
        parts=parts_in(w.parts),
        name=w.name,
        description=w.description,
        metadata=w.metadata,
        extensions=w.extensions,
    )


def status_in(w: WStatus) -> TaskStatus:
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


def _timestamp_in(value: str) -> str:
    try:
        return normalize_timestamp(value)
    except InvalidParams:
        pass
    except OverflowError:  # a valid instant that falls outside years 1-9999 in UTC
        raise FieldError(["timestamp"], "is out of range") from None
    # v0.x says only "ISO 8601": also take its other forms (basic, week dates, no seconds).
    try:
        return format_timestamp(datetime.fromisoformat(value))
    except (ValueError, OverflowError):
        raise FieldError(["timestamp"], "is not an ISO 8601 timestamp") from None


def _each_in(name: str, items: list[Any], conv: Any) -> list[Any]:
    out = []
    for i, item in enumerate(items):
        try:
            out.append(conv(item))
        except FieldError as exc:
            exc.path[:0] = [name, f"[{i}]"]
            raise
    return out


def _in_field(name: str, conv: Any, value: Any) -> Any:
    try:
        return conv(value)
    except FieldError as exc:
        exc.path.insert(0, name)
        raise


def task_in(w: WTask) -> Task:
    return Task(
        id=w.id,
        context_id=w.context_id,
        status=_in_field("status", status_in, w.status),
        artifacts=_each_in("artifacts", w.artifacts, artifact_in) if w.artifacts else [],
        history=_each_in("history", w.history, message_in) if w.history else [],
        metadata=w.metadata,
    )


def status_event_in(w: WStatusEvent) -> StatusUpdate:
    return StatusUpdate(
        task_id=w.task_id,
        context_id=w.context_id,
        status=_in_field("status", status_in, w.status),
        metadata=w.metadata,
    )


def artifact_event_in(w: WArtifactEvent) -> ArtifactUpdate:
    return ArtifactUpdate(
        task_id=w.task_id,
        context_id=w.context_id,
        artifact=_in_field("artifact", artifact_in, w.artifact),
        append=bool(w.append),
        last_chunk=bool(w.last_chunk),
        metadata=w.metadata,
    )


def push_config_in(w: WPushConfig, task_id: str | None) -> PushConfig:
    auth = None
    if w.authentication is not None:
        auth = AuthInfo(schemes=w.authentication.schemes, credentials=w.authentication.credentials)
    return PushConfig(url=w.url, id=w.id, task_id=task_id, token=w.token, authentication=auth)


# ===================================================================== canonical -> wire


def _part_out(p: Part) -> WPart:
    # media_type / filename of text and data parts have no v0.3 spelling: dropped.
    if type(p) is TextPart:
        return WTextPart(text=p.text, metadata=p.metadata)
    if type(p) is DataPart:
        if isinstance(p.data, dict):
            return WDataPart(data=p.data, metadata=p.metadata)
        meta = dict(p.metadata) if p.metadata else {}
        meta[DATA_COMPAT_KEY] = True
        return WDataPart(data={"value": p.data}, metadata=meta)
    assert type(p) is FilePart
    return WFilePart(
        file=WFile(
            data=b64encode(p.raw) if p.raw is not None else None,
            uri=p.uri,
            mime_type=p.media_type,
            name=p.filename,
        ),
        metadata=p.metadata,
    )


def message_out(m: Message) -> WMessage:
    return WMessage(
        message_id=m.message_id,
        role=m.role,
        parts=[_part_out(p) for p in m.parts],
        context_id=m.context_id,
        task_id=m.task_id,
        reference_task_ids=m.reference_task_ids,
        extensions=m.extensions,
        metadata=m.metadata,
    )


def artifact_out(a: Artifact) -> WArtifact:
    # ``index`` is v0.1's artifact identity; v0.3 identifies by artifactId only.
    return WArtifact(
        artifact_id=a.artifact_id,
        parts=[_part_out(p) for p in a.parts],
        name=a.name,
        description=a.description,
        metadata=a.metadata,
        extensions=a.extensions,
    )


def status_out(s: TaskStatus) -> WStatus:
    return WStatus(
        state=s.state,
        message=message_out(s.message) if s.message is not None else None,
        timestamp=s.timestamp,
    )


def task_out(t: Task) -> WTask:
    return WTask(
        id=t.id,
        context_id=t.context_id,
        status=status_out(t.status),
        artifacts=[artifact_out(a) for a in t.artifacts] if t.artifacts else None,
        history=[message_out(m) for m in t.history] if t.history else None,
        metadata=t.metadata,
    )


def status_event_out(e: StatusUpdate, final: bool) -> WStatusEvent:
    return WStatusEvent(
        task_id=e.task_id,
        context_id=e.context_id,
        status=status_out(e.status),
        final=final,
        metadata=e.metadata,
    )


def artifact_event_out(e: ArtifactUpdate) -> WArtifactEvent:
    return WArtifactEvent(
        task_id=e.task_id,
        context_id=e.context_id,
        artifact=artifact_out(e.artifact),
        append=True if e.append else None,
        last_chunk=True if e.last_chunk else None,
        metadata=e.metadata,
    )


def push_config_out(c: PushConfig) -> WPushConfig:
    auth = None
    if c.authentication is not None:
        auth = WPushAuth(schemes=c.authentication.schemes, credentials=c.authentication.credentials)
    return WPushConfig(url=c.url, id=c.id, token=c.token, authentication=auth)
