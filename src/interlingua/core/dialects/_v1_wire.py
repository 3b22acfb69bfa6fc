"""v1.0 ProtoJSON on the wire: Structs mirroring ``lf.a2a.v1`` and their mapping to the model.

The Structs below carry the proto message names and, through ``rename="camel"``,
the proto JSON names. Every field has a default, as in proto3: what is REQUIRED
is checked while converting to the canonical model, so that a server can name
the missing field and a client can still read a peer that left an empty value
out. Unknown members are refused by the typed decoder; that only sends the
document down the lenient path (``relax``), which drops them and also accepts
the snake_case proto names, numbers given as strings and ``null`` members.

Since every field is optional, and a scalar field's name has one type wherever
it appears (``_TYPES``), each message is one entry of a table (``_message``):
its fields in proto order and the types of the others (mostly the members that
hold messages). The Structs are made from it at import, as the v0.x family's are
(``_family_wire``), and decode exactly as the same classes written out would;
mypy sees them as ``Any``.

Conversions raise ``WireError`` with the JSON path of the offending member; the
codec turns it into ``InvalidParams`` (requests) or ``InvalidAgentResponse``
(results).
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import msgspec
import msgspec.inspect as mi
from msgspec import UNSET

from .. import model as m
from ..errors import InvalidParams, quoted
from ._common import (
    OUT_OF_RANGE,
    FieldError,
    TimestampOutOfRange,
    b64decode,
    b64encode,
    each_in,
    field_in,
    normalize_timestamp,
)

# One field error for every dialect: its paths read the same everywhere.
WireError = FieldError

Metadata = dict[str, Any]

INT32_MAX = 2**31 - 1


class Wire(
    msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True, kw_only=True,
    gc=False
):
    """Base of the wire Structs: proto JSON names, defaults omitted, strict typed decoding."""


# ------------------------------------------------------------------ the messages

# A field's type wherever its name appears, unless a message names another; any other
# field is a string.
_TYPES: dict[str, Any] = {
    **dict.fromkeys(("metadata", "params", "header"), Metadata),
    **dict.fromkeys(("role", "state"), str | int),  # enums: by name or by number
    **dict.fromkeys(("history_length", "page_size", "total_size"), int),
    **dict.fromkeys(
        ("append", "last_chunk", "return_immediately", "include_artifacts", "required",
         "streaming", "push_notifications", "extended_agent_card", "pkce_required"),
        bool,
    ),
    **dict.fromkeys(
        ("extensions", "reference_task_ids", "accepted_output_modes", "tags", "examples",
         "input_modes", "output_modes", "default_input_modes", "default_output_modes"),
        list[str],
    ),
    "scopes": dict[str, str],
    # int64: a string in ProtoJSON, a number accepted (A2A 1.1, draft)
    **dict.fromkeys(("generation", "current_generation", "if_generation_match"), str | int),
    "data": Any,  # may be JSON null, so UNSET tells that it is absent
}


def _message(name: str, fields: str, *, rename: dict[str, str] | None = None, **types: Any) -> Any:
    """The Struct of the proto message ``name``: ``fields`` in proto order, each
    optional, typed by ``types`` or else by ``_TYPES``."""
    spec: list[tuple[str, Any, Any]] = []
    # Interned, as names written in a class body are: msgspec then matches keyword
    # arguments and attributes by identity (without it, making a Struct took 1.5x as long).
    for f in map(sys.intern, fields.split()):
        t = types.get(f) or _TYPES.get(f, str)
        spec.append((f, t, UNSET) if t is Any else (f, t | None, None))
    options: dict[str, Any] = {} if rename is None else {"rename": rename}
    return msgspec.defstruct(name, spec, bases=(Wire,), module=__name__, kw_only=True, **options)


# oneof content: a member is set when it is present
Part: Any = _message("Part", "text raw url data metadata filename media_type")
Message: Any = _message(
    "Message", "message_id context_id task_id role parts metadata extensions reference_task_ids",
    parts=list[Part],
)
Artifact: Any = _message(
    "Artifact", "artifact_id name description parts metadata extensions", parts=list[Part]
)
TaskStatus: Any = _message("TaskStatus", "state message timestamp", message=Message)
Task: Any = _message(
    "Task", "id context_id status artifacts history metadata generation",
    status=TaskStatus, artifacts=list[Artifact], history=list[Message],
)
TaskStatusUpdateEvent: Any = _message(
    "TaskStatusUpdateEvent", "task_id context_id status metadata generation",
    status=TaskStatus
)
TaskArtifactUpdateEvent: Any = _message(
    "TaskArtifactUpdateEvent",
    "task_id context_id artifact append last_chunk metadata generation",
    artifact=Artifact,
)
StreamResponse: Any = _message(
    "StreamResponse", "task message status_update artifact_update",
    task=Task, message=Message,
    status_update=TaskStatusUpdateEvent, artifact_update=TaskArtifactUpdateEvent,
)
SendMessageResponse: Any = _message(
    "SendMessageResponse", "task message", task=Task, message=Message
)

# push configs
AuthenticationInfo: Any = _message("AuthenticationInfo", "scheme credentials")
TaskPushNotificationConfig: Any = _message(
    "TaskPushNotificationConfig", "tenant id task_id url token authentication",
    authentication=AuthenticationInfo,
)
ListTaskPushNotificationConfigsResponse: Any = _message(
    "ListTaskPushNotificationConfigsResponse", "configs next_page_token",
    configs=list[TaskPushNotificationConfig],
)

# requests
SendMessageConfiguration: Any = _message(
    "SendMessageConfiguration",
    "accepted_output_modes task_push_notification_config history_length return_immediately"
    " if_generation_match",
    task_push_notification_config=TaskPushNotificationConfig,
)
SendMessageRequest: Any = _message(
    "SendMessageRequest", "tenant message configuration metadata",
    message=Message, configuration=SendMessageConfiguration,
)
GetTaskRequest: Any = _message("GetTaskRequest", "tenant id history_length current_generation")
ListTasksRequest: Any = _message(
    "ListTasksRequest",
    "tenant context_id status page_size page_token history_length status_timestamp_after"
    " include_artifacts",
    status=str | int,
)
ListTasksResponse: Any = _message(
    "ListTasksResponse", "tasks next_page_token page_size total_size", tasks=list[Task]
)
CancelTaskRequest: Any = _message("CancelTaskRequest", "tenant id metadata")
SubscribeToTaskRequest: Any = _message("SubscribeToTaskRequest", "tenant id")
GetTaskPushNotificationConfigRequest: Any = _message(
    "GetTaskPushNotificationConfigRequest", "tenant task_id id"
)
DeleteTaskPushNotificationConfigRequest: Any = _message(
    "DeleteTaskPushNotificationConfigRequest", "tenant task_id id"
)
ListTaskPushNotificationConfigsRequest: Any = _message(
    "ListTaskPushNotificationConfigsRequest", "tenant task_id page_size page_token"
)
GetExtendedAgentCardRequest: Any = _message("GetExtendedAgentCardRequest", "tenant")

# the card
AgentInterface: Any = _message("AgentInterface", "url protocol_binding tenant protocol_version")
AgentProvider: Any = _message("AgentProvider", "url organization")
AgentExtension: Any = _message("AgentExtension", "uri description required params")
AgentCapabilities: Any = _message(
    "AgentCapabilities", "streaming push_notifications extensions extended_agent_card",
    extensions=list[AgentExtension],
)
# ``list`` in JSON, ``values`` in Python
StringList: Any = _message("StringList", "values", rename={"values": "list"}, values=list[str])
SecurityRequirement: Any = _message("SecurityRequirement", "schemes", schemes=dict[str, StringList])
APIKeySecurityScheme: Any = _message("APIKeySecurityScheme", "description location name")
HTTPAuthSecurityScheme: Any = _message("HTTPAuthSecurityScheme", "description scheme bearer_format")
AuthorizationCodeOAuthFlow: Any = _message(
    "AuthorizationCodeOAuthFlow", "authorization_url token_url refresh_url scopes pkce_required"
)
ClientCredentialsOAuthFlow: Any = _message(
    "ClientCredentialsOAuthFlow", "token_url refresh_url scopes"
)
ImplicitOAuthFlow: Any = _message("ImplicitOAuthFlow", "authorization_url refresh_url scopes")
PasswordOAuthFlow: Any = _message("PasswordOAuthFlow", "token_url refresh_url scopes")
DeviceCodeOAuthFlow: Any = _message(
    "DeviceCodeOAuthFlow", "device_authorization_url token_url refresh_url scopes"
)
OAuthFlows: Any = _message(
    "OAuthFlows", "authorization_code client_credentials implicit password device_code",
    authorization_code=AuthorizationCodeOAuthFlow, client_credentials=ClientCredentialsOAuthFlow,
    implicit=ImplicitOAuthFlow, password=PasswordOAuthFlow, device_code=DeviceCodeOAuthFlow,
)
OAuth2SecurityScheme: Any = _message(
    "OAuth2SecurityScheme", "description flows oauth2_metadata_url", flows=OAuthFlows
)
OpenIdConnectSecurityScheme: Any = _message(
    "OpenIdConnectSecurityScheme", "description open_id_connect_url"
)
MutualTlsSecurityScheme: Any = _message("MutualTlsSecurityScheme", "description")
SecurityScheme: Any = _message(
    "SecurityScheme",
    "api_key_security_scheme http_auth_security_scheme oauth2_security_scheme"
    " open_id_connect_security_scheme mtls_security_scheme",
    api_key_security_scheme=APIKeySecurityScheme,
    http_auth_security_scheme=HTTPAuthSecurityScheme,
    oauth2_security_scheme=OAuth2SecurityScheme,
    open_id_connect_security_scheme=OpenIdConnectSecurityScheme,
    mtls_security_scheme=MutualTlsSecurityScheme,
)
AgentSkill: Any = _message(
    "AgentSkill",
    "id name description tags examples input_modes output_modes security_requirements",
    security_requirements=list[SecurityRequirement],
)
AgentCardSignature: Any = _message("AgentCardSignature", "protected signature header")
AgentCard: Any = _message(
    "AgentCard",
    "name description supported_interfaces provider version documentation_url capabilities"
    " security_schemes security_requirements default_input_modes default_output_modes skills"
    " signatures icon_url security",
    supported_interfaces=list[AgentInterface], provider=AgentProvider,
    capabilities=AgentCapabilities, security_schemes=dict[str, SecurityScheme],
    security_requirements=list[SecurityRequirement], skills=list[AgentSkill],
    signatures=list[AgentCardSignature],
    # Read only: the v1.0 sample card still uses the v0.3 form (DIALECTS.md §i.24).
    security=list[dict[str, list[str]]],
)


# ------------------------------------------------------------------------ errors


class ErrorInfo(msgspec.Struct, omit_defaults=True, rename={"type_": "@type"}):
    type_: str
    reason: str
    domain: str
    metadata: dict[str, str] | None = None


class ErrorObject(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: list[Any] | None = None


ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN = "a2a-protocol.org"


# ------------------------------------------------------------------------- enums

STATE_NAMES: dict[m.TaskState, str] = {
    m.TaskState.UNKNOWN: "TASK_STATE_UNSPECIFIED",
    m.TaskState.SUBMITTED: "TASK_STATE_SUBMITTED",
    m.TaskState.WORKING: "TASK_STATE_WORKING",
    m.TaskState.COMPLETED: "TASK_STATE_COMPLETED",
    m.TaskState.FAILED: "TASK_STATE_FAILED",
    m.TaskState.CANCELED: "TASK_STATE_CANCELED",
    m.TaskState.INPUT_REQUIRED: "TASK_STATE_INPUT_REQUIRED",
    m.TaskState.REJECTED: "TASK_STATE_REJECTED",
    m.TaskState.AUTH_REQUIRED: "TASK_STATE_AUTH_REQUIRED",
}
_STATE_NUMBERS = {
    "TASK_STATE_UNSPECIFIED": 0,
    "TASK_STATE_SUBMITTED": 1,
    "TASK_STATE_WORKING": 2,
    "TASK_STATE_COMPLETED": 3,
    "TASK_STATE_FAILED": 4,
    "TASK_STATE_CANCELED": 5,
    "TASK_STATE_INPUT_REQUIRED": 6,
    "TASK_STATE_REJECTED": 7,
    "TASK_STATE_AUTH_REQUIRED": 8,
}
STATES: dict[str | int, m.TaskState] = {}
for _state, _name in STATE_NAMES.items():
    STATES[_name] = _state
    STATES[_STATE_NUMBERS[_name]] = _state
# the v0.3 proto spelling (DIALECTS.md §i.2)
STATES["TASK_STATE_CANCELLED"] = m.TaskState.CANCELED

ROLE_NAMES: dict[m.Role, str] = {m.Role.USER: "ROLE_USER", m.Role.AGENT: "ROLE_AGENT"}
ROLES: dict[str | int, m.Role] = {
    "ROLE_USER": m.Role.USER,
    "ROLE_AGENT": m.Role.AGENT,
    1: m.Role.USER,
    2: m.Role.AGENT,
}


def state_in(value: str | int | None, path: str = "state") -> m.TaskState:
    if value is None:
        return m.TaskState.UNKNOWN  # proto3 default: TASK_STATE_UNSPECIFIED
    state = STATES.get(value) if not isinstance(value, bool) else None
    if state is None:
        raise WireError(path, f"is not a TaskState: {value!r}")
    return state


def role_in(value: str | int | None) -> m.Role:
    role = ROLES.get(value) if value is not None and not isinstance(value, bool) else None
    if role is None:
        # proto3's default, as protobuf writes a role left out
        if value is None or value == "ROLE_UNSPECIFIED" or (type(value) is int and value == 0):
            raise WireError("role", "is required")
        raise WireError("role", f"must be ROLE_USER or ROLE_AGENT, got {value!r}")
    return role


def timestamp_in(value: str | None, path: str, *, ceil: bool = False) -> str | None:
    """``ceil`` for a lower bound: digits past the millisecond round up."""
    if value is None:
        return None
    try:
        return normalize_timestamp(value, path, ceil=ceil)
    except TimestampOutOfRange:
        raise WireError(path, f"{OUT_OF_RANGE}: {value!r}") from None
    except InvalidParams:
        raise WireError(path, f"is not an RFC 3339 timestamp: {value!r}") from None


def count_in(value: int | None, path: str) -> int | None:
    """An ``optional int32`` that must not be negative (history lengths)."""
    if value is None:
        return None
    if value < 0:
        raise WireError(path, f"must not be negative, got {value}")
    if value > INT32_MAX:
        raise WireError(path, f"is too large: {value}")
    return value


# ------------------------------------------------------------------------- parts


def part_in(w: Part) -> m.Part:
    present = (
        (w.text is not None) + (w.raw is not None) + (w.url is not None) + (w.data is not UNSET)
    )
    if present != 1:
        found = [
            name
            for name, value in (("text", w.text), ("raw", w.raw), ("url", w.url))
            if value is not None
        ]
        if w.data is not UNSET:
            found.append("data")
        raise WireError(
            "",
            "must hold exactly one of text, raw, url, data"
            f" (found {', '.join(found) if found else 'none'})",
        )
    media_type = w.media_type or None
    filename = w.filename or None
    if w.text is not None:
        return m.TextPart(w.text, w.metadata, media_type, filename)
    if w.raw is not None:
        try:
            raw = b64decode(w.raw)
        except InvalidParams:
            raise WireError("raw", "is not valid base64") from None
        return m.FilePart(raw, None, media_type, filename, w.metadata)
    if w.url is not None:
        return m.FilePart(None, w.url, media_type, filename, w.metadata)
    return m.DataPart(w.data, w.metadata, media_type, filename)


def part_out(p: m.Part) -> Part:
    kind = type(p)
    if kind is m.TextPart:
        assert isinstance(p, m.TextPart)
        return Part(text=p.text, metadata=p.metadata, filename=p.filename, media_type=p.media_type)
    if kind is m.FilePart:
        assert isinstance(p, m.FilePart)
        if p.raw is not None:
            # inline content wins when a part carries both; v1.0 allows one
            return Part(
                raw=b64encode(p.raw),
                metadata=p.metadata,
                filename=p.filename,
                media_type=p.media_type,
            )
        # a v0.1 file with neither bytes nor uri has no v1.0 form; send it empty
        return Part(
            url=p.uri,
            raw=None if p.uri is not None else "",
            metadata=p.metadata,
            filename=p.filename,
            media_type=p.media_type,
        )
    assert isinstance(p, m.DataPart)
    return Part(data=p.data, metadata=p.metadata, filename=p.filename, media_type=p.media_type)


def parts_in(ws: list[Part] | None, *, request: bool) -> list[m.Part]:
    if not ws:
        if request:
            raise WireError("parts", "must hold at least one part")
        return []
    if len(ws) == 1:  # nearly every message: its one part read in this frame
        w = ws[0]
        if w.text is not None and w.raw is None and w.url is None and w.data is UNSET:
            # part_in's text case
            return [m.TextPart(w.text, w.metadata, w.media_type or None, w.filename or None)]
    try:
        return list(map(part_in, ws))  # no frame per part
    except FieldError:
        return each_in("parts", ws, part_in)  # again, to say which part is wrong


# ---------------------------------------------------------------------- messages


def message_in(w: Message, *, request: bool = False) -> m.Message:
    if request and not w.message_id:
        raise WireError("messageId", "is required and must not be empty")
    # a role's name looked up in place (role_in says what is wrong with another)
    role = ROLES.get(w.role) if type(w.role) is str else None
    return m.Message(
        message_id=w.message_id or "",
        role=role or role_in(w.role),
        parts=parts_in(w.parts, request=request),
        context_id=w.context_id or None,
        task_id=w.task_id or None,
        reference_task_ids=w.reference_task_ids or None,
        extensions=w.extensions or None,
        metadata=w.metadata,
    )


# The lists below are made with map, not comprehensions: a comprehension is a
# call of its own (Python 3.11), and every answer has a few of these lists. A
# list of one (nearly every list of an answer: one part, one artifact, one
# message) is made in the caller's frame: ``map`` calls a Python function from C,
# which costs a frame the interpreter cannot inline (about 1,500 instructions).


def parts_out(parts: list[m.Part]) -> list[Part]:
    if len(parts) == 1:
        p = parts[0]
        if type(p) is m.TextPart:  # part_out's first case, without its frame
            if p.metadata is None and p.filename is None and p.media_type is None:
                return [Part(text=p.text)]
            return [Part(text=p.text, metadata=p.metadata, filename=p.filename,
                         media_type=p.media_type)]
    return list(map(part_out, parts))


def message_out(msg: m.Message) -> Message:
    return Message(
        message_id=msg.message_id,
        context_id=msg.context_id,
        task_id=msg.task_id,
        role=ROLE_NAMES[msg.role],
        parts=parts_out(msg.parts),
        metadata=msg.metadata,
        extensions=msg.extensions or None,
        reference_task_ids=msg.reference_task_ids or None,
    )


def artifact_in(w: Artifact) -> m.Artifact:
    return m.Artifact(
        artifact_id=w.artifact_id or "",
        parts=parts_in(w.parts, request=False),
        name=w.name or None,
        description=w.description or None,
        metadata=w.metadata,
        extensions=w.extensions or None,
    )


def artifact_out(a: m.Artifact) -> Artifact:
    return Artifact(
        artifact_id=a.artifact_id,
        name=a.name,
        description=a.description,
        parts=parts_out(a.parts),
        metadata=a.metadata,
        extensions=a.extensions or None,
    )


def status_in(w: TaskStatus | None) -> m.TaskStatus:
    if w is None:
        return m.TaskStatus(m.TaskState.UNKNOWN)
    message = None if w.message is None else field_in("message", message_in, w.message)
    return m.TaskStatus(state_in(w.state), message, timestamp_in(w.timestamp, "timestamp"))


def status_out(s: m.TaskStatus) -> TaskStatus:
    return TaskStatus(
        state=STATE_NAMES[s.state],
        message=message_out(s.message) if s.message is not None else None,
        timestamp=s.timestamp,
    )


def task_in(w: Task) -> m.Task:
    if not w.id:
        # The proto marks Task.id REQUIRED: a task nobody can ask about again is no task.
        raise WireError("id", "is required")
    status = field_in("status", status_in, w.status)
    return m.Task(
        id=w.id,
        context_id=w.context_id or "",
        status=status,
        artifacts=each_in("artifacts", w.artifacts or [], artifact_in),
        history=each_in("history", w.history or [], message_in),
        metadata=w.metadata,
        generation=generation_in(w.generation, "generation"),
    )


def generation_in(value: str | int | None, path: str) -> int:
    """An int64 generation (A2A 1.1) as ProtoJSON gives it: a string or a number;
    absent: 0 (unknown)."""
    if value is None:
        return 0
    got = int_in(value, path)
    if got is None:
        return 0
    return got


def int_in(value: str | int | None, path: str) -> int | None:
    """A non-negative int64 field, from its string (or number)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise WireError(path, "must be an integer")
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit() and len(value) <= 19):
            raise WireError(path, f"must be a non-negative integer, got {quoted(value)}")
        value = int(value)
    if not 0 <= value <= 2**63 - 1:
        raise WireError(path, f"must be a non-negative int64, got {value}")
    return value


