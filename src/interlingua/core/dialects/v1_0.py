"""The v1.0 JSON-RPC dialect: PascalCase methods, ``params`` in ProtoJSON (``lf.a2a.v1``).

Reading rules (DIALECTS.md §a.4, §b, §c, §f):

* JSON names are lowerCamelCase; the snake_case proto names are accepted too,
  as are enum numbers and numbers given as strings. Unknown members are ignored.
* Fields at their default value are left out on output, except those the proto
  marks REQUIRED: they are always written, even as ``0``, ``""`` or ``[]``
  (``ListTasksResponse.pageSize``/``totalSize``/``nextPageToken``, the card's
  lists, a message's ``parts``), since strict readers check for them. Requests
  are validated the same way: a REQUIRED member that is missing or empty is
  ``InvalidParams`` naming it (``GetTaskPushNotificationConfig`` may leave out
  ``id``, as v0.2 could); results are read leniently, as protobuf does.
* ``SendMessage`` answers are wrapped (``{"task": …}`` / ``{"message": …}``);
  stream events are ``StreamResponse`` objects without ``final``.
* Errors carry a ``google.rpc.ErrorInfo`` in ``data``.

What v1.0 cannot say, and what is sent instead: the ``unknown`` state is
``TASK_STATE_UNSPECIFIED`` (which, as a ``ListTasks`` filter, means no filter);
``SubscribeToTask.history_length`` is not sent; a file part with neither bytes nor a URL
(v0.1) goes out as ``raw: ""``, one with both (SAM) keeps only ``raw``, as in every dialect
but SAM; an OAuth2 scheme keeps its first flow; push authentication keeps its first scheme;
artifact ``index`` and ``stateTransitionHistory`` are dropped. Empty strings and empty lists
are proto defaults, so an optional one reads back as absent (``None``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from .. import calls as c
from .. import model as m
from ..errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    ExtensionSupportRequired,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    RateLimitExceeded,
    RemoteError,
    ResourceUnavailable,
    VersionNotSupported,
    method_not_found,
    quoted,
)
from . import _v1_wire as w
from ._common import V03_ERROR_CLASSES, FieldError, decode_params, each_in, field_in
from .base import Codec, StreamItem

__all__ = ["V1Codec", "decode_card_v1", "decode_status", "encode_card_v1", "encode_status"]

_encoder = msgspec.json.Encoder()
_any_decoder = msgspec.json.Decoder()

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


# ------------------------------------------------------------------ decoding helpers


def _msgspec_path(exc: msgspec.ValidationError, root: str) -> str:
    return str(exc).replace("`$.", f"`{root}.").replace("`$`", f"`{root}`")


class _Reader:
    """A cached typed decoder for one wire Struct, with the lenient fallback."""

    def __init__(self, cls: type[msgspec.Struct]) -> None:
        self.cls = cls
        self.decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(cls)
        self._fallbacks: dict[str, Callable[[Any], Any]] = {}

    def params(self, params: bytes | None, method: str) -> Any:
        if params is not None and params.isascii():
            # decode_params' first step, here: well-formed params need no call more
            try:
                return self.decoder.decode(params)
            except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                pass  # decode_params reads them leniently, or says what is wrong
        fallback = self._fallbacks.get(method)
        if fallback is None:
            fallback = self._fallbacks[method] = self._fallback_for(method)
        return decode_params(self.decoder, params, method=method, fallback=fallback)

    def _fallback_for(self, method: str) -> Callable[[Any], Any]:
        def fault(why: str) -> A2AError:
            return InvalidParams(f"Invalid params for {method}: {why}")

        return lambda doc: self._convert(doc, fault, "params", "params must be a JSON object")

    def result(self, data: bytes, method: str) -> Any:
        try:
            try:
                return self.decoder.decode(data)
            except msgspec.ValidationError:
                pass
            except msgspec.DecodeError as exc:
                raise InvalidAgentResponse(f"Invalid agent response to {method}: {exc}") from None
            return self.document(_any_decoder.decode(data), method)
        except RecursionError:  # deeper than the decoder (or the lenient reading) goes
            raise InvalidAgentResponse(
                f"Invalid agent response to {method}: nested too deeply") from None

    def document(self, doc: Any, method: str) -> Any:
        def fault(why: str) -> A2AError:
            return InvalidAgentResponse(f"Invalid agent response to {method}: {why}")

        return self._convert(doc, fault, "result", "the result must be a JSON object")

    def _convert(
        self, doc: Any, fault: Callable[[str], A2AError], root: str, not_object: str
    ) -> Any:
        """A generic document made lenient (``relax``) and converted into the Struct."""
        if not isinstance(doc, dict):
            raise fault(not_object)
        try:
            return msgspec.convert(w.relax(doc, self.cls), self.cls, strict=False)
        except msgspec.ValidationError as exc:
            raise fault(_msgspec_path(exc, root)) from None


_SEND = _Reader(w.SendMessageRequest)
_GET_TASK = _Reader(w.GetTaskRequest)
_LIST_TASKS = _Reader(w.ListTasksRequest)
_CANCEL = _Reader(w.CancelTaskRequest)
_SUBSCRIBE = _Reader(w.SubscribeToTaskRequest)
_PUSH_CONFIG = _Reader(w.TaskPushNotificationConfig)
_GET_PUSH = _Reader(w.GetTaskPushNotificationConfigRequest)
_LIST_PUSH = _Reader(w.ListTaskPushNotificationConfigsRequest)
_DELETE_PUSH = _Reader(w.DeleteTaskPushNotificationConfigRequest)
_GET_CARD = _Reader(w.GetExtendedAgentCardRequest)

_TASK = _Reader(w.Task)
_SEND_RESPONSE = _Reader(w.SendMessageResponse)
_STREAM_RESPONSE = _Reader(w.StreamResponse)
_LIST_TASKS_RESPONSE = _Reader(w.ListTasksResponse)
_LIST_PUSH_RESPONSE = _Reader(w.ListTaskPushNotificationConfigsResponse)
_CARD = _Reader(w.AgentCard)


def _bad_params(method: str, exc: w.WireError) -> InvalidParams:
    return InvalidParams(f"Invalid params for {method}: {exc.describe('params')}")


def _bad_result(method: str, exc: w.WireError) -> InvalidAgentResponse:
    return InvalidAgentResponse(f"Invalid agent response to {method}: {exc.describe('result')}")


def _required(value: str | None, path: str) -> str:
    if not value:
        raise w.WireError(path, "is required and must not be empty")
    return value


# ------------------------------------------------------------------ requests in


#: why a 1.0 request may not carry a field of A2A 1.1 (never silently dropped)
NEEDS_1_1 = "is an A2A 1.1 field: send the request with A2A-Version: 1.1 to use it"


def _send_in(method: str, params: bytes | None, newer: bool = False) -> c.SendMessage:
    """``newer``: read as A2A 1.1 (``v1_1.py``), with its fields."""
    req: w.SendMessageRequest = _SEND.params(params, method)
    if req.message is None:
        raise w.WireError("message", "is required")
    # field_in's work, here: no two calls more per send
    try:
        message = w.message_in(req.message, request=True)
    except FieldError as exc:
        exc.path.insert(0, "message")
        raise
    config = c.SendConfig()
    tenant = req.tenant or None
    if req.configuration is not None:
        config = field_in("configuration", _config_in, req.configuration)
        _check_push_task(message, config.push_config)
        tenant = _send_tenant(req)  # (a push config may name it: no call more without)
        if req.configuration.if_generation_match is not None:
            if not newer:
                raise w.WireError("configuration.ifGenerationMatch", NEEDS_1_1)
            config.if_generation_match = w.int_in(req.configuration.if_generation_match,
                                                  "configuration.ifGenerationMatch")
    return c.SendMessage(
        message=message,
        config=config,
        metadata=req.metadata,
        tenant=tenant,
        streaming=method == "SendStreamingMessage",
    )


#: where a send carries its push config
_IN_SEND = "configuration.taskPushNotificationConfig"


def _send_tenant(req: w.SendMessageRequest) -> str | None:
    """The send's tenant, which its push config's, where given, must be (as a create's
    ``tenant`` is its request's); given there alone, it is the send's (a path's or the
    tenant header's is then held to it as to a send's own)."""
    tenant = req.tenant or None
    push = req.configuration.task_push_notification_config if req.configuration else None
    named: str | None = push.tenant if push is not None else None
    if not named:
        return tenant
    if tenant is not None and named != tenant:
        raise w.WireError(_IN_SEND + ".tenant",
                          f"{quoted(named)} is not the send's tenant {quoted(tenant)}")
    return named


def _check_push_task(message: m.Message, push: m.PushConfig | None) -> None:
    """A send's push config names the task the send goes to, if any (a create naming
    two tasks is refused too): never silently another."""
    if push is None or not push.task_id or push.task_id == message.task_id:
        return
    task = quoted(message.task_id) if message.task_id else "(it starts a new one)"
    raise w.WireError(_IN_SEND + ".taskId",
                      f"{quoted(push.task_id)} is not the send's task {task}")


def _config_in(wc: w.SendMessageConfiguration) -> c.SendConfig:
    push = None
    if wc.task_push_notification_config is not None:
        push = field_in(
            "taskPushNotificationConfig",
            lambda p: w.push_config_in(p, request=True),
            wc.task_push_notification_config,
        )
    return c.SendConfig(
        accepted_output_modes=wc.accepted_output_modes or None,
        history_length=w.count_in(wc.history_length, "historyLength"),
        blocking=not wc.return_immediately,
        push_config=push,
    )


def _get_task_in(method: str, params: bytes | None) -> c.GetTask:
    req: w.GetTaskRequest = _GET_TASK.params(params, method)
    current = req.current_generation
    if current is not None:
        # a long poll in 1.0 requests too: the draft's own example (§3.2.7) sends
        # ``currentGeneration`` with ``A2A-Version: 1.0``
        current = w.int_in(current, "currentGeneration")
    return c.GetTask(
        id=_required(req.id, "id"),
        history_length=w.count_in(req.history_length, "historyLength"),
        tenant=req.tenant or None,
        current_generation=current,
    )


def _list_tasks_in(method: str, params: bytes | None) -> c.ListTasks:
    req: w.ListTasksRequest = _LIST_TASKS.params(params, method)
    status = w.state_in(req.status, "status")
    page_size = DEFAULT_PAGE_SIZE if req.page_size is None else req.page_size
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise w.WireError("pageSize", f"must be between 1 and {MAX_PAGE_SIZE}, got {page_size}")
    return c.ListTasks(
        context_id=req.context_id or None,
        # TASK_STATE_UNSPECIFIED is the proto default: no filter
        status=None if status is m.TaskState.UNKNOWN else status,
        page_size=page_size,
        page_token=req.page_token or None,
        history_length=w.count_in(req.history_length, "historyLength"),
        # "at or after": a finer instant must not admit the millisecond it is in
        status_timestamp_after=w.timestamp_in(
            req.status_timestamp_after, "statusTimestampAfter", ceil=True
        ),
        include_artifacts=bool(req.include_artifacts),
        tenant=req.tenant or None,
    )


def _cancel_in(method: str, params: bytes | None) -> c.CancelTask:
    req: w.CancelTaskRequest = _CANCEL.params(params, method)
    return c.CancelTask(
        id=_required(req.id, "id"), metadata=req.metadata, tenant=req.tenant or None
    )


def _subscribe_in(method: str, params: bytes | None) -> c.SubscribeToTask:
    req: w.SubscribeToTaskRequest = _SUBSCRIBE.params(params, method)
    return c.SubscribeToTask(id=_required(req.id, "id"), tenant=req.tenant or None)


def _set_push_in(method: str, params: bytes | None) -> c.SetPushConfig:
    req: w.TaskPushNotificationConfig = _PUSH_CONFIG.params(params, method)
    task_id = _required(req.task_id, "taskId")
    config = w.push_config_in(req, request=True)
    return c.SetPushConfig(task_id=task_id, config=config, tenant=req.tenant or None)


def _get_push_in(method: str, params: bytes | None) -> c.GetPushConfig:
    req: w.GetTaskPushNotificationConfigRequest = _GET_PUSH.params(params, method)
    # the proto requires ``id``, and an empty one names no config (ProtoJSON and
    # protobuf cannot tell it from none): refused as delete refuses it, on every binding
    return c.GetPushConfig(task_id=_required(req.task_id, "taskId"),
                           config_id=_required(req.id, "id"), tenant=req.tenant or None)


def _list_push_in(method: str, params: bytes | None) -> c.ListPushConfigs:
    req: w.ListTaskPushNotificationConfigsRequest = _LIST_PUSH.params(params, method)
    task_id = _required(req.task_id, "taskId")
    page_size = w.count_in(req.page_size, "pageSize")
    return c.ListPushConfigs(
        task_id=task_id,
        page_size=page_size or None,
        page_token=req.page_token or None,
        tenant=req.tenant or None,
    )


def _delete_push_in(method: str, params: bytes | None) -> c.DeletePushConfig:
    req: w.DeleteTaskPushNotificationConfigRequest = _DELETE_PUSH.params(params, method)
    return c.DeletePushConfig(
        task_id=_required(req.task_id, "taskId"),
        config_id=_required(req.id, "id"),
        tenant=req.tenant or None,
    )


def _get_card_in(method: str, params: bytes | None) -> c.GetExtendedCard:
    req: w.GetExtendedAgentCardRequest = _GET_CARD.params(params, method)
    return c.GetExtendedCard(tenant=req.tenant or None)


_CALL_READERS: dict[str, Callable[[str, bytes | None], c.Call]] = {
    "SendMessage": _send_in,
    "SendStreamingMessage": _send_in,
    "GetTask": _get_task_in,
    "ListTasks": _list_tasks_in,
    "CancelTask": _cancel_in,
    "SubscribeToTask": _subscribe_in,
    "CreateTaskPushNotificationConfig": _set_push_in,
    "GetTaskPushNotificationConfig": _get_push_in,
    "ListTaskPushNotificationConfigs": _list_push_in,
    "DeleteTaskPushNotificationConfig": _delete_push_in,
    "GetExtendedAgentCard": _get_card_in,
}


def long_polled(call: c.Call) -> bool:
    """Whether ``call`` is a long-polling ``GetTask`` (``currentGeneration``), whose
    1.0 answer carries the task's generation."""
    return type(call) is c.GetTask and call.current_generation is not None


