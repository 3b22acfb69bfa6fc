"""The v0.2/v0.3 JSON-RPC dialect (``message/send``, ``kind`` discriminators, camelCase).

v0.2.x and v0.3.0 are one wire family (DIALECTS.md §a.3, §b); v0.3.0 only adds
``agent/getAuthenticatedExtendedCard``, card fields and error -32007. Requests
decode straight from the params bytes into the Structs of ``_v03_wire`` and
from there into canonical calls; results are encoded from wire Structs built
from the canonical objects.

Leniency on input (DIALECTS.md §i): a bare Message as ``message/send`` params
(seed 000 calls params "a Message"), parts tagged ``type`` instead of ``kind``
(v0.1 style), any ISO 8601 timestamp, and DataParts wrapped as
``{"value": X}`` with ``metadata.data_part_compat`` (§i.27) unwrapped. Everything
the schema requires otherwise stays required: a message without ``messageId``
is refused here.

The agent card helpers render and read the v0.2/v0.3 card shape
(``url`` + ``preferredTransport`` + ``additionalInterfaces``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import msgspec

from ..calls import (
    Call,
    CancelTask,
    DeletePushConfig,
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    ListTasks,
    Result,
    SendConfig,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from ..errors import (
    A2AError,
    InvalidAgentResponse,
    InvalidParams,
    MethodNotFound,
    UnsupportedOperation,
)
from ..lifecycle import RETURN_STATES
from ..model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeyScheme,
    ArtifactUpdate,
    CardSignature,
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
)
from ._common import V03_ERROR_CLASSES, decode_error_member, decode_params, encode_error_member
from ._common import at_root as _at
from ._v03_wire import (
    SECURITY_SCHEME_TYPES,
    FieldError,
    WAPIKeyScheme,
    WArtifactEvent,
    WCard,
    WDeletePushParams,
    WGetPushParams,
    WHTTPScheme,
    WMessage,
    WOAuth2Scheme,
    WOAuthFlow,
    WOIDCScheme,
    WSecurityScheme,
    WSendConfig,
    WSendParams,
    WSendResult,
    WStatusEvent,
    WStreamItem,
    WTask,
    WTaskIdParams,
    WTaskPushConfig,
    WTaskQuery,
    artifact_event_in,
    artifact_event_out,
    message_in,
    message_out,
    push_config_in,
    push_config_out,
    status_event_in,
    status_event_out,
    task_in,
    task_out,
)
from .base import Codec, StreamItem

__all__ = ["V03Codec", "decode_card_v03", "encode_card_v03"]

T = TypeVar("T")

DIALECT = "0.3"

SEND = "message/send"
STREAM = "message/stream"
GET = "tasks/get"
CANCEL = "tasks/cancel"
RESUBSCRIBE = "tasks/resubscribe"
PUSH_SET = "tasks/pushNotificationConfig/set"
PUSH_GET = "tasks/pushNotificationConfig/get"
PUSH_LIST = "tasks/pushNotificationConfig/list"
PUSH_DELETE = "tasks/pushNotificationConfig/delete"
EXTENDED_CARD = "agent/getAuthenticatedExtendedCard"

_encoder = msgspec.json.Encoder()
_any = msgspec.json.Decoder()

_send_params = msgspec.json.Decoder(WSendParams)
_task_query = msgspec.json.Decoder(WTaskQuery)
_task_id_params = msgspec.json.Decoder(WTaskIdParams)
_task_push = msgspec.json.Decoder(WTaskPushConfig)
_get_push = msgspec.json.Decoder(WGetPushParams)
_delete_push = msgspec.json.Decoder(WDeletePushParams)

_send_result = msgspec.json.Decoder(WSendResult)
_task = msgspec.json.Decoder(WTask)
_push_list = msgspec.json.Decoder(list[WTaskPushConfig])
_stream_item = msgspec.json.Decoder(WStreamItem)
_card = msgspec.json.Decoder(WCard)

_ERRORS = V03_ERROR_CLASSES


# ------------------------------------------------------------------ lenient reading


def _tag_parts(parts: Any) -> None:
    """Give v0.1-style parts (``"type": "text"``) the ``kind`` this dialect needs."""
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, dict) and "kind" not in part and isinstance(part.get("type"), str):
                part["kind"] = part["type"]


_NESTED = ("status", "message", "history", "artifacts", "artifact")


def _tag_object(doc: Any) -> None:
    """Walk the places of a result where messages and artifacts sit and tag their parts."""
    if isinstance(doc, list):
        for item in doc:
            _tag_object(item)
    elif isinstance(doc, dict):
        _tag_parts(doc.get("parts"))
        for key in _NESTED:
            if key in doc:
                _tag_object(doc[key])


def _infer_kind(doc: Any) -> None:
    """Name the union member of a result that came without ``kind``, by its fields."""
    if isinstance(doc, dict) and "kind" not in doc:
        if "artifact" in doc:
            doc["kind"] = "artifact-update"
        elif "status" in doc:
            doc["kind"] = "status-update" if "taskId" in doc else "task"
        elif "messageId" in doc or "role" in doc:
            doc["kind"] = "message"


def _send_fallback(method: str) -> Callable[[Any], WSendParams]:
    def fallback(doc: Any) -> WSendParams:
        if not isinstance(doc, dict):
            raise InvalidParams(f"Invalid params for {method}: params must be a JSON object")
        if "message" not in doc and "role" in doc and "parts" in doc:
            doc = {"message": doc}  # a bare Message as params (DIALECTS.md §i.3)
        message = doc.get("message")
        if isinstance(message, dict):
            _tag_parts(message.get("parts"))
        try:
            return msgspec.convert(doc, WSendParams)
        except msgspec.ValidationError as exc:
            raise InvalidParams(f"Invalid params for {method}: {_at(str(exc), 'params')}") from None

    return fallback


_SEND_FALLBACKS = {SEND: _send_fallback(SEND), STREAM: _send_fallback(STREAM)}


def _read_result(decoder: msgspec.json.Decoder[T], data: bytes, typ: Any, what: str) -> T:
    """Decode a peer's result; on a shape error retry leniently, else InvalidAgentResponse."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        first = exc
    except msgspec.DecodeError as exc:
        raise InvalidAgentResponse(f"Invalid agent response: {what} is not JSON: {exc}") from None
    try:
        doc = _any.decode(data)
    except msgspec.DecodeError as exc:
        raise InvalidAgentResponse(f"Invalid agent response: {what} is not JSON: {exc}") from None
    _infer_kind(doc)
    _tag_object(doc)
    try:
        result: T = msgspec.convert(doc, typ)
    except msgspec.ValidationError:
        raise InvalidAgentResponse(f"Invalid agent response: {_at(str(first), what)}") from None
    return result


