"""The canonical, version-neutral A2A model.

Every dialect codec decodes into these types and encodes from them; nothing in
here is spelled the way any one wire version spells it. Field names are Python
names; enums carry neutral lowercase values. The union tags (``kind``) exist
only so the store can persist these objects with msgspec — they are never sent
on the wire as such.

The model is a superset: v1.0 semantics plus the few v0.1 fields needed to
round-trip (artifact ``index``; v0.1 chunking flags live on the update event).
"""

from __future__ import annotations

import enum
from typing import Any, TypeAlias

import msgspec

__all__ = [
    "TERMINAL_STATES",
    "APIKeyScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "Artifact",
    "ArtifactUpdate",
    "AuthInfo",
    "CardSignature",
    "DataPart",
    "Event",
    "FilePart",
    "HTTPAuthScheme",
    "HistoryAppended",
    "Message",
    "MutualTLSScheme",
    "OAuth2Scheme",
    "OAuthFlow",
    "OpenIdConnectScheme",
    "Part",
    "PushConfig",
    "Role",
    "SecurityScheme",
    "StatusUpdate",
    "Task",
    "TaskCreated",
    "TaskState",
    "TaskStatus",
    "TextPart",
]

Metadata: TypeAlias = dict[str, Any]


class Role(enum.Enum):
    USER = "user"
    AGENT = "agent"

    # Members are singletons, so identity hashing is exact; Enum's own
    # __hash__ is a Python-level call on every set or dict lookup.
    __hash__ = object.__hash__


class TaskState(enum.Enum):
    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    AUTH_REQUIRED = "auth-required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    REJECTED = "rejected"
    UNKNOWN = "unknown"

    __hash__ = object.__hash__


TERMINAL_STATES = frozenset(
    {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}
)


# --------------------------------------------------------------------------- parts
# Tasks, messages, parts and events are trees (no reference cycles), and a busy
# server holds millions of them: ``gc=False`` keeps them out of the cycle
# collector, whose full passes otherwise grow with every stored event.


class TextPart(msgspec.Struct, gc=False, tag="text", tag_field="kind", omit_defaults=True):
    text: str
    metadata: Metadata | None = None
    media_type: str | None = None
    filename: str | None = None


class FilePart(msgspec.Struct, gc=False, tag="file", tag_field="kind", omit_defaults=True):
    """A file given inline (``raw``) or by reference (``uri``).

    v0.1 allows both to be absent; later versions require exactly one. The
    codecs enforce what their version requires.
    """

    raw: bytes | None = None
    uri: str | None = None
    media_type: str | None = None
    filename: str | None = None
    metadata: Metadata | None = None


class DataPart(msgspec.Struct, gc=False, tag="data", tag_field="kind", omit_defaults=True):
    """Structured data: any JSON value (v1.0); v0.2/v0.3 can carry objects only."""

    data: Any
    metadata: Metadata | None = None
    media_type: str | None = None
    filename: str | None = None


Part: TypeAlias = TextPart | FilePart | DataPart


# ------------------------------------------------------------------------ messages


class Message(msgspec.Struct, gc=False, omit_defaults=True):
    message_id: str
    role: Role
    parts: list[Part]
    context_id: str | None = None
    task_id: str | None = None
    reference_task_ids: list[str] | None = None
    extensions: list[str] | None = None
    metadata: Metadata | None = None


class Artifact(msgspec.Struct, gc=False, omit_defaults=True):
    artifact_id: str
    parts: list[Part]
    name: str | None = None
    description: str | None = None
    metadata: Metadata | None = None
    extensions: list[str] | None = None
    # v0.1 identifies artifacts by position; kept so v0.1 peers round-trip.
    index: int | None = None


class TaskStatus(msgspec.Struct, gc=False, omit_defaults=True):
    state: TaskState
    message: Message | None = None
    # RFC 3339 UTC with milliseconds and "Z"; normalized by the codecs.
    timestamp: str | None = None


class Task(msgspec.Struct, gc=False, omit_defaults=True):
    id: str
    context_id: str
    status: TaskStatus
    artifacts: list[Artifact] = msgspec.field(default_factory=list)
    history: list[Message] = msgspec.field(default_factory=list)
    metadata: Metadata | None = None
    #: A2A 1.1's task generation: 1 at creation, +1 for every status or artifact
    #: event (``core/generation.py``); 0 = not known (a log written before)
    generation: int = 0


# -------------------------------------------------------------------------- events
# Everything that happens to a task is one of these, appended to its log.


class TaskCreated(msgspec.Struct, gc=False, tag="created", tag_field="kind", omit_defaults=True):
    """First entry of every log: the task as it was created (state ``submitted``)."""

    task: Task