# ----------------------------------------------------------------- requests out


def _config_out(config: c.SendConfig) -> w.SendMessageConfiguration | None:
    if config == c.SendConfig():
        return None
    return w.SendMessageConfiguration(
        accepted_output_modes=config.accepted_output_modes or None,
        task_push_notification_config=w.push_config_out(config.push_config)
        if config.push_config is not None
        else None,
        history_length=config.history_length,
        return_immediately=True if not config.blocking else None,
    )


def _call_out(call: c.Call) -> tuple[str, msgspec.Struct]:
    if isinstance(call, c.SendMessage):
        if call.config.if_generation_match is not None:
            raise InvalidParams(f"ifGenerationMatch {NEEDS_1_1}; the peer speaks 1.0")
        return (
            "SendStreamingMessage" if call.streaming else "SendMessage",
            w.SendMessageRequest(
                tenant=call.tenant,
                message=w.message_out(call.message),
                configuration=_config_out(call.config),
                metadata=call.metadata,
            ),
        )
    if isinstance(call, c.GetTask):
        if call.current_generation is not None:
            raise InvalidParams(f"currentGeneration {NEEDS_1_1}; the peer speaks 1.0")
        return "GetTask", w.GetTaskRequest(
            tenant=call.tenant, id=call.id, history_length=call.history_length
        )
    if isinstance(call, c.ListTasks):
        return "ListTasks", w.ListTasksRequest(
            tenant=call.tenant,
            context_id=call.context_id,
            status=w.STATE_NAMES[call.status] if call.status is not None else None,
            page_size=call.page_size,
            page_token=call.page_token,
            history_length=call.history_length,
            status_timestamp_after=call.status_timestamp_after,
            include_artifacts=True if call.include_artifacts else None,
        )
    if isinstance(call, c.CancelTask):
        return "CancelTask", w.CancelTaskRequest(
            tenant=call.tenant, id=call.id, metadata=call.metadata
        )
    if isinstance(call, c.SubscribeToTask):
        return "SubscribeToTask", w.SubscribeToTaskRequest(tenant=call.tenant, id=call.id)
    if isinstance(call, c.SetPushConfig):
        config = w.push_config_out(call.config, tenant=call.tenant)
        config.task_id = call.task_id
        return "CreateTaskPushNotificationConfig", config
    if isinstance(call, c.GetPushConfig):
        return "GetTaskPushNotificationConfig", w.GetTaskPushNotificationConfigRequest(
            # REQUIRED in the proto; empty asks for the task's only config
            tenant=call.tenant,
            task_id=call.task_id,
            id=call.config_id or "",
        )
    if isinstance(call, c.ListPushConfigs):
        return "ListTaskPushNotificationConfigs", w.ListTaskPushNotificationConfigsRequest(
            tenant=call.tenant,
            task_id=call.task_id,
            page_size=call.page_size,
            page_token=call.page_token,
        )
    if isinstance(call, c.DeletePushConfig):
        return "DeleteTaskPushNotificationConfig", w.DeleteTaskPushNotificationConfigRequest(
            tenant=call.tenant, task_id=call.task_id, id=call.config_id
        )
    if isinstance(call, c.GetExtendedCard):
        return "GetExtendedAgentCard", w.GetExtendedAgentCardRequest(tenant=call.tenant)
    raise TypeError(f"not a call: {type(call).__name__}")