def _agent_fault(exc: FieldError, root: str) -> InvalidAgentResponse:
    return InvalidAgentResponse(f"Invalid agent response: {exc.describe(root)}")


# -------------------------------------------------------------------------- the codec


class V03Codec(Codec):
    """JSON-RPC of A2A v0.2.x and v0.3.0."""

    name: ClassVar[str] = DIALECT
    methods: ClassVar[frozenset[str]] = frozenset(
        {
            SEND,
            STREAM,
            GET,
            CANCEL,
            RESUBSCRIBE,
            PUSH_SET,
            PUSH_GET,
            PUSH_LIST,
            PUSH_DELETE,
            EXTENDED_CARD,
        }
    )
    streaming_methods: ClassVar[frozenset[str]] = frozenset({STREAM, RESUBSCRIBE})

    # ---------------------------------------------------------------- server side

    def decode_call(self, method: str, params: bytes | None) -> Call:
        try:
            return _decode_call(method, params)
        except RecursionError:
            raise InvalidParams(f"Invalid params for {method}: nested too deeply") from None

    def encode_result(self, call: Call, result: Result) -> bytes:
        if isinstance(result, Task):
            return _encoder.encode(task_out(result))
        if isinstance(result, Message):
            return _encoder.encode(message_out(result))
        if result is None:
            return b"null"
        if isinstance(result, PushConfig):
            return _encoder.encode(_task_push_out(result, call))
        if isinstance(result, list):
            return _encoder.encode([_task_push_out(c, call) for c in result])
        if isinstance(result, AgentCard):
            return _encoder.encode(encode_card_v03(result, jsonrpc_url=_legacy_url(result)))
        raise UnsupportedOperation("Listing tasks is not part of A2A v0.2/v0.3 JSON-RPC")

    def encode_error(self, error: A2AError) -> bytes:
        return encode_error_member(error.code_for(DIALECT), error.message, error.data)

    def encode_stream_item(self, item: StreamItem) -> bytes:
        if isinstance(item, StatusUpdate):
            # v0.x streams mark their last status event (DIALECTS.md §i.17).
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
                    task_id=call.task_id, push_notification_config=push_config_out(call.config)
                )
            )
        if isinstance(call, GetPushConfig):
            return PUSH_GET, _encoder.encode(
                WGetPushParams(id=call.task_id, push_notification_config_id=call.config_id)
            )
        if isinstance(call, ListPushConfigs):
            return PUSH_LIST, _encoder.encode(WTaskIdParams(id=call.task_id))
        if isinstance(call, DeletePushConfig):
            return PUSH_DELETE, _encoder.encode(
                WDeletePushParams(id=call.task_id, push_notification_config_id=call.config_id)
            )
        if isinstance(call, GetExtendedCard):
            return EXTENDED_CARD, b"{}"
        assert isinstance(call, ListTasks)
        raise UnsupportedOperation("Listing tasks is not part of A2A v0.2/v0.3 JSON-RPC")

    def decode_result(self, call: Call, result: bytes) -> Result:
        try:
            return _decode_result(call, result)
        except FieldError as exc:
            raise _agent_fault(exc, "result") from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def decode_stream_item(self, result: bytes) -> StreamItem:
        try:
            w = _read_result(_stream_item, result, WStreamItem, "result")
            if type(w) is WStatusEvent:
                return status_event_in(w)
            if type(w) is WArtifactEvent:
                return artifact_event_in(w)
            if type(w) is WTask:
                return task_in(w)
            assert type(w) is WMessage
            return message_in(w)
        except FieldError as exc:
            raise _agent_fault(exc, "result") from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def decode_error(self, error: Any) -> A2AError:
        return decode_error_member(error, _ERRORS)