def task_out(t: m.Task) -> Task:
    s, artifacts, history = t.status, t.artifacts, t.history
    return Task(
        id=t.id,
        context_id=t.context_id,
        # status_out, without its frame
        status=TaskStatus(
            state=STATE_NAMES[s.state],
            message=message_out(s.message) if s.message is not None else None,
            timestamp=s.timestamp,
        ),
        artifacts=None if not artifacts else [artifact_out(artifacts[0])]
        if len(artifacts) == 1 else list(map(artifact_out, artifacts)),
        history=None if not history else [message_out(history[0])]
        if len(history) == 1 else list(map(message_out, history)),
        metadata=t.metadata,
    )


# ------------------------------------------------------------------------ events


def status_update_in(w: TaskStatusUpdateEvent) -> m.StatusUpdate:
    status = field_in("status", status_in, w.status)
    return m.StatusUpdate(w.task_id or "", w.context_id or "", status, w.metadata,
                          generation_in(w.generation, "generation"))


def artifact_update_in(w: TaskArtifactUpdateEvent) -> m.ArtifactUpdate:
    if w.artifact is None:
        raise WireError("artifact", "is required")
    artifact = field_in("artifact", artifact_in, w.artifact)
    return m.ArtifactUpdate(
        task_id=w.task_id or "",
        context_id=w.context_id or "",
        artifact=artifact,
        append=bool(w.append),
        last_chunk=bool(w.last_chunk),
        metadata=w.metadata,
        generation=generation_in(w.generation, "generation"),
    )