def _method_of(call: c.Call) -> str:
    return _call_out(call)[0]


# ------------------------------------------------------------------ results out


def _wrong_result(call: c.Call, result: object) -> InternalError:
    return InternalError(
        f"Internal error: a {type(result).__name__} cannot answer {type(call).__name__}"
    )


def _result_out(call: c.Call, result: c.Result) -> Any:
    """The wire Struct answering ``call`` (None for DeleteTaskPushNotificationConfig)."""
    if isinstance(call, c.SendMessage | c.SubscribeToTask):
        if isinstance(result, m.Task):
            return w.SendMessageResponse(task=w.task_out(result))
        if isinstance(result, m.Message):
            return w.SendMessageResponse(message=w.message_out(result))
    elif isinstance(call, c.GetTask | c.CancelTask):
        if isinstance(result, m.Task):
            return w.task_out(result)
    elif isinstance(call, c.ListTasks):
        if isinstance(result, c.ListTasksResult):
            encoded = result.encoded
            # the store's own v1.0 JSON of the page, or of a task, goes out as it is
            tasks = (
                [w.task_out(t) for t in result.tasks] if encoded is None
                else encoded if type(encoded) is msgspec.Raw
                else [w.task_out(t) if isinstance(t, m.Task) else t for t in encoded]
            )
            return w.ListTasksResponse(
                tasks=tasks,
                next_page_token=result.next_page_token,
                page_size=result.page_size,
                total_size=result.total_size,
            )
    elif isinstance(call, c.SetPushConfig | c.GetPushConfig):
        if isinstance(result, m.PushConfig):
            return w.push_config_out(result, task_id=call.task_id)
    elif isinstance(call, c.ListPushConfigs):
        page = result if isinstance(result, c.PushConfigsPage) else None
        listed = page.configs if page is not None else result
        if isinstance(listed, list):
            return w.ListTaskPushNotificationConfigsResponse(
                configs=[w.push_config_out(p, task_id=call.task_id) for p in listed],
                next_page_token=page.next_page_token if page is not None else "",
            )
    elif isinstance(call, c.DeletePushConfig):
        return None
    elif isinstance(call, c.GetExtendedCard) and isinstance(result, m.AgentCard):
        return w.card_out(result)
    raise _wrong_result(call, result)