# ------------------------------------------------------------------------- requests


def _decode_call(method: str, params: bytes | None) -> Call:
    if method == SEND or method == STREAM:
        return _decode_send(method, params)
    if method == GET:
        q = decode_params(_task_query, params, method=method)
        return GetTask(id=q.id, history_length=q.history_length)
    if method == CANCEL:
        c = decode_params(_task_id_params, params, method=method)
        return CancelTask(id=c.id, metadata=c.metadata)
    if method == RESUBSCRIBE:
        # TaskIdParams; the historyLength v0.1 sent on this method is kept if given.
        r = decode_params(_task_query, params, method=method)
        return SubscribeToTask(id=r.id, history_length=r.history_length)
    if method == PUSH_SET:
        s = decode_params(_task_push, params, method=method)
        return SetPushConfig(
            task_id=s.task_id, config=push_config_in(s.push_notification_config, s.task_id)
        )
    if method == PUSH_GET:
        g = decode_params(_get_push, params, method=method)
        return GetPushConfig(task_id=g.id, config_id=g.push_notification_config_id)
    if method == PUSH_LIST:
        lp = decode_params(_task_id_params, params, method=method)
        return ListPushConfigs(task_id=lp.id)
    if method == PUSH_DELETE:
        d = decode_params(_delete_push, params, method=method)
        return DeletePushConfig(task_id=d.id, config_id=d.push_notification_config_id)
    if method == EXTENDED_CARD:
        return GetExtendedCard()
    raise MethodNotFound(f"Method not found: {method}")


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
        push = c.push_notification_config
        config = SendConfig(
            accepted_output_modes=c.accepted_output_modes,
            history_length=c.history_length,
            # Absent means blocking (DIALECTS.md §i.31).
            blocking=True if c.blocking is None else c.blocking,
            push_config=push_config_in(push, None) if push is not None else None,
        )
    return SendMessage(
        message=message, config=config, metadata=w.metadata, streaming=method == STREAM
    )


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
        message=message_out(call.message), configuration=config, metadata=call.metadata
    )


def _task_push_out(config: PushConfig, call: Call) -> WTaskPushConfig:
    task_id = config.task_id or getattr(call, "task_id", None) or ""
    return WTaskPushConfig(task_id=task_id, push_notification_config=push_config_out(config))


