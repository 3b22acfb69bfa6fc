"""The v0.1 JSON-RPC dialect (``tasks/send`` family, ``sessionId``, parts tagged ``type``).

v0.1 clients name their tasks: ``tasks/send`` carries the task ``id`` (and an
optional ``sessionId``), and the engine creates the task when it does not know
the id and continues it when it does (DIALECTS.md §i.32). Requests decode
straight from the params bytes into the Structs of ``_v01_wire`` and from there
into canonical calls; results are encoded from wire Structs built from the
canonical objects.

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

import json
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import msgspec

from ..calls import (
    Call,
    CancelTask,
    GetPushConfig,
    GetTask,
    Result,
    SendConfig,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from ..errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    ContentTypeNotSupported,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    InvalidRequest,
    InvalidTaskState,
    MethodNotFound,
    ParseError,
    PushNotSupported,
    RateLimitExceeded,
    ResourceUnavailable,
    StreamingNotSupported,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)
from ..lifecycle import RETURN_STATES
from ..model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeyScheme,
    ArtifactUpdate,
    HTTPAuthScheme,
    Message,
    MutualTLSScheme,
    OAuth2Scheme,
    OAuthFlow,
    OpenIdConnectScheme,
    PushConfig,
    SecurityScheme,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
)
from ..parts import new_id
from ._common import at_root as _at
from ._common import decode_error_member, decode_params, encode_error_member
from ._v01_wire import (
    WAuthentication,
    WCard,
    WireError,
    WSendParams,
    WStreamEvent,
    WTask,
    WTaskIdParams,
    WTaskPushConfig,
    WTaskQuery,
    artifact_event_out,
    message_in,
    message_out,
    push_config_in,
    push_config_out,
    status_event_out,
    stream_event_in,
    task_in,
    task_out,
)
from .base import Codec, StreamItem

__all__ = ["V01Codec", "decode_card_v01", "encode_card_v01"]

T = TypeVar("T")

DIALECT = "0.1"

SEND = "tasks/send"
SEND_SUBSCRIBE = "tasks/sendSubscribe"
GET = "tasks/get"
CANCEL = "tasks/cancel"
RESUBSCRIBE = "tasks/resubscribe"
PUSH_SET = "tasks/pushNotification/set"
PUSH_GET = "tasks/pushNotification/get"

_encoder = msgspec.json.Encoder()
_any = msgspec.json.Decoder()

_send_params = msgspec.json.Decoder(WSendParams)
_task_query = msgspec.json.Decoder(WTaskQuery)
_task_id_params = msgspec.json.Decoder(WTaskIdParams)
_task_push = msgspec.json.Decoder(WTaskPushConfig)

_task = msgspec.json.Decoder(WTask)
_stream_event = msgspec.json.Decoder(WStreamEvent)

# JSON-RPC codes of v0.1 (its spec §8; DIALECTS.md §f.1) -> canonical error classes.
# -32006...-32011 mean other things in later versions.
_ERRORS: dict[int, type[A2AError]] = {
    -32700: ParseError,
    -32600: InvalidRequest,
    -32601: MethodNotFound,
    -32602: InvalidParams,
    -32603: InternalError,
    -32001: TaskNotFound,
    -32002: TaskNotCancelable,
    -32003: PushNotSupported,
    -32004: UnsupportedOperation,
    -32005: ContentTypeNotSupported,
    -32006: StreamingNotSupported,
    -32007: AuthenticationRequired,
    -32008: AuthorizationFailed,
    -32009: InvalidTaskState,
    -32010: RateLimitExceeded,
    -32011: ResourceUnavailable,
}


# ------------------------------------------------------------------ lenient reading

_NESTED = ("message", "status", "history", "artifacts", "artifact")


def _retag(doc: Any) -> None:
    """Give parts tagged ``kind`` (v0.2 style) the ``type`` v0.1 reads."""
    if isinstance(doc, list):
        for item in doc:
            _retag(item)
    elif isinstance(doc, dict):
        parts = doc.get("parts")
        if isinstance(parts, list):
            for part in parts:
                if (
                    isinstance(part, dict)
                    and "type" not in part
                    and isinstance(part.get("kind"), str)
                ):
                    part["type"] = part["kind"]
        for key in _NESTED:
            if key in doc:
                _retag(doc[key])


def _send_fallback(method: str) -> Callable[[Any], WSendParams]:
    def fallback(doc: Any) -> WSendParams:
        if not isinstance(doc, dict):
            raise InvalidParams(f"Invalid params for {method}: params must be a JSON object")
        _retag(doc)
        try:
            return msgspec.convert(doc, WSendParams)
        except msgspec.ValidationError as exc:
            raise InvalidParams(f"Invalid params for {method}: {_at(str(exc), 'params')}") from None

    return fallback


_SEND_FALLBACKS = {SEND: _send_fallback(SEND), SEND_SUBSCRIBE: _send_fallback(SEND_SUBSCRIBE)}


def _read_result(decoder: msgspec.json.Decoder[T], data: bytes, typ: Any) -> T:
    """Decode a peer's result; on a shape error retry leniently, else InvalidAgentResponse."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        first = exc
    except msgspec.DecodeError as exc:
        raise InvalidAgentResponse(f"Invalid agent response: result is not JSON: {exc}") from None
    try:
        doc = _any.decode(data)
    except msgspec.DecodeError as exc:
        raise InvalidAgentResponse(f"Invalid agent response: result is not JSON: {exc}") from None
    _retag(doc)
    try:
        result: T = msgspec.convert(doc, typ)
    except msgspec.ValidationError:
        raise InvalidAgentResponse(f"Invalid agent response: {_at(str(first), 'result')}") from None
    return result