# ------------------------------------------------------------------- results in


# A v0.3 object's ``kind`` -> the StreamResponse member that holds it in v1.0.
_V03_KINDS = {"task": "task", "message": "message", "status-update": "statusUpdate",
              "artifact-update": "artifactUpdate"}


def _v03_shaped(data: bytes, resp: w.StreamResponse, method: str) -> w.StreamResponse:
    """An event that holds no StreamResponse member but is a bare v0.3-shaped object
    (langgraph-api's v1.0 stream sends ``kind: "status-update"`` events after its
    first): read it as the member its ``kind`` names. Else ``resp`` as it was."""
    doc = _any_decoder.decode(data)
    kind = doc.get("kind") if isinstance(doc, dict) else None
    member = _V03_KINDS.get(kind) if isinstance(kind, str) else None
    if member is None:
        return resp
    wrapped: w.StreamResponse = _STREAM_RESPONSE.document({member: doc}, method)
    return wrapped


def _result_in(call: c.Call, method: str, data: bytes) -> c.Result:
    try:
        if isinstance(call, c.SendMessage | c.SubscribeToTask):
            if isinstance(call, c.SubscribeToTask) or call.streaming:
                stream_resp: w.StreamResponse = _STREAM_RESPONSE.result(data, method)
                if stream_resp.task is None and stream_resp.message is None:
                    stream_resp = _v03_shaped(data, stream_resp, method)
                item = w.stream_item_in(stream_resp)
                if isinstance(item, m.Task | m.Message):
                    return item
                raise w.WireError("", "must hold a task or a message")
            resp: w.SendMessageResponse = _SEND_RESPONSE.result(data, method)
            if (resp.task is None) == (resp.message is None):
                raise w.WireError("", "must hold exactly one of task, message")
            if resp.task is not None:
                return field_in("task", w.task_in, resp.task)
            return field_in("message", w.message_in, resp.message)
        if isinstance(call, c.GetTask | c.CancelTask):
            return w.task_in(_TASK.result(data, method))
        if isinstance(call, c.ListTasks):
            page: w.ListTasksResponse = _LIST_TASKS_RESPONSE.result(data, method)
            return c.ListTasksResult(
                tasks=each_in("tasks", page.tasks or [], w.task_in),
                next_page_token=page.next_page_token or "",
                page_size=page.page_size or 0,
                total_size=page.total_size or 0,
            )
        if isinstance(call, c.SetPushConfig | c.GetPushConfig):
            return w.push_config_in(_PUSH_CONFIG.result(data, method), request=False)
        if isinstance(call, c.ListPushConfigs):
            listed: w.ListTaskPushNotificationConfigsResponse = _LIST_PUSH_RESPONSE.result(
                data, method
            )
            configs = each_in("configs", listed.configs or [],
                              lambda p: w.push_config_in(p, request=False))
            if call.paged:  # the page asked for, with the token of the next
                return c.PushConfigsPage(configs=configs,
                                         next_page_token=listed.next_page_token or "")
            return configs
        if isinstance(call, c.DeletePushConfig):
            return None  # google.protobuf.Empty: ``null`` or ``{}``
        return w.card_in(_CARD.result(data, method))
    except w.WireError as exc:
        raise _bad_result(method, exc) from None