# -------------------------------------------------------------------------- results


def _decode_result(call: Call, data: bytes) -> Result:
    if isinstance(call, SendMessage):
        w = _read_result(_send_result, data, WSendResult, "result")
        return task_in(w) if type(w) is WTask else message_in(w)
    if isinstance(call, (GetTask, CancelTask, SubscribeToTask)):
        return task_in(_read_result(_task, data, WTask, "result"))
    if isinstance(call, (SetPushConfig, GetPushConfig)):
        tp = _read_result(_task_push, data, WTaskPushConfig, "result")
        return push_config_in(tp.push_notification_config, tp.task_id)
    if isinstance(call, ListPushConfigs):
        items = _read_result(_push_list, data, list[WTaskPushConfig], "result")
        return [push_config_in(tp.push_notification_config, tp.task_id) for tp in items]
    if isinstance(call, DeletePushConfig):
        return None  # null in v0.3; some peers answer {} (DIALECTS.md §i.30)
    if isinstance(call, GetExtendedCard):
        return _card_in(_read_result(_card, data, WCard, "result"))
    raise UnsupportedOperation("Listing tasks is not part of A2A v0.2/v0.3 JSON-RPC")


# ----------------------------------------------------------------------------- cards

_LEGACY_VERSIONS = ("0.2", "0.3")


def _is_legacy(interface: AgentInterface) -> bool:
    return interface.protocol_version in _LEGACY_VERSIONS


def _legacy_url(card: AgentCard) -> str:
    """The URL a v0.3 client should post JSON-RPC to, for cards served by method."""
    jsonrpc = [i for i in card.interfaces if i.binding == "JSONRPC"]
    for i in jsonrpc:
        if _is_legacy(i):
            return i.url
    if jsonrpc:
        return jsonrpc[0].url
    return card.interfaces[0].url if card.interfaces else ""


def encode_card_v03(card: AgentCard, *, jsonrpc_url: str) -> dict[str, Any]:
    """``card`` in the v0.3.0 shape, with ``jsonrpc_url`` as its main (JSON-RPC) URL.

    Only the card's v0.2/v0.3 interfaces are listed in ``additionalInterfaces``:
    a v0.3 card's interface carries no version, so a v0.3 client would speak
    v0.3 to whatever is listed there.
    """
    doc: dict[str, Any] = {
        "protocolVersion": "0.3.0",
        "name": card.name,
        "description": card.description,
        "version": card.version,
        "url": jsonrpc_url,
        "preferredTransport": "JSONRPC",
    }
    main = (jsonrpc_url, "JSONRPC")
    seen = {main}
    extra: list[dict[str, str]] = []
    for i in card.interfaces:
        key = (i.url, i.binding)
        if _is_legacy(i) and key not in seen:
            seen.add(key)
            extra.append({"url": i.url, "transport": i.binding})
    if extra:
        # The schema asks for the main endpoint to be listed as well.
        doc["additionalInterfaces"] = [{"url": jsonrpc_url, "transport": "JSONRPC"}, *extra]
    caps = card.capabilities
    capabilities: dict[str, Any] = {
        "streaming": caps.streaming,
        "pushNotifications": caps.push_notifications,
        "stateTransitionHistory": caps.state_transition_history,
    }
    if caps.extensions:
        capabilities["extensions"] = [_extension_out(e) for e in caps.extensions]
    doc["capabilities"] = capabilities
    doc["defaultInputModes"] = list(card.default_input_modes)
    doc["defaultOutputModes"] = list(card.default_output_modes)
    doc["skills"] = [_skill_out(s) for s in card.skills]
    if card.provider is not None:
        # provider.url is required in v0.2+; a v0.1-born card may lack it.
        doc["provider"] = {
            "organization": card.provider.organization,
            "url": card.provider.url or "",
        }
    if card.documentation_url is not None:
        doc["documentationUrl"] = card.documentation_url
    if card.icon_url is not None:
        doc["iconUrl"] = card.icon_url
    if card.security_schemes:
        doc["securitySchemes"] = {name: _scheme_out(s) for name, s in card.security_schemes.items()}
    if card.security:
        doc["security"] = [{k: list(v) for k, v in req.items()} for req in card.security]
    if caps.extended_card:
        doc["supportsAuthenticatedExtendedCard"] = True
    if card.signatures:
        doc["signatures"] = [_signature_out(s) for s in card.signatures]
    return doc