def _agent_fault(exc: WireError) -> InvalidAgentResponse:
    return InvalidAgentResponse(f"Invalid agent response: {exc.describe('result')}")


# -------------------------------------------------------------------------- the codec


class V01Codec(Codec):
    """JSON-RPC of A2A v0.1.0."""

    name: ClassVar[str] = DIALECT
    methods: ClassVar[frozenset[str]] = frozenset(
        {SEND, SEND_SUBSCRIBE, GET, CANCEL, RESUBSCRIBE, PUSH_SET, PUSH_GET}
    )
    streaming_methods: ClassVar[frozenset[str]] = frozenset({SEND_SUBSCRIBE, RESUBSCRIBE})

    # ---------------------------------------------------------------- server side

    def decode_call(self, method: str, params: bytes | None) -> Call:
        try:
            return _decode_call(method, params)
        except RecursionError:
            raise InvalidParams(f"Invalid params for {method}: nested too deeply") from None

    def encode_result(self, call: Call, result: Result) -> bytes:
        if isinstance(result, Task) and isinstance(
            call, (SendMessage, GetTask, CancelTask, SubscribeToTask)
        ):
            return _encoder.encode(task_out(result))
        if isinstance(result, Message) and isinstance(call, SendMessage):
            return _encoder.encode(task_out(_answer_task(result, call)))
        if isinstance(result, PushConfig) and isinstance(call, (SetPushConfig, GetPushConfig)):
            return _encoder.encode(
                WTaskPushConfig(
                    id=result.task_id or call.task_id,
                    push_notification_config=push_config_out(result),
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
        return encode_error_member(error.code_for(DIALECT), error.message, data)

    def encode_stream_item(self, item: StreamItem) -> bytes:
        if isinstance(item, StatusUpdate):
            # the last status event of a stream says so (DIALECTS.md §i.17)
            final = item.status.state in RETURN_STATES
            return _encoder.encode(
                status_event_out(item.task_id, item.status, final, item.metadata)
            )
        if isinstance(item, ArtifactUpdate):
            return _encoder.encode(artifact_event_out(item))
        if isinstance(item, Task):
            final = item.status.state in RETURN_STATES
            return _encoder.encode(status_event_out(item.id, item.status, final))
        status = TaskStatus(state=TaskState.COMPLETED, message=item)
        return _encoder.encode(status_event_out(item.task_id or "", status, True))

    # ---------------------------------------------------------------- client side

    def encode_call(self, call: Call) -> tuple[str, bytes]:
        if isinstance(call, SendMessage):
            return (SEND_SUBSCRIBE if call.streaming else SEND), _encoder.encode(
                _send_params_out(call)
            )
        if isinstance(call, GetTask):
            return GET, _encoder.encode(WTaskQuery(id=call.id, history_length=call.history_length))
        if isinstance(call, CancelTask):
            return CANCEL, _encoder.encode(WTaskIdParams(id=call.id, metadata=call.metadata))
        if isinstance(call, SubscribeToTask):
            return RESUBSCRIBE, _encoder.encode(
                WTaskQuery(id=call.id, history_length=call.history_length)
            )
        if isinstance(call, SetPushConfig):
            return PUSH_SET, _encoder.encode(
                WTaskPushConfig(
                    id=call.task_id, push_notification_config=push_config_out(call.config)
                )
            )
        if isinstance(call, GetPushConfig):
            # one config per task in v0.1: a config id has nothing to select
            return PUSH_GET, _encoder.encode(WTaskIdParams(id=call.task_id))
        raise UnsupportedOperation(f"{type(call).__name__} has no counterpart in A2A v0.1")

    def decode_result(self, call: Call, result: bytes) -> Result:
        try:
            return _decode_result(call, result)
        except WireError as exc:
            raise _agent_fault(exc) from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def decode_stream_item(self, result: bytes) -> StreamItem:
        try:
            return stream_event_in(_read_result(_stream_event, result, WStreamEvent))
        except WireError as exc:
            raise _agent_fault(exc) from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def decode_error(self, error: Any) -> A2AError:
        return decode_error_member(error, _ERRORS)


# ------------------------------------------------------------------------- requests


def _decode_call(method: str, params: bytes | None) -> Call:
    if method == SEND or method == SEND_SUBSCRIBE:
        return _decode_send(method, params)
    if method == GET:
        q = decode_params(_task_query, params, method=method)
        return GetTask(id=q.id, history_length=q.history_length)
    if method == CANCEL:
        c = decode_params(_task_id_params, params, method=method)
        return CancelTask(id=c.id, metadata=c.metadata)
    if method == RESUBSCRIBE:
        r = decode_params(_task_query, params, method=method)
        return SubscribeToTask(id=r.id, history_length=r.history_length)
    if method == PUSH_SET:
        s = decode_params(_task_push, params, method=method)
        if not s.id:
            raise InvalidParams(f"Invalid params for {method}: `params.id` must not be empty")
        if s.push_notification_config is None:
            # The spec lets a server read null as "clear the config"; we keep configs.
            raise UnsupportedOperation(
                f"{method} with a null `params.pushNotificationConfig` (clearing) is not supported"
            )
        return SetPushConfig(task_id=s.id, config=push_config_in(s.push_notification_config, s.id))
    if method == PUSH_GET:
        g = decode_params(_task_id_params, params, method=method)
        return GetPushConfig(task_id=g.id)
    raise MethodNotFound(f"Method not found: {method}")


def _decode_send(method: str, params: bytes | None) -> SendMessage:
    w = decode_params(_send_params, params, method=method, fallback=_SEND_FALLBACKS[method])
    try:
        # The task id goes in ``client_task_id`` only: the engine creates the
        # task when it does not know it (a message's own ``task_id`` must name
        # an existing task).
        message = message_in(w.message, context_id=w.session_id)
    except WireError as exc:
        raise InvalidParams(
            f"Invalid params for {method}: {exc.describe('params.message')}"
        ) from None
    push = w.push_notification
    return SendMessage(
        message=message,
        config=SendConfig(
            history_length=w.history_length,
            push_config=push_config_in(push, None) if push is not None else None,
        ),
        metadata=w.metadata,
        streaming=method == SEND_SUBSCRIBE,
        client_task_id=w.id,
    )


def _send_params_out(call: SendMessage) -> WSendParams:
    m = call.message
    c = call.config
    return WSendParams(
        # v0.1 clients make the task id (DIALECTS.md §a.2)
        id=m.task_id or call.client_task_id or new_id(),
        session_id=m.context_id,
        message=message_out(m),
        push_notification=push_config_out(c.push_config) if c.push_config is not None else None,
        history_length=c.history_length,
        metadata=call.metadata,
    )


def _answer_task(message: Message, call: SendMessage) -> Task:
    """A send answered with a bare message, as the task v0.1 must answer with."""
    sent = call.message
    return Task(
        id=message.task_id or sent.task_id or call.client_task_id or "",
        context_id=message.context_id or sent.context_id or "",
        status=TaskStatus(state=TaskState.COMPLETED, message=message),
    )


# -------------------------------------------------------------------------- results


def _decode_result(call: Call, data: bytes) -> Result:
    if isinstance(call, (SendMessage, GetTask, CancelTask, SubscribeToTask)):
        return task_in(_read_result(_task, data, WTask))
    if isinstance(call, (SetPushConfig, GetPushConfig)):
        tp = _read_result(_task_push, data, WTaskPushConfig)
        if tp.push_notification_config is None:
            return None  # spec §6.10: no (or a cleared) config
        return push_config_in(tp.push_notification_config, tp.id or call.task_id)
    raise UnsupportedOperation(f"{type(call).__name__} has no counterpart in A2A v0.1")


# ----------------------------------------------------------------------------- cards

# Canonical HTTP auth scheme -> the name v0.1 cards use (spec §4.3: OpenAPI names).
_HTTP_NAMES = {"bearer": "Bearer", "basic": "Basic", "digest": "Digest"}


def _scheme_name(s: SecurityScheme) -> str:
    if isinstance(s, HTTPAuthScheme):
        return _HTTP_NAMES.get(s.scheme.lower(), s.scheme)
    if isinstance(s, APIKeyScheme):
        return "ApiKey"
    if isinstance(s, OAuth2Scheme):
        return "OAuth2"
    if isinstance(s, OpenIdConnectScheme):
        return "OpenIdConnect"
    return "mTLS"


def encode_card_v01(card: AgentCard, *, url: str) -> dict[str, Any]:
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


def decode_card_v01(doc: Any) -> AgentCard:
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
    card = AgentCard(
        name=w.name,
        description=w.description or "",
        version=w.version or "",
        interfaces=[AgentInterface(url=w.url, binding="JSONRPC", protocol_version=DIALECT)],
        capabilities=AgentCapabilities(
            streaming=bool(caps and caps.streaming),
            push_notifications=bool(caps and caps.push_notifications),
            state_transition_history=bool(caps and caps.state_transition_history),
        ),
        skills=[
            AgentSkill(
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
            AgentProvider(organization=w.provider.organization, url=w.provider.url or None)
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


def _oauth_flows(details: dict[str, Any]) -> dict[str, OAuthFlow]:
    auth_url = _str(details, "authorizationUrl")
    token_url = _str(details, "tokenUrl")
    scopes = details.get("scopes")
    flow = OAuthFlow(
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


def _schemes_in(auth: WAuthentication) -> dict[str, SecurityScheme]:
    details = _credentials(auth.credentials)
    out: dict[str, SecurityScheme] = {}
    for name in auth.schemes:
        key = name.lower().replace("-", "").replace("_", "")
        scheme: SecurityScheme
        if key in ("bearer", "basic", "digest"):
            scheme = HTTPAuthScheme(scheme=key)
        elif key == "apikey":
            location = details.get("in")
            scheme = APIKeyScheme(
                # spec §4.3's example header when the card does not name one
                name=_str(details, "name") or "X-API-Key",
                location=location if location in ("header", "query", "cookie") else "header",
            )
        elif key in ("oauth2", "oauth"):
            scheme = OAuth2Scheme(flows=_oauth_flows(details))
        elif key in ("openidconnect", "oidc"):
            scheme = OpenIdConnectScheme(url=_str(details, "openIdConnectUrl") or "")
        elif key in ("mtls", "mutualtls"):
            scheme = MutualTLSScheme()
        else:
            scheme = HTTPAuthScheme(scheme=name)  # another HTTP scheme, as named
        out.setdefault(name, scheme)
    return out