# ------------------------------------------------------------------------ errors

# Listed parents first: a code shared by several errors maps to the first one
# unless ErrorInfo.reason names another.
_ERROR_CLASSES: tuple[type[A2AError], ...] = (
    *V03_ERROR_CLASSES.values(),  # the codes v1.0 kept from v0.3
    ExtensionSupportRequired,
    VersionNotSupported,
    AuthenticationRequired,
    AuthorizationFailed,
    RateLimitExceeded,
    ResourceUnavailable,
)
_BY_CODE: dict[int, type[A2AError]] = {}
_BY_CODE_AND_REASON: dict[tuple[int, str], type[A2AError]] = {}
for _cls in _ERROR_CLASSES:
    _code = _cls.code
    _BY_CODE.setdefault(_code, _cls)
    _BY_CODE_AND_REASON.setdefault((_code, _cls.reason), _cls)


def _metadata_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return _encoder.encode(value).decode()
    except (TypeError, ValueError, OverflowError):
        return str(value)


def _error_details(data: Any, reason: str) -> list[Any]:
    if isinstance(data, list) and data and all(isinstance(d, dict) and "@type" in d for d in data):
        return data  # already google.rpc details (a peer's error passed on)
    metadata: dict[str, str] | None = None
    if isinstance(data, dict):
        metadata = {str(k): _metadata_value(v) for k, v in data.items() if v is not None}
    elif data is not None:
        metadata = {"data": _metadata_value(data)}
    return [
        w.ErrorInfo(
            type_=w.ERROR_INFO_TYPE, reason=reason, domain=w.ERROR_DOMAIN, metadata=metadata or None
        )
    ]