def decode_card_v03(doc: dict[str, Any]) -> AgentCard:
    """A v0.2.x or v0.3.0 card document -> the canonical card.

    ``url``/``preferredTransport``/``additionalInterfaces`` become ``interfaces``
    with the card's ``protocolVersion`` as Major.Minor; a card without one is a
    v0.2.0-v0.2.4 card. Raises ``InvalidAgentResponse`` naming the bad field.
    """
    if not isinstance(doc, dict):
        raise InvalidAgentResponse("Invalid agent card: not a JSON object")
    try:
        return _card_in(msgspec.convert(doc, WCard))
    except msgspec.ValidationError as exc:
        raise InvalidAgentResponse(f"Invalid agent card: {_at(str(exc), 'card')}") from None
    except RecursionError:
        raise InvalidAgentResponse("Invalid agent card: nested too deeply") from None


def _card_in(w: WCard) -> AgentCard:
    version = _major_minor(w.protocol_version) if w.protocol_version else "0.2"
    main = AgentInterface(
        url=w.url, binding=_binding(w.preferred_transport or "JSONRPC"), protocol_version=version
    )
    interfaces = [main]
    seen = {(main.url, main.binding)}
    for wi in w.additional_interfaces or ():
        key = (wi.url, _binding(wi.transport))
        if key not in seen:
            seen.add(key)
            interfaces.append(AgentInterface(url=key[0], binding=key[1], protocol_version=version))
    wc = w.capabilities
    capabilities = AgentCapabilities(
        streaming=bool(wc.streaming),
        push_notifications=bool(wc.push_notifications),
        extended_card=bool(w.supports_authenticated_extended_card),
        state_transition_history=bool(wc.state_transition_history),
        extensions=[
            AgentExtension(
                uri=e.uri, description=e.description, required=e.required, params=e.params
            )
            for e in wc.extensions or ()
        ],
    )
    card = AgentCard(
        name=w.name,
        description=w.description,
        version=w.version,
        interfaces=interfaces,
        capabilities=capabilities,
        skills=[
            AgentSkill(
                id=s.id,
                name=s.name,
                description=s.description,
                tags=s.tags,
                examples=s.examples,
                input_modes=s.input_modes,
                output_modes=s.output_modes,
                security=s.security,
            )
            for s in w.skills
        ],
        provider=(
            AgentProvider(organization=w.provider.organization, url=w.provider.url or None)
            if w.provider is not None
            else None
        ),
        documentation_url=w.documentation_url,
        icon_url=w.icon_url,
        security_schemes=_schemes_in(w.security_schemes or {}),
        security=w.security or [],
        signatures=[
            CardSignature(protected=s.protected, signature=s.signature, header=s.header)
            for s in w.signatures or ()
        ],
    )
    if w.default_input_modes is not None:
        card.default_input_modes = w.default_input_modes
    if w.default_output_modes is not None:
        card.default_output_modes = w.default_output_modes
    return card


_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)")
_BINDINGS = {"JSONRPC": "JSONRPC", "GRPC": "GRPC", "HTTP+JSON": "HTTP+JSON", "REST": "HTTP+JSON"}


def _major_minor(version: str) -> str:
    m = _VERSION.match(version)
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else version.strip()


def _binding(transport: str) -> str:
    return _BINDINGS.get(transport.upper(), transport)


def _extension_out(e: AgentExtension) -> dict[str, Any]:
    out: dict[str, Any] = {"uri": e.uri}
    if e.description is not None:
        out["description"] = e.description
    if e.required:
        out["required"] = True
    if e.params is not None:
        out["params"] = e.params
    return out


def _skill_out(s: AgentSkill) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": s.id,
        "name": s.name,
        "description": s.description,
        "tags": list(s.tags),
    }
    if s.examples is not None:
        out["examples"] = list(s.examples)
    if s.input_modes is not None:
        out["inputModes"] = list(s.input_modes)
    if s.output_modes is not None:
        out["outputModes"] = list(s.output_modes)
    if s.security is not None:
        out["security"] = [{k: list(v) for k, v in req.items()} for req in s.security]
    return out