def stream_item_in(w: StreamResponse) -> m.Task | m.Message | m.StatusUpdate | m.ArtifactUpdate:
    members = [
        (name, value)
        for name, value in (
            ("task", w.task),
            ("message", w.message),
            ("statusUpdate", w.status_update),
            ("artifactUpdate", w.artifact_update),
        )
        if value is not None
    ]
    if len(members) != 1:
        found = ", ".join(name for name, _ in members) or "none"
        raise WireError(
            "",
            f"must hold exactly one of task, message, statusUpdate, artifactUpdate (found {found})",
        )
    name, value = members[0]
    try:
        if isinstance(value, Task):
            return task_in(value)
        if isinstance(value, Message):
            return message_in(value)
        if isinstance(value, TaskStatusUpdateEvent):
            return status_update_in(value)
        assert isinstance(value, TaskArtifactUpdateEvent)
        return artifact_update_in(value)
    except WireError as exc:
        raise exc.at(name) from None


def stream_item_out(item: m.Task | m.Message | m.StatusUpdate | m.ArtifactUpdate) -> StreamResponse:
    kind = type(item)
    if kind is m.Task:
        assert isinstance(item, m.Task)
        return StreamResponse(task=task_out(item))
    if kind is m.Message:
        assert isinstance(item, m.Message)
        return StreamResponse(message=message_out(item))
    if kind is m.StatusUpdate:
        assert isinstance(item, m.StatusUpdate)
        return StreamResponse(
            status_update=TaskStatusUpdateEvent(
                task_id=item.task_id,
                context_id=item.context_id,
                status=status_out(item.status),
                metadata=item.metadata,
            )
        )
    assert isinstance(item, m.ArtifactUpdate)
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id=item.task_id,
            context_id=item.context_id,
            artifact=artifact_out(item.artifact),
            append=True if item.append else None,
            last_chunk=True if item.last_chunk else None,
            metadata=item.metadata,
        )
    )