def encode_status(error: A2AError, http_status: int) -> bytes:
    """``error`` as the ``google.rpc.Status`` JSON an HTTP+JSON answer carries:
    ``{"error": {code, status, message, details: [ErrorInfo]}}``, ``code`` being
    the HTTP status (AIP-193, as v1.0's HTTP+JSON binding uses it)."""
    return _encoder.encode({"error": {
        "code": http_status,
        "status": error.grpc_status,
        "message": error.message,
        "details": _error_details(error.data, error.reason),
    }})


def _error_in(error: Any) -> A2AError:
    if not isinstance(error, dict):
        return RemoteError(-32603, "Malformed error object", data=error)
    code = error.get("code")
    message = error.get("message")
    data = error.get("data")
    if not isinstance(message, str):
        message = "" if message is None else _metadata_value(message)
    if not isinstance(code, int) or isinstance(code, bool):
        return RemoteError(-32603, message or "Malformed error object", data=error)
    infos = (
        [d for d in data if isinstance(d, dict) and d.get("@type") == w.ERROR_INFO_TYPE]
        if isinstance(data, list)
        else []
    )
    reason = infos[0].get("reason") if infos else None
    cls = _BY_CODE_AND_REASON.get((code, reason)) if isinstance(reason, str) else None
    cls = cls or _BY_CODE.get(code)
    if cls is None:
        return RemoteError(code, message, data=data)
    if isinstance(data, list) and len(data) == 1 and infos:
        # a lone ErrorInfo: its metadata is what the peer meant as ``data``
        meta = infos[0].get("metadata")
        data = meta if isinstance(meta, dict) and meta else None
    return cls(message or None, data=data)