def _signature_out(s: CardSignature) -> dict[str, Any]:
    out: dict[str, Any] = {"protected": s.protected, "signature": s.signature}
    if s.header is not None:
        out["header"] = s.header
    return out


# Canonical flow name -> (v0.3 name, URL fields the v0.3 schema requires for it).
_FLOWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "authorization_code": ("authorizationCode", ("authorizationUrl", "tokenUrl")),
    "client_credentials": ("clientCredentials", ("tokenUrl",)),
    "implicit": ("implicit", ("authorizationUrl",)),
    "password": ("password", ("tokenUrl",)),
}


def _flow_out(flow: OAuthFlow, required: tuple[str, ...]) -> dict[str, Any]:
    urls = {"authorizationUrl": flow.authorization_url, "tokenUrl": flow.token_url}
    # Required URLs are written even when unknown ("" reads back as absent).
    out: dict[str, Any] = {name: urls[name] or "" for name in required}
    if flow.refresh_url is not None:
        out["refreshUrl"] = flow.refresh_url
    out["scopes"] = dict(flow.scopes)
    return out


def _scheme_out(s: SecurityScheme) -> dict[str, Any]:
    out: dict[str, Any]
    if isinstance(s, APIKeyScheme):
        out = {"type": "apiKey", "in": s.location, "name": s.name}
    elif isinstance(s, HTTPAuthScheme):
        out = {"type": "http", "scheme": s.scheme}
        if s.bearer_format is not None:
            out["bearerFormat"] = s.bearer_format
    elif isinstance(s, OAuth2Scheme):
        # v0.3 has no device-code flow and no PKCE flag: they are left out.
        flows = {
            _FLOWS[key][0]: _flow_out(flow, _FLOWS[key][1])
            for key, flow in s.flows.items()
            if key in _FLOWS
        }
        out = {"type": "oauth2", "flows": flows}
        if s.metadata_url is not None:
            out["oauth2MetadataUrl"] = s.metadata_url
    elif isinstance(s, OpenIdConnectScheme):
        out = {"type": "openIdConnect", "openIdConnectUrl": s.url}
    else:
        out = {"type": "mutualTLS"}
    if s.description is not None:
        out["description"] = s.description
    return out


def _flow_in(w: WOAuthFlow) -> OAuthFlow:
    return OAuthFlow(
        scopes=w.scopes,
        authorization_url=w.authorization_url or None,
        token_url=w.token_url or None,
        refresh_url=w.refresh_url or None,
    )


def _schemes_in(docs: dict[str, Any]) -> dict[str, SecurityScheme]:
    out: dict[str, SecurityScheme] = {}
    for name, doc in docs.items():
        kind = doc.get("type") if isinstance(doc, dict) else None
        if not isinstance(kind, str) or kind not in SECURITY_SCHEME_TYPES:
            continue  # a scheme type this dialect cannot express: skipped, not fatal
        try:
            w = msgspec.convert(doc, WSecurityScheme)
        except msgspec.ValidationError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent card: {_at(str(exc), f'card.securitySchemes.{name}')}"
            ) from None
        out[name] = _scheme_in(w)
    return out


def _scheme_in(w: WSecurityScheme) -> SecurityScheme:
    if isinstance(w, WAPIKeyScheme):
        return APIKeyScheme(name=w.name, location=w.location, description=w.description)
    if isinstance(w, WHTTPScheme):
        return HTTPAuthScheme(
            scheme=w.scheme, bearer_format=w.bearer_format, description=w.description
        )
    if isinstance(w, WOAuth2Scheme):
        f = w.flows
        flows = {
            key: _flow_in(flow)
            for key, flow in (
                ("authorization_code", f.authorization_code),
                ("client_credentials", f.client_credentials),
                ("implicit", f.implicit),
                ("password", f.password),
            )
            if flow is not None
        }
        return OAuth2Scheme(
            flows=flows, metadata_url=w.oauth2_metadata_url, description=w.description
        )
    if isinstance(w, WOIDCScheme):
        return OpenIdConnectScheme(url=w.open_id_connect_url, description=w.description)
    return MutualTLSScheme(description=w.description)