# ------------------------------------------------------------------ push configs


def auth_in(w: AuthenticationInfo, *, request: bool) -> m.AuthInfo:
    if request and not w.scheme:
        raise WireError("scheme", "is required")
    return m.AuthInfo(schemes=[w.scheme] if w.scheme else [], credentials=w.credentials or None)


def auth_out(a: m.AuthInfo) -> AuthenticationInfo:
    # v1.0 names one scheme; the model keeps the v0.x list
    return AuthenticationInfo(scheme=a.schemes[0] if a.schemes else "", credentials=a.credentials)


def push_config_in(w: TaskPushNotificationConfig, *, request: bool) -> m.PushConfig:
    if request and not w.url:
        raise WireError("url", "is required")
    auth = None
    if w.authentication is not None:
        auth = field_in("authentication", lambda a: auth_in(a, request=request), w.authentication)
    return m.PushConfig(
        url=w.url or "",
        id=w.id or None,
        task_id=w.task_id or None,
        token=w.token or None,
        authentication=auth,
    )


def push_config_out(
    c: m.PushConfig, *, task_id: str | None = None, tenant: str | None = None
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        tenant=tenant,
        id=c.id,
        task_id=c.task_id or task_id,
        url=c.url,
        token=c.token,
        authentication=auth_out(c.authentication) if c.authentication is not None else None,
    )