_BY_REASON: dict[str, type[A2AError]] = {}
for _cls in _ERROR_CLASSES:
    _BY_REASON.setdefault(_cls.reason, _cls)


def decode_status(doc: Any) -> A2AError | None:
    """The ``google.rpc.Status`` JSON of an HTTP+JSON answer (``{"error": {...}}``)
    -> the canonical error its ErrorInfo ``reason`` names (as ``encode_status``
    writes it). None when ``doc`` is no such object or names no known reason."""
    error = doc.get("error") if isinstance(doc, dict) else None
    if not isinstance(error, dict):
        return None
    details = error.get("details")
    infos = (
        [d for d in details if isinstance(d, dict) and d.get("@type") == w.ERROR_INFO_TYPE]
        if isinstance(details, list)
        else []
    )
    reason = infos[0].get("reason") if infos else None
    cls = _BY_REASON.get(reason) if isinstance(reason, str) else None
    if cls is None:
        return None
    # read as the JSON-RPC error of the same reason, so both bindings raise alike
    return _error_in({"code": cls.code, "message": error.get("message"),
                      "data": details})


# ------------------------------------------------------------------------- codec


class V1Codec(Codec):
    name = "1.0"
    methods = frozenset(_CALL_READERS)
    streaming_methods = frozenset({"SendStreamingMessage", "SubscribeToTask"})
    versions = frozenset({"1.0"})
    needs_version_header = True
    # spec v1.0 §3.1.6: a subscription lasts to the task's end, and a finished task
    # has nothing to subscribe to
    follows_interruptions = True
    refuses_finished_subscription = True
    push_mode = "event"
    media_type = "application/a2a+json"
    push_version = "1.0"
    lists_tasks = True
    nearest = ("0.3", "0.1")
    protojson = "1.0"  # its JSON is ProtoJSON already
    grpc_service = "lf.a2a.v1.A2AService"

    named_stream_errors = True

    def member_path(self, path: list[str]) -> list[str]:
        # a send's config is its ``taskPushNotificationConfig``; a create's params are
        # the config itself; its authentication names one ``scheme``
        if path[:2] == ["configuration", "pushNotificationConfig"]:
            path = ["configuration", "taskPushNotificationConfig", *path[2:]]
        elif path[:1] == ["pushNotificationConfig"]:
            path = path[1:]
        if path[-3:-1] == ["authentication", "schemes"] and path[-1].startswith("["):
            path = [*path[:-2], "scheme"]
        return path

    def encode_http_error(self, error: A2AError, status: int) -> bytes:
        return encode_status(error, status)

    def decode_http_error(self, doc: Any, status: int = 0,
                          task_route: bool = False) -> A2AError | None:
        return decode_status(doc)

    # ------------------------------------------------------------ server side

    def decode_call(self, method: str, params: bytes | None) -> c.Call:
        reader = _CALL_READERS.get(method)
        if reader is None:
            raise method_not_found(method)
        try:
            return reader(method, params)
        except w.WireError as exc:
            raise _bad_params(method, exc) from None

    def for_answer(self, call: c.Call) -> c.Call:
        if type(call) is c.ListTasks:
            # written as v1.0 JSON: a store may hand over tasks in that form
            return msgspec.structs.replace(call, v1_json=True)
        return call

    def encode_result(self, call: c.Call, result: c.Result) -> bytes:
        if type(result) is m.Task and type(call) is c.SendMessage:  # _result_out's first case
            return _encoder.encode(w.SendMessageResponse(task=w.task_out(result)))
        wire = _result_out(call, result)
        if long_polled(call) and isinstance(result, m.Task) and result.generation:
            # a caller that polls by generation reads them: without the task's it
            # could not name the next one to wait past
            wire.generation = str(result.generation)
        return b"null" if wire is None else _encoder.encode(wire)

    def encode_error(self, error: A2AError) -> bytes:
        return _encoder.encode(
            w.ErrorObject(
                code=self.code_of(error),
                message=error.message,
                data=_error_details(error.data, error.reason),
            )
        )

    def encode_stream_item(self, item: StreamItem) -> bytes:
        if type(item) is m.ArtifactUpdate:
            fast = _text_chunk(item)
            if fast is not None:
                return fast
        return _encoder.encode(w.stream_item_out(item))

    # ------------------------------------------------------------ client side

    def encode_call(self, call: c.Call) -> tuple[str, bytes]:
        method, wire = _call_out(call)
        return method, _encoder.encode(wire)

    def decode_result(self, call: c.Call, result: bytes) -> c.Result:
        return _result_in(call, _method_of(call), result)

    def decode_stream_item(self, result: bytes) -> StreamItem:
        try:
            resp = _STREAM_RESPONSE.result(result, "a stream")
            if (resp.status_update is None and resp.artifact_update is None
                    and resp.task is None and resp.message is None):
                resp = _v03_shaped(result, resp, "a stream")
            return w.stream_item_in(resp)
        except w.WireError as exc:
            raise _bad_result("a stream", exc) from None

    def decode_error(self, error: Any) -> A2AError:
        return _error_in(error)


