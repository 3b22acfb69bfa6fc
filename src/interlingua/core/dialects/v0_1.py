"""The v0.1 JSON-RPC dialect (``tasks/send`` family, ``sessionId``, parts tagged ``type``).

v0.1 clients name their tasks: ``tasks/send`` carries the task ``id`` (and an
optional ``sessionId``), and the engine creates the task when it does not know
the id and continues it when it does (DIALECTS.md §i.32). Requests decode
straight from the params bytes into the Structs below (their parts, files and
push configs are the family's, ``_family_wire``) and the family's conversion
core (``_family``) does the rest; this module holds what v0.1 alone does.

What v0.1 cannot say, and what is sent instead (DIALECTS.md §b, §c, §i.17-18):

* ``rejected`` goes out as ``failed``, ``auth-required`` as ``input-required``;
* a send answered with a bare message goes out as a ``completed`` task (or,
  in a stream, a ``completed`` status event) whose status message it is;
* a ``Task`` in a stream (the snapshot a stream starts with) goes out as a
  status event of its current status; ``final`` is true on terminal and
  interrupted states;
* the artifact chunk flags go inside the artifact, next to its ``index``
  (the artifact's position in its task when it has none);
* non-object data parts are wrapped as ``{"value": X}`` with
  ``metadata.data_part_compat`` (the schema types ``data`` as an object), and
  non-object error ``data`` likewise as ``{"value": X}``;
* message ids, task/context ids on messages, extensions, media types of text
  and data parts, push config ids and ``accepted_output_modes`` are dropped;
  a send always blocks (v0.1 has no non-blocking form).

On input, messages get a fresh ``message_id`` (a ``messageId`` a newer peer
sends is kept), ``sessionId`` becomes the message's ``context_id``, artifacts
are named ``artifact-{index}``, and events (which carry no session) get
``context_id = ""``. Parts tagged ``kind`` instead of ``type`` are accepted.

The agent card helpers add the v0.1-only members (``authentication``) to the
hybrid card and read a v0.1 card.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeAlias

import msgspec
from msgspec import Meta, Struct

from .. import calls as c
from .. import model as m
from ..errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    InvalidTaskState,
    RateLimitExceeded,
    ResourceUnavailable,
    StreamingNotSupported,
    UnsupportedOperation,
    no_push_config,
)
from ..lifecycle import RETURN_STATES
from ..parts import get_text, new_id
from ._codes import V01_CODES
from ._common import (
    V03_ERROR_CLASSES,
    FieldError,
    decode_params,
    each_in,
    encode_error_member,
    field_in,
)
from ._common import at_root as _at
from ._family import DATA_COMPAT_KEY, FamilyCodec
from ._family_wire import (
    Metadata,
    NonEmptyStr,
    NonNegativeInt,
    Variant,
    Wire,
    build_wire,
)
from .base import StreamItem

__all__ = ["V01Codec", "decode_card_v01", "encode_card_v01"]

DIALECT = "0.1"

# JSON-RPC codes of v0.1 (its spec §8; DIALECTS.md §f.1) -> canonical error classes:
# v0.3's, except that -32006 and -32007 meant other things, and -32008...-32011 existed.
_ERRORS: dict[int, type[A2AError]] = {
    **V03_ERROR_CLASSES,
    -32006: StreamingNotSupported,
    -32007: AuthenticationRequired,
    -32008: AuthorizationFailed,
    -32009: InvalidTaskState,
    -32010: RateLimitExceeded,
    -32011: ResourceUnavailable,
}

VARIANT = Variant(
    name=DIALECT,
    label="A2A v0.1",
    methods={
        "send": "tasks/send",
        "stream": "tasks/sendSubscribe",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "resubscribe": "tasks/resubscribe",
        "push_set": "tasks/pushNotification/set",
        "push_get": "tasks/pushNotification/get",
    },
    part_tag="type",
    message_id_required=False,
    file_rule="at_most_one",
    # The schema says object; the spec's prose (and its §9.6 example) allows arrays.
    data_type=dict[str, Any] | list[Any],
    codes=V01_CODES,
    errors=_ERRORS,
)


# ------------------------------------------------------------------ v0.1's own objects
# Parts and files are the family's (tagged ``type``); the objects around them differ:
# messages without ids, artifacts known by ``index`` and carrying the chunk flags,
# tasks with ``sessionId``, events with the task ``id`` and no discriminator.


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
_STATE_OUT: dict[m.TaskState, WState] = {
    **{m.TaskState(w.value): w for w in WState},
    m.TaskState.AUTH_REQUIRED: WState.INPUT_REQUIRED,
    m.TaskState.REJECTED: WState.FAILED,
}
_STATE_IN: dict[WState, m.TaskState] = {w: m.TaskState(w.value) for w in WState}

_w = build_wire(VARIANT)
if TYPE_CHECKING:
    _Part: TypeAlias = Any
    _PushConfig: TypeAlias = Any
else:
    _Part = _w.TextPart | _w.FilePart | _w.DataPart
    _PushConfig = _w.PushConfig


class WMessage(Struct, omit_defaults=True):
    role: m.Role
    parts: Annotated[list[_Part], Meta(min_length=1)]
    metadata: Metadata | None = None
    # Not part of v0.1: read when a newer peer sends one (so retries keep their
    # id), never written.
    message_id: str | None = msgspec.field(default=None, name="messageId")


class WArtifact(Struct, rename="camel", omit_defaults=True, kw_only=True):
    name: str | None = None
    description: str | None = None
    parts: list[_Part]
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


class WStreamEvent(Struct, omit_defaults=True):
    """A status or an artifact event: v0.1 has no discriminator, so members tell them apart.

    ``final`` is optional in the schema (default false); status events always
    write it, as the spec's examples do.
    """

    id: str
    status: WStatus | None = None
    artifact: WArtifact | None = None
    final: bool | None = None
    metadata: Metadata | None = None


class WSendParams(Struct, rename="camel", omit_defaults=True, kw_only=True):
    """``TaskSendParams``: the client names the task (``id``) and, optionally, the session."""

    id: NonEmptyStr
    session_id: str | None = None
    message: WMessage
    push_notification: _PushConfig | None = None
    history_length: NonNegativeInt | None = None
    metadata: Metadata | None = None


class WTaskPushConfig(Struct, rename="camel"):
    """``TaskPushNotificationConfig``: params of ``set`` and result of ``set``/``get``.

    The config is required but may be ``null`` (spec §6.10: "might clear").
    """

    id: str
    push_notification_config: _PushConfig | None


_w.Message, _w.Artifact, _w.Status, _w.Task = WMessage, WArtifact, WStatus, WTask
_w.SendParams = WSendParams
_w.TaskPushConfig, _w.SendResult, _w.StreamItem = WTaskPushConfig, WTask, WStreamEvent


# -------------------------------------------------------------------------- the codec


class V01Codec(FamilyCodec):
    """JSON-RPC of A2A v0.1.0."""

    variant: ClassVar[Variant] = VARIANT
    wire: ClassVar[Wire] = _w
    lax: ClassVar[Wire] = _w
    versions = frozenset({DIALECT})
    # v0.1 callers name their tasks: no bare message answers, and a push config
    # set for a task is known by the task's id
    bare_replies = False
    push_config_id_is_task_id = True
    client_names_tasks = True  # (DIALECTS.md §a.2)
    # its stream events are a status or an artifact, never a task
    streams_tasks = False
    nearest = ("0.3", "1.0")
    context_field = "sessionId"  # (its message names none)

    def member_path(self, path: list[str]) -> list[str]:
        # a send's push config is its params' ``pushNotification``
        if path[:2] == ["configuration", "pushNotificationConfig"]:
            return ["pushNotification", *path[2:]]
        # its message names no context: the params' ``sessionId`` does
        if path == ["message", "contextId"]:
            return ["sessionId"]
        return path

    def encode_push_task(self, task: m.Task) -> bytes:
        # v0.1's webhook body: the task's status beside the whole task (DIALECTS.md §d.2)
        raw = self.encode_result(c.GetTask(id=task.id), task)
        doc: dict[str, Any] = {
            "eventType": "taskUpdate",
            "taskId": task.id,
            "status": msgspec.Raw(msgspec.json.encode(msgspec.json.decode(raw)["status"])),
        }
        message = task.status.message
        summary = get_text(message) if message is not None else ""
        if summary:
            doc["summary"] = summary
        doc["task"] = msgspec.Raw(raw)
        return msgspec.json.encode(doc)
    states_in: ClassVar[Mapping[Any, m.TaskState] | None] = _STATE_IN
    states_out: ClassVar[Mapping[m.TaskState, Any] | None] = _STATE_OUT

    # ------------------------------------------------------------ wire -> canonical

    def data_in(self, data: Any, meta: dict[str, Any] | None) -> m.DataPart:
        if meta is not None and DATA_COMPAT_KEY in meta:
            # The flag is ours, never user metadata: it is dropped, and a value
            # wrapped by a peer (or by us) is unwrapped.
            if meta[DATA_COMPAT_KEY] is True and isinstance(data, dict) and "value" in data:
                data = data["value"]
            meta = {k: v for k, v in meta.items() if k != DATA_COMPAT_KEY}
        # Empty metadata reads as none: our own wrapping may add and remove a key.
        return m.DataPart(data=data, metadata=meta or None)

    def message_in(
        self, w: Any, *, task_id: str | None = None, context_id: str | None = None
    ) -> m.Message:
        return m.Message(
            message_id=w.message_id or new_id(),
            role=w.role,
            parts=self.parts_in(w.parts),
            context_id=context_id,
            task_id=task_id,
            metadata=w.metadata,
        )

    def artifact_in(self, w: Any, position: int = 0) -> m.Artifact:
        """``position`` stands in for an absent ``index`` (the schema's default is 0)."""
        index = position if w.index is None else w.index
        return m.Artifact(
            artifact_id=f"artifact-{index}",
            parts=self.parts_in(w.parts),
            name=w.name,
            description=w.description,
            metadata=w.metadata,
            index=index,
        )

    def task_in(self, w: Any) -> m.Task:
        # Without an index, an artifact of a task is known by its position.
        positions = list(enumerate(w.artifacts or ()))
        return m.Task(
            id=w.id,
            context_id=w.session_id or "",
            status=field_in("status", self.status_in, w.status),
            artifacts=each_in("artifacts", positions, lambda ia: self.artifact_in(ia[1], ia[0])),
            history=each_in("history", w.history, self.message_in) if w.history else [],
            metadata=w.metadata,
        )

    def item_in(self, w: Any) -> m.StatusUpdate | m.ArtifactUpdate:
        if (w.status is None) == (w.artifact is None):
            raise FieldError([], "must hold exactly one of `status` or `artifact`")
        if w.status is not None:
            status = field_in("status", self.status_in, w.status)
            return m.StatusUpdate(task_id=w.id, context_id="", status=status, metadata=w.metadata)
        a = w.artifact
        return m.ArtifactUpdate(
            task_id=w.id,
            context_id="",
            artifact=field_in("artifact", self.artifact_in, a),
            append=bool(a.append),
            last_chunk=bool(a.last_chunk),
            metadata=w.metadata,
        )

    def push_config_in(self, w: Any, task_id: str | None) -> m.PushConfig:
        config = super().push_config_in(w, task_id)
        config.id = None  # v0.1 knows one config per task, without an id
        return config

    # ------------------------------------------------------------ canonical -> wire

    def message_out(self, msg: m.Message) -> Any:
        parts = [self.part_out(p) for p in msg.parts]
        return WMessage(role=msg.role, parts=parts, metadata=msg.metadata)

    def artifact_out(
        self, a: m.Artifact, position: int = 0, *, append: bool = False, last_chunk: bool = False
    ) -> Any:
        return WArtifact(
            name=a.name,
            description=a.description,
            parts=[self.part_out(p) for p in a.parts],
            index=position if a.index is None else a.index,
            append=True if append else None,
            last_chunk=True if last_chunk else None,
            metadata=a.metadata,
        )

    def task_out(self, t: m.Task) -> Any:
        arts = [self.artifact_out(a, i) for i, a in enumerate(t.artifacts)]
        return WTask(
            id=t.id,
            session_id=t.context_id or None,
            status=self.status_out(t.status),
            artifacts=arts or None,
            history=[self.message_out(h) for h in t.history] if t.history else None,
            metadata=t.metadata,
        )

    def push_config_out(self, config: m.PushConfig) -> Any:
        out = super().push_config_out(config)
        out.id = None  # v0.1 knows one config per task, without an id
        return out

    # ------------------------------------------------------------------ server side

    def wrap_bare_message(self, doc: dict[str, Any]) -> dict[str, Any]:
        return doc  # v0.1 params always name the task: a bare message is not a send

    def call_in_send(self, method: str, params: bytes | None) -> c.Call:
        w = decode_params(
            self.decoder(WSendParams), params, method=method, fallback=self._fallbacks[method]
        )
        try:
            # The task id goes in ``client_task_id`` only: the engine creates the
            # task when it does not know it (a message's own ``task_id`` must name
            # an existing task).
            message = self.message_in(w.message, context_id=w.session_id)
        except FieldError as exc:
            raise InvalidParams(
                f"Invalid params for {method}: {exc.describe('params.message')}"
            ) from None
        push = w.push_notification
        return c.SendMessage(
            message=message,
            config=c.SendConfig(
                history_length=w.history_length,
                push_config=self.push_config_in(push, None) if push is not None else None,
            ),
            metadata=w.metadata,
            streaming=method == self.variant.methods["stream"],
            client_task_id=w.id,
        )

    def call_in_push_set(self, method: str, params: bytes | None) -> c.Call:
        s = self.params_in(WTaskPushConfig, method, params)
        if not s.id:
            raise InvalidParams(f"Invalid params for {method}: `params.id` must not be empty")
        if s.push_notification_config is None:
            # The spec lets a server read null as "clear the config"; we keep configs.
            raise UnsupportedOperation(
                f"{method} with a null `params.pushNotificationConfig` (clearing) is not supported"
            )
        config = self.push_config_in(s.push_notification_config, s.id)
        return c.SetPushConfig(task_id=s.id, config=config)

    def call_in_push_get(self, method: str, params: bytes | None) -> c.Call:
        return c.GetPushConfig(task_id=self.params_in(_w.TaskIdParams, method, params).id)

    def encode_result(self, call: c.Call, result: c.Result) -> bytes:
        if isinstance(result, m.Task) and isinstance(
            call, (c.SendMessage, c.GetTask, c.CancelTask, c.SubscribeToTask)
        ):
            return msgspec.json.encode(self.task_out(result))
        if isinstance(result, m.Message) and isinstance(call, c.SendMessage):
            return msgspec.json.encode(self.task_out(_answer_task(result, call)))
        if isinstance(result, m.PushConfig) and isinstance(call, (c.SetPushConfig, c.GetPushConfig)):
            return msgspec.json.encode(
                WTaskPushConfig(
                    id=result.task_id or call.task_id,
                    push_notification_config=self.push_config_out(result),
                )
            )
        raise InternalError(
            f"Internal error: a {type(result).__name__} cannot answer "
            f"{type(call).__name__} in A2A v0.1"
        )

    def encode_error(self, error: A2AError) -> bytes:
        data = error.data
        if data is not None and not isinstance(data, dict):
            data = {"value": data}  # the schema's JSONRPCError.data is an object
        return encode_error_member(self.code_of(error), error.message, data)

    def encode_stream_item(self, item: Any) -> bytes:
        if isinstance(item, m.ArtifactUpdate):
            # v0.1 carries the chunk flags inside the artifact; an update without an
            # index (another dialect's) goes out as the schema's default, 0.
            a = self.artifact_out(item.artifact, append=item.append, last_chunk=item.last_chunk)
            return msgspec.json.encode(
                WStreamEvent(id=item.task_id, artifact=a, metadata=item.metadata)
            )
        metadata = None
        if isinstance(item, m.StatusUpdate):
            task_id, status, metadata = item.task_id, item.status, item.metadata
        elif isinstance(item, m.Task):
            task_id, status = item.id, item.status
        else:
            task_id, status = item.task_id or "", m.TaskStatus(m.TaskState.COMPLETED, message=item)
        # the last status event of a stream says so (DIALECTS.md §i.17)
        final = status.state in RETURN_STATES
        return msgspec.json.encode(WStreamEvent(
            id=task_id, status=self.status_out(status), final=final, metadata=metadata
        ))

    # ------------------------------------------------------------------ client side

    def send_params_out(self, call: c.SendMessage) -> Any:
        msg = call.message
        c = call.config
        return WSendParams(
            # v0.1 clients make the task id (DIALECTS.md §a.2)
            id=msg.task_id or call.client_task_id or new_id(),
            session_id=msg.context_id,
            message=self.message_out(msg),
            push_notification=self.push_config_out(c.push_config) if c.push_config else None,
            history_length=c.history_length,
            metadata=call.metadata,
        )

    def params_out(self, call: c.Call) -> Any:
        if isinstance(call, c.SetPushConfig):
            config = self.push_config_out(call.config)
            return WTaskPushConfig(id=call.task_id, push_notification_config=config)
        if isinstance(call, c.GetPushConfig):
            # one config per task in v0.1, named by the task: another id is told
            # apart once answered (``result_in``), the agent's own refusals first
            return _w.TaskIdParams(id=call.task_id)
        return super().params_out(call)

    def stream_item_in(self, data: bytes) -> StreamItem:
        if _TASK_MEMBERS.search(data) is not None:
            doc = self.decoder(Any).decode(data)
            if isinstance(doc, dict) and not _TASK_ONLY.isdisjoint(doc):
                # a whole task as an event (python-a2a streams those): read as a task
                return self.task_in(self.read_result(WTask, data))
        return super().stream_item_in(data)

    def result_in(self, call: c.Call, data: bytes) -> c.Result:
        if isinstance(call, (c.SendMessage, c.GetTask, c.CancelTask, c.SubscribeToTask)):
            return self.task_in(self.read_result(WTask, data))
        if isinstance(call, (c.SetPushConfig, c.GetPushConfig)):
            tp = self.read_result(WTaskPushConfig, data)
            task_id = tp.id or call.task_id
            if isinstance(call, c.GetPushConfig) and call.config_id \
                    and call.config_id != call.task_id:
                # a config the task has not, in v0.1's words: TaskNotFound as the
                # agent says it in the other dialects (docs/push.md), never its one
                raise no_push_config(call.task_id, call.config_id)
            if tp.push_notification_config is None:
                return None  # spec §6.10: no (or a cleared) config
            config = self.push_config_in(tp.push_notification_config, task_id)
            config.id = task_id  # a v0.1 config is named by its task (docs/push.md)
            return config
        raise self.unsupported(call)


# Members a task has and a v0.1 stream event has not: cheap on the bytes, then checked
# at the top level.
_TASK_MEMBERS = re.compile(rb'"(?:sessionId|artifacts|history)"\s*:')
_TASK_ONLY = frozenset({"sessionId", "artifacts", "history"})


def _answer_task(message: m.Message, call: c.SendMessage) -> m.Task:
    """A send answered with a bare message, as the task v0.1 must answer with."""
    sent = call.message
    return m.Task(
        id=message.task_id or sent.task_id or call.client_task_id or "",
        context_id=message.context_id or sent.context_id or "",
        status=m.TaskStatus(state=m.TaskState.COMPLETED, message=message),
    )


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



# ----------------------------------------------------------------------------- cards

# Canonical HTTP auth scheme -> the name v0.1 cards use (spec §4.3: OpenAPI names).
_HTTP_NAMES = {"bearer": "Bearer", "basic": "Basic", "digest": "Digest"}


def _scheme_name(s: m.SecurityScheme) -> str:
    if isinstance(s, m.HTTPAuthScheme):
        return _HTTP_NAMES.get(s.scheme.lower(), s.scheme)
    if isinstance(s, m.APIKeyScheme):
        return "ApiKey"
    if isinstance(s, m.OAuth2Scheme):
        return "OAuth2"
    if isinstance(s, m.OpenIdConnectScheme):
        return "OpenIdConnect"
    return "mTLS"


def encode_card_v01(card: m.AgentCard, *, url: str) -> dict[str, Any]:
    """The members a v0.1 client needs beyond the v0.3 rendering of ``card``.

    ``url`` is the JSON-RPC endpoint v0.1 clients post to (the hybrid card's
    ``url``); ``authentication.schemes`` names the card's security schemes
    the way v0.1 does ("Bearer", "Basic", "ApiKey", "OAuth2", "OpenIdConnect",
    "mTLS") and is left out when there are none; ``capabilities`` holds
    ``stateTransitionHistory``. Deep-merge the result into the card document
    (a shallow update would replace its ``capabilities``). No ``credentials``
    are written: the spec forbids secrets there and one string cannot describe
    several schemes.
    """
    doc: dict[str, Any] = {
        "url": url,
        "capabilities": {"stateTransitionHistory": card.capabilities.state_transition_history},
    }
    names: list[str] = []
    for scheme in card.security_schemes.values():
        name = _scheme_name(scheme)
        if name not in names:
            names.append(name)
    if names:
        doc["authentication"] = {"schemes": names}
    return doc


def decode_card_v01(doc: Any) -> m.AgentCard:
    """A v0.1 card document -> the canonical card, with one v0.1 JSON-RPC interface.

    ``authentication.schemes`` become security schemes (any one of them
    satisfies the card's requirements); scheme details are read from
    ``credentials`` when it is a JSON object (``in``/``name`` for ApiKey,
    ``authorizationUrl``/``tokenUrl``/``scopes`` for OAuth2,
    ``openIdConnectUrl``). Raises ``InvalidAgentResponse`` naming a bad field.
    """
    if not isinstance(doc, dict):
        raise InvalidAgentResponse("Invalid agent card: not a JSON object")
    try:
        w = msgspec.convert(doc, WCard)
    except msgspec.ValidationError as exc:
        raise InvalidAgentResponse(f"Invalid agent card: {_at(str(exc), 'card')}") from None
    except RecursionError:
        raise InvalidAgentResponse("Invalid agent card: nested too deeply") from None
    caps = w.capabilities
    schemes = _schemes_in(w.authentication) if w.authentication is not None else {}
    card = m.AgentCard(
        name=w.name,
        description=w.description or "",
        version=w.version or "",
        interfaces=[m.AgentInterface(url=w.url, binding="JSONRPC", protocol_version=DIALECT)],
        capabilities=m.AgentCapabilities(
            streaming=bool(caps and caps.streaming),
            push_notifications=bool(caps and caps.push_notifications),
            state_transition_history=bool(caps and caps.state_transition_history),
        ),
        skills=[
            m.AgentSkill(
                id=s.id,
                name=s.name,
                description=s.description or "",
                tags=s.tags or [],
                examples=s.examples,
                input_modes=s.input_modes,
                output_modes=s.output_modes,
            )
            for s in w.skills or ()
        ],
        provider=(
            m.AgentProvider(organization=w.provider.organization, url=w.provider.url or None)
            if w.provider is not None
            else None
        ),
        documentation_url=w.documentation_url,
        security_schemes=schemes,
        security=[{name: []} for name in schemes],
    )
    if w.default_input_modes is not None:
        card.default_input_modes = w.default_input_modes
    if w.default_output_modes is not None:
        card.default_output_modes = w.default_output_modes
    return card


def _credentials(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _str(details: dict[str, Any], key: str) -> str | None:
    value = details.get(key)
    return value if isinstance(value, str) and value else None


def _oauth_flows(details: dict[str, Any]) -> dict[str, m.OAuthFlow]:
    auth_url = _str(details, "authorizationUrl")
    token_url = _str(details, "tokenUrl")
    scopes = details.get("scopes")
    flow = m.OAuthFlow(
        scopes={str(k): str(v) for k, v in scopes.items()} if isinstance(scopes, dict) else {},
        authorization_url=auth_url,
        token_url=token_url,
        refresh_url=_str(details, "refreshUrl"),
    )
    if auth_url and token_url:
        return {"authorization_code": flow}
    if token_url:
        return {"client_credentials": flow}
    if auth_url:
        return {"implicit": flow}
    return {}


def _schemes_in(auth: WAuthentication) -> dict[str, m.SecurityScheme]:
    details = _credentials(auth.credentials)
    out: dict[str, m.SecurityScheme] = {}
    for name in auth.schemes:
        key = name.lower().replace("-", "").replace("_", "")
        scheme: m.SecurityScheme
        if key in ("bearer", "basic", "digest"):
            scheme = m.HTTPAuthScheme(scheme=key)
        elif key == "apikey":
            location = details.get("in")
            scheme = m.APIKeyScheme(
                # spec §4.3's example header when the card does not name one
                name=_str(details, "name") or "X-API-Key",
                location=location if location in ("header", "query", "cookie") else "header",
            )
        elif key in ("oauth2", "oauth"):
            scheme = m.OAuth2Scheme(flows=_oauth_flows(details))
        elif key in ("openidconnect", "oidc"):
            scheme = m.OpenIdConnectScheme(url=_str(details, "openIdConnectUrl") or "")
        elif key in ("mtls", "mutualtls"):
            scheme = m.MutualTLSScheme()
        else:
            scheme = m.HTTPAuthScheme(scheme=name)  # another HTTP scheme, as named
        out.setdefault(name, scheme)
    return out