# ---------------------------------------------------------------------- the card

# canonical flow key -> OAuthFlows member (Python name)
_FLOW_MEMBERS = ("authorization_code", "client_credentials", "implicit", "password", "device_code")


def _flow_out(key: str, f: m.OAuthFlow) -> OAuthFlows:
    scopes = dict(f.scopes)
    if key == "authorization_code":
        return OAuthFlows(
            authorization_code=AuthorizationCodeOAuthFlow(
                authorization_url=f.authorization_url or "",
                token_url=f.token_url or "",
                refresh_url=f.refresh_url,
                scopes=scopes,
                pkce_required=True if f.pkce_required else None,
            )
        )
    if key == "client_credentials":
        return OAuthFlows(
            client_credentials=ClientCredentialsOAuthFlow(
                token_url=f.token_url or "", refresh_url=f.refresh_url, scopes=scopes
            )
        )
    if key == "implicit":
        return OAuthFlows(
            implicit=ImplicitOAuthFlow(
                authorization_url=f.authorization_url, refresh_url=f.refresh_url, scopes=scopes
            )
        )
    if key == "password":
        return OAuthFlows(
            password=PasswordOAuthFlow(
                token_url=f.token_url, refresh_url=f.refresh_url, scopes=scopes
            )
        )
    return OAuthFlows(
        device_code=DeviceCodeOAuthFlow(
            device_authorization_url=f.device_authorization_url or "",
            token_url=f.token_url or "",
            refresh_url=f.refresh_url,
            scopes=scopes,
        )
    )