# ---------------------------------------------------------------------- the card


def encode_card_v1(card: m.AgentCard) -> dict[str, Any]:
    """The card as a v1.0 ProtoJSON document (a dict, for the hybrid well-known card)."""
    doc: dict[str, Any] = msgspec.to_builtins(w.card_out(card))
    return doc


def decode_card_v1(doc: dict[str, Any]) -> m.AgentCard:
    """A v1.0 card document -> the model; ``InvalidAgentResponse`` when it is not one.

    Members of other versions (a hybrid card's ``url``, ``preferredTransport`` …)
    are ignored; the v0.3 ``security`` list is read when ``securityRequirements``
    is absent.
    """
    try:
        return w.card_in(_CARD.document(doc, "the agent card"))
    except w.WireError as exc:
        raise _bad_result("the agent card", exc) from None


_json = _encoder.encode


def _text_chunk(u: m.ArtifactUpdate) -> bytes | None:
    """The encoding of an artifact update of plain text parts, or None for any other.

    The most frequent stream event by far; joining it from encoded strings
    costs much less than building its wire structs and encoding those
    (``benchmarks/run.py --only stream`` shows it). Byte for byte what the
    generic path gives (tests/dialects/test_v1_fast_path.py).
    """
    a = u.artifact
    if (u.metadata is not None or a.name is not None or a.description is not None
            or a.metadata is not None or a.extensions):
        return None
    texts = []
    for p in a.parts:
        if (type(p) is not m.TextPart or p.metadata is not None or p.filename is not None
                or p.media_type is not None):
            return None
        texts.append(b'{"text":' + _json(p.text) + b"}")
    global _last_head
    key = (u.task_id, u.context_id, a.artifact_id)
    last = _last_head
    if last[0] == key:
        head = last[1]
    else:
        head = b"".join((
            b'{"artifactUpdate":{"taskId":', _json(u.task_id),
            b',"contextId":', _json(u.context_id),
            b',"artifact":{"artifactId":', _json(a.artifact_id),
            b',"parts":[',
        ))
        _last_head = (key, head)  # one tuple, swapped whole: safe across threads
    return b"".join((
        head, b",".join(texts), b"]}",
        b',"append":true' if u.append else b"",
        b',"lastChunk":true' if u.last_chunk else b"",
        b"}}",
    ))


#: the ids of the artifact whose chunks were encoded last, and the encoding they
#: open with: a stream's chunks come one artifact at a time, and encoding the
#: same three ids again for each of them was about a quarter of a chunk's
#: encoding (1.4 against 1.0 µs for a short text chunk)
_last_head: tuple[tuple[str, str, str] | None, bytes] = (None, b"")