class StatusUpdate(msgspec.Struct, gc=False, tag="status", tag_field="kind", omit_defaults=True):
    task_id: str
    context_id: str
    status: TaskStatus
    metadata: Metadata | None = None
    #: the task's generation after this event (0: not known)
    generation: int = 0


class ArtifactUpdate(msgspec.Struct, gc=False, tag="artifact", tag_field="kind", omit_defaults=True):
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: Metadata | None = None
    #: the task's generation after this event (0: not known)
    generation: int = 0


class HistoryAppended(msgspec.Struct, gc=False, tag="history", tag_field="kind", omit_defaults=True):
    """A message added to the task's history (a user's continuation, say)."""

    message: Message


Event: TypeAlias = TaskCreated | StatusUpdate | ArtifactUpdate | HistoryAppended


# ---------------------------------------------------------------- push notifications


class AuthInfo(msgspec.Struct, omit_defaults=True):
    """How the agent authenticates to a webhook: ``Authorization: {scheme} {credentials}``."""

    schemes: list[str]
    credentials: str | None = None


class PushConfig(msgspec.Struct, omit_defaults=True):
    url: str
    id: str | None = None
    task_id: str | None = None
    token: str | None = None
    authentication: AuthInfo | None = None


# ------------------------------------------------------------------------- the card


class AgentProvider(msgspec.Struct, omit_defaults=True):
    organization: str
    url: str | None = None


class AgentExtension(msgspec.Struct, omit_defaults=True):
    uri: str
    description: str | None = None
    required: bool = False
    params: Metadata | None = None


class AgentCapabilities(msgspec.Struct, omit_defaults=True):
    streaming: bool = False
    push_notifications: bool = False
    extended_card: bool = False
    state_transition_history: bool = False
    extensions: list[AgentExtension] = msgspec.field(default_factory=list)


class AgentInterface(msgspec.Struct, omit_defaults=True):
    """One endpoint: ``binding`` is ``JSONRPC``, ``HTTP+JSON`` or ``GRPC``."""

    url: str
    binding: str = "JSONRPC"
    protocol_version: str = "1.0"
    tenant: str | None = None


class OAuthFlow(msgspec.Struct, omit_defaults=True):
    scopes: dict[str, str] = msgspec.field(default_factory=dict)
    authorization_url: str | None = None
    token_url: str | None = None
    refresh_url: str | None = None
    device_authorization_url: str | None = None
    pkce_required: bool = False


class APIKeyScheme(msgspec.Struct, tag="apiKey", tag_field="type", omit_defaults=True):
    name: str
    location: str  # "header" | "query" | "cookie"
    description: str | None = None


class HTTPAuthScheme(msgspec.Struct, tag="http", tag_field="type", omit_defaults=True):
    scheme: str  # "bearer" | "basic" | ...
    bearer_format: str | None = None
    description: str | None = None


class OAuth2Scheme(msgspec.Struct, tag="oauth2", tag_field="type", omit_defaults=True):
    # keys: authorization_code, client_credentials, implicit, password, device_code
    flows: dict[str, OAuthFlow]
    metadata_url: str | None = None
    description: str | None = None


class OpenIdConnectScheme(msgspec.Struct, tag="openIdConnect", tag_field="type", omit_defaults=True):
    url: str
    description: str | None = None


class MutualTLSScheme(msgspec.Struct, tag="mutualTLS", tag_field="type", omit_defaults=True):
    description: str | None = None


SecurityScheme: TypeAlias = (
    APIKeyScheme | HTTPAuthScheme | OAuth2Scheme | OpenIdConnectScheme | MutualTLSScheme
)


class AgentSkill(msgspec.Struct, omit_defaults=True):
    id: str
    name: str
    description: str = ""
    tags: list[str] = msgspec.field(default_factory=list)
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None
    # Each requirement maps a scheme name to the scopes it needs.
    security: list[dict[str, list[str]]] | None = None


class CardSignature(msgspec.Struct, omit_defaults=True):
    protected: str
    signature: str
    header: Metadata | None = None


class AgentCard(msgspec.Struct, omit_defaults=True):
    name: str
    description: str
    version: str
    interfaces: list[AgentInterface]
    capabilities: AgentCapabilities = msgspec.field(default_factory=AgentCapabilities)
    skills: list[AgentSkill] = msgspec.field(default_factory=list)
    default_input_modes: list[str] = msgspec.field(default_factory=lambda: ["text/plain"])
    default_output_modes: list[str] = msgspec.field(default_factory=lambda: ["text/plain"])
    provider: AgentProvider | None = None
    documentation_url: str | None = None
    icon_url: str | None = None
    security_schemes: dict[str, SecurityScheme] = msgspec.field(default_factory=dict)
    security: list[dict[str, list[str]]] = msgspec.field(default_factory=list)
    signatures: list[CardSignature] = msgspec.field(default_factory=list)