def _flows_in(w: OAuthFlows | None) -> dict[str, m.OAuthFlow]:
    flows: dict[str, m.OAuthFlow] = {}
    if w is None:
        return flows
    for key in _FLOW_MEMBERS:
        f = getattr(w, key)
        if f is None:
            continue
        flows[key] = m.OAuthFlow(
            scopes=dict(f.scopes or {}),
            authorization_url=getattr(f, "authorization_url", None) or None,
            token_url=getattr(f, "token_url", None) or None,
            refresh_url=f.refresh_url or None,
            device_authorization_url=getattr(f, "device_authorization_url", None) or None,
            pkce_required=bool(getattr(f, "pkce_required", False)),
        )
    return flows


def scheme_out(s: m.SecurityScheme) -> SecurityScheme:
    if isinstance(s, m.APIKeyScheme):
        return SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(
                description=s.description, location=s.location, name=s.name
            )
        )
    if isinstance(s, m.HTTPAuthScheme):
        return SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                description=s.description, scheme=s.scheme, bearer_format=s.bearer_format
            )
        )
    if isinstance(s, m.OAuth2Scheme):
        # v1.0 holds one flow (a oneof); the first known one of the model's is sent
        key = next((k for k in s.flows if k in _FLOW_MEMBERS), None)
        flows = _flow_out(key, s.flows[key]) if key is not None else OAuthFlows()
        return SecurityScheme(
            oauth2_security_scheme=OAuth2SecurityScheme(
                description=s.description, flows=flows, oauth2_metadata_url=s.metadata_url
            )
        )
    if isinstance(s, m.OpenIdConnectScheme):
        return SecurityScheme(
            open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                description=s.description, open_id_connect_url=s.url
            )
        )
    return SecurityScheme(mtls_security_scheme=MutualTlsSecurityScheme(description=s.description))


def scheme_in(w: SecurityScheme) -> m.SecurityScheme:
    members = [
        v
        for v in (
            w.api_key_security_scheme,
            w.http_auth_security_scheme,
            w.oauth2_security_scheme,
            w.open_id_connect_security_scheme,
            w.mtls_security_scheme,
        )
        if v is not None
    ]
    if len(members) != 1:
        raise WireError(
            "",
            "must hold exactly one of apiKeySecurityScheme, httpAuthSecurityScheme, "
            "oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme",
        )
    v = members[0]
    if isinstance(v, APIKeySecurityScheme):
        return m.APIKeyScheme(
            name=v.name or "", location=v.location or "", description=v.description or None
        )
    if isinstance(v, HTTPAuthSecurityScheme):
        return m.HTTPAuthScheme(
            scheme=v.scheme or "",
            bearer_format=v.bearer_format or None,
            description=v.description or None,
        )
    if isinstance(v, OAuth2SecurityScheme):
        return m.OAuth2Scheme(
            flows=_flows_in(v.flows),
            metadata_url=v.oauth2_metadata_url or None,
            description=v.description or None,
        )
    if isinstance(v, OpenIdConnectSecurityScheme):
        return m.OpenIdConnectScheme(
            url=v.open_id_connect_url or "", description=v.description or None
        )
    assert isinstance(v, MutualTlsSecurityScheme)
    return m.MutualTLSScheme(description=v.description or None)


def requirement_out(r: dict[str, list[str]]) -> SecurityRequirement:
    return SecurityRequirement(
        schemes={name: StringList(values=list(scopes)) for name, scopes in r.items()}
    )


def requirement_in(w: SecurityRequirement) -> dict[str, list[str]]:
    return {name: list(sl.values or []) for name, sl in (w.schemes or {}).items()}


def skill_out(s: m.AgentSkill) -> AgentSkill:
    return AgentSkill(
        id=s.id,
        name=s.name,
        description=s.description,
        tags=list(s.tags),
        examples=s.examples or None,
        input_modes=s.input_modes or None,
        output_modes=s.output_modes or None,
        security_requirements=[requirement_out(r) for r in s.security] if s.security else None,
    )


def skill_in(w: AgentSkill) -> m.AgentSkill:
    return m.AgentSkill(
        id=w.id or "",
        name=w.name or "",
        description=w.description or "",
        tags=list(w.tags or []),
        examples=w.examples or None,
        input_modes=w.input_modes or None,
        output_modes=w.output_modes or None,
        security=[requirement_in(r) for r in w.security_requirements]
        if w.security_requirements
        else None,
    )


def card_out(c: m.AgentCard) -> AgentCard:
    caps = c.capabilities
    return AgentCard(
        name=c.name,
        description=c.description,
        supported_interfaces=[
            AgentInterface(
                url=i.url,
                protocol_binding=i.binding,
                tenant=i.tenant,
                protocol_version=i.protocol_version,
            )
            for i in c.interfaces
        ],
        provider=AgentProvider(url=c.provider.url or "", organization=c.provider.organization)
        if c.provider is not None
        else None,
        version=c.version,
        documentation_url=c.documentation_url,
        capabilities=AgentCapabilities(
            streaming=caps.streaming,
            push_notifications=caps.push_notifications,
            extensions=[
                AgentExtension(
                    uri=e.uri,
                    description=e.description,
                    required=True if e.required else None,
                    params=e.params,
                )
                for e in caps.extensions
            ]
            or None,
            extended_agent_card=caps.extended_card,
        ),
        security_schemes={k: scheme_out(v) for k, v in c.security_schemes.items()} or None,
        security_requirements=[requirement_out(r) for r in c.security] or None,
        default_input_modes=list(c.default_input_modes),
        default_output_modes=list(c.default_output_modes),
        skills=[skill_out(s) for s in c.skills],
        signatures=[
            AgentCardSignature(protected=s.protected, signature=s.signature, header=s.header)
            for s in c.signatures
        ]
        or None,
        icon_url=c.icon_url,
    )


def card_in(w: AgentCard) -> m.AgentCard:
    caps = w.capabilities or AgentCapabilities()
    schemes = {
        name: field_in(f"securitySchemes.{name}", scheme_in, s)
        for name, s in (w.security_schemes or {}).items()
    }
    if w.security_requirements is not None:
        security = [requirement_in(r) for r in w.security_requirements]
    else:
        security = [{k: list(v) for k, v in r.items()} for r in w.security or []]
    card = m.AgentCard(
        name=w.name or "",
        description=w.description or "",
        version=w.version or "",
        interfaces=[
            m.AgentInterface(
                url=i.url or "",
                binding=i.protocol_binding or "JSONRPC",
                protocol_version=i.protocol_version or "1.0",
                tenant=i.tenant or None,
            )
            for i in w.supported_interfaces or []
        ],
        capabilities=m.AgentCapabilities(
            streaming=bool(caps.streaming),
            push_notifications=bool(caps.push_notifications),
            extended_card=bool(caps.extended_agent_card),
            extensions=[
                m.AgentExtension(
                    uri=e.uri or "",
                    description=e.description or None,
                    required=bool(e.required),
                    params=e.params,
                )
                for e in caps.extensions or []
            ],
        ),
        skills=[skill_in(s) for s in w.skills or []],
        provider=m.AgentProvider(
            organization=w.provider.organization or "", url=w.provider.url or None
        )
        if w.provider is not None
        else None,
        documentation_url=w.documentation_url or None,
        icon_url=w.icon_url or None,
        security_schemes=schemes,
        security=security,
        signatures=[
            m.CardSignature(
                protected=s.protected or "", signature=s.signature or "", header=s.header
            )
            for s in w.signatures or []
        ],
    )
    # absent lists keep the model's defaults (["text/plain"]); present ones are taken as they are
    if w.default_input_modes is not None:
        card.default_input_modes = list(w.default_input_modes)
    if w.default_output_modes is not None:
        card.default_output_modes = list(w.default_output_modes)
    return card


# ------------------------------------------------------------ the lenient path


@functools.cache
def _members(cls: type[msgspec.Struct]) -> dict[str, tuple[str, mi.Type]]:
    """Accepted member name (JSON name or snake_case proto name) -> (JSON name, type)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    table: dict[str, tuple[str, mi.Type]] = {}
    for f in info.fields:
        table[f.encode_name] = (f.encode_name, f.type)
    for f in info.fields:
        table.setdefault(f.name, (f.encode_name, f.type))
    return table


def relax(value: Any, cls: type[msgspec.Struct]) -> Any:
    """Rewrite a generic JSON document so that it converts into ``cls``.

    Walks the document along the Struct's schema only (metadata and data
    values are left alone): snake_case member names become JSON names (the
    JSON name wins when both are given) and unknown members are dropped.
    """
    if not isinstance(value, dict):
        return value
    table = _members(cls)
    out: dict[str, Any] = {}
    for key, item in value.items():
        entry = table.get(key)
        if entry is None:
            continue
        name, ftype = entry
        if key != name and name in value:
            continue
        out[name] = _relax(item, ftype)
    return out


def _relax(value: Any, t: mi.Type) -> Any:
    if isinstance(t, mi.StructType):
        return relax(value, t.cls)
    if isinstance(t, mi.ListType):
        return [_relax(v, t.item_type) for v in value] if isinstance(value, list) else value
    if isinstance(t, mi.DictType):
        if isinstance(value, dict):
            return {k: _relax(v, t.value_type) for k, v in value.items()}
        return value
    if isinstance(t, mi.UnionType):
        for member in t.types:
            if isinstance(member, mi.StructType | mi.DictType) and isinstance(value, dict):
                return _relax(value, member)
            if isinstance(member, mi.ListType) and isinstance(value, list):
                return _relax(value, member)
    return value
