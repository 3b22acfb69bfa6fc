"""Errors of the A2A protocol and of this library.

    A2AError                      anything that can be answered to a peer
    ├── JSONRPCError              envelope-level failures (all versions agree)
    │   ├── ParseError            -32700
    │   ├── InvalidRequest        -32600
    │   ├── MethodNotFound        -32601
    │   ├── InvalidParams         -32602
    │   └── InternalError         -32603
    ├── TaskNotFound              -32001
    ├── TaskNotCancelable         -32002
    ├── PushNotSupported          -32003
    ├── UnsupportedOperation      -32004
    │   ├── InvalidTaskState      (v0.1: -32009; later: -32004)
    │   ├── StreamingNotSupported (v0.1: -32006; later: -32004)
    │   └── ExtendedCardNotSupported (v0.3: -32007; else -32004)
    ├── ContentTypeNotSupported   -32005
    ├── InvalidAgentResponse      -32006 (v0.2+)
    ├── ExtendedCardNotConfigured -32007 (v0.3+)
    ├── ExtensionSupportRequired  -32008 (v1.0)
    ├── VersionNotSupported       -32009 (v1.0)
    ├── AuthenticationRequired    (v0.1: -32007; later: HTTP 401, generic body)
    ├── AuthorizationFailed       (v0.1: -32008; later: HTTP 403, generic body)
    ├── RateLimitExceeded         (v0.1: -32010; later: HTTP 429, generic body)
    └── ResourceUnavailable       (v0.1: -32011; later: -32603)

    ConcurrentModification        a store write based on a stale version (internal)
    LifecycleError                an event the task's state does not allow (internal)

Codes -32006…-32011 were reassigned after v0.1: where a dialect's code differs
from the one above, its codec's table says so (``core/dialects/_codes.py``,
``Codec.code_of``).
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "A2AError",
    "AuthenticationRequired",
    "AuthorizationFailed",
    "ConcurrentModification",
    "ContentTypeNotSupported",
    "ExtendedCardNotConfigured",
    "ExtendedCardNotSupported",
    "ExtensionSupportRequired",
    "InternalError",
    "InvalidAgentResponse",
    "InvalidParams",
    "InvalidRequest",
    "InvalidTaskState",
    "JSONRPCError",
    "LifecycleError",
    "MethodNotFound",
    "ParseError",
    "PushNotSupported",
    "RateLimitExceeded",
    "RemoteError",
    "ResourceUnavailable",
    "StreamingNotSupported",
    "TaskGenerationMismatch",
    "TaskNotCancelable",
    "TaskNotFound",
    "UnsupportedOperation",
    "VersionNotSupported",
    "method_not_found",
    "no_push_config",
    "quoted",
    "task_not_found",
]


class A2AError(Exception):
    """An error that is answered to the peer in its own dialect."""

    #: the JSON-RPC code (where a dialect's differs, its codec says: ``Codec.code_of``)
    code: ClassVar[int] = -32603
    http_status: ClassVar[int] = 500
    grpc_status: ClassVar[str] = "INTERNAL"
    reason: ClassVar[str] = "INTERNAL_ERROR"
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, message: str | None = None, *, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)



class JSONRPCError(A2AError):
    pass


class ParseError(JSONRPCError):
    code = -32700
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    reason = "PARSE_ERROR"
    default_message = "Parse error: the body is not valid JSON"


class InvalidRequest(JSONRPCError):
    code = -32600
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    reason = "INVALID_REQUEST"
    default_message = "Invalid Request"


class MethodNotFound(JSONRPCError):
    code = -32601
    http_status = 404
    grpc_status = "NOT_FOUND"
    reason = "METHOD_NOT_FOUND"
    default_message = "Method not found"


class InvalidParams(JSONRPCError):
    code = -32602
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    reason = "INVALID_PARAMS"
    default_message = "Invalid params"


class InternalError(JSONRPCError):
    code = -32603


class TaskNotFound(A2AError):
    code = -32001
    http_status = 404
    grpc_status = "NOT_FOUND"
    reason = "TASK_NOT_FOUND"
    default_message = "Task not found"


class TaskNotCancelable(A2AError):
    code = -32002
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    reason = "TASK_NOT_CANCELABLE"
    default_message = "Task cannot be canceled"


class PushNotSupported(A2AError):
    code = -32003
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"
    default_message = "Push notifications are not supported"


class UnsupportedOperation(A2AError):
    code = -32004
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    reason = "UNSUPPORTED_OPERATION"
    default_message = "This operation is not supported"


class InvalidTaskState(UnsupportedOperation):
    """The task's state does not allow the request (a message to a finished task)."""

    default_message = "The task's state does not allow this request"


class StreamingNotSupported(UnsupportedOperation):
    default_message = "Streaming is not supported by this agent"


class ExtendedCardNotSupported(UnsupportedOperation):
    """GetExtendedAgentCard of an agent whose card does not offer one
    (``capabilities.extendedAgentCard`` false or absent): UnsupportedOperationError
    (v1.0 §3.3.4). v0.3's schema has only -32007 for it, which its SDK answers."""

    default_message = ("This agent offers no extended agent card "
                       "(its card says extendedAgentCard: false)")


class ContentTypeNotSupported(A2AError):
    code = -32005
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    reason = "CONTENT_TYPE_NOT_SUPPORTED"
    default_message = "Incompatible content types"


class InvalidAgentResponse(A2AError):
    code = -32006
    http_status = 500
    grpc_status = "INTERNAL"
    reason = "INVALID_AGENT_RESPONSE"
    default_message = "Invalid agent response"


class ExtendedCardNotConfigured(A2AError):
    code = -32007
    # v0.1 has no extended card, and -32007 means something else there.
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    default_message = "No extended agent card is configured"


class ExtensionSupportRequired(A2AError):
    code = -32008
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    reason = "EXTENSION_SUPPORT_REQUIRED"
    default_message = "A required extension is not supported by the client"


class VersionNotSupported(A2AError):
    code = -32009
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    reason = "VERSION_NOT_SUPPORTED"
    default_message = "This A2A protocol version is not supported"


class AuthenticationRequired(A2AError):
    code = -32600
    http_status = 401
    grpc_status = "UNAUTHENTICATED"
    reason = "UNAUTHENTICATED"
    default_message = "Authentication required"


class AuthorizationFailed(A2AError):
    code = -32600
    http_status = 403
    grpc_status = "PERMISSION_DENIED"
    reason = "PERMISSION_DENIED"
    default_message = "Not allowed"


class RateLimitExceeded(A2AError):
    code = -32603
    http_status = 429
    grpc_status = "RESOURCE_EXHAUSTED"
    reason = "RATE_LIMIT_EXCEEDED"
    default_message = "Rate limit exceeded"


class ResourceUnavailable(A2AError):
    code = -32603
    http_status = 503
    grpc_status = "UNAVAILABLE"
    reason = "RESOURCE_UNAVAILABLE"
    default_message = "Resource unavailable"


class StoreDown(ResourceUnavailable):
    """The task store cannot be reached, or is held by another process: 503 with
    ``Retry-After``, to try again shortly (or, behind a load balancer, on another
    replica)."""

    retry_after = 1


class RemoteError(A2AError):
    """An error answered by a peer, as seen by our client: it keeps the peer's code."""

    def __init__(self, code: int, message: str, *, data: Any = None) -> None:
        super().__init__(message, data=data)
        #: the peer's code, which every codec writes as it is (``Codec.code_of``)
        self.remote_code = code


class ConcurrentModification(Exception):
    """A store write stated a version that is no longer current."""


class LifecycleError(Exception):
    """An event that the task's current state does not allow."""

    def __init__(self, message: str, *, state: object = None, event: object = None) -> None:
        super().__init__(message)
        self.state = state
        self.event = event


class TaskGenerationMismatch(A2AError):
    """A follow-up's ``ifGenerationMatch`` is not the task's generation (A2A 1.1,
    draft): the caller re-reads the task before it sends again. ``data`` holds
    taskId, expectedGeneration and currentGeneration (the last two as strings,
    as ProtoJSON writes an int64)."""

    code = -32010
    http_status = 409
    grpc_status = "ABORTED"
    reason = "TASK_GENERATION_MISMATCH"
    default_message = "Task generation mismatch"


def quoted(raw: str, limit: int = 40) -> str:
    """A caller's value as a refusal quotes it: repr, cut to ``limit`` characters (the
    refusal of a megabyte value is not a megabyte long, nor past gRPC's metadata limit)."""
    return repr(raw) if len(raw) <= limit else repr(raw[:limit]) + f"... ({len(raw)} characters)"


def header_text(raw: str) -> str:
    """A header's value as its sender wrote it, for a refusal to quote: HTTP servers hand
    header bytes over one character a byte (latin-1), so UTF-8, as clients send it, is
    read back ("²", not the mojibake "Â²"). A value that does not read so is left as it
    is: bytes that are no UTF-8 (latin-1 is what HTTP reads them as), or text already
    (a query parameter's %-escapes, an MQTT user property)."""
    if raw.isascii():
        return raw
    try:
        return raw.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return raw


def task_not_found(task_id: str) -> TaskNotFound:
    """``TaskNotFound`` naming the caller's id: as it is when it is of an id's usual
    length (a UUID, a prefixed one), else ``quoted`` (cut), so that no binding echoes a
    megabyte id whole (gRPC's trailers could not even carry it)."""
    shown = task_id if len(task_id) <= 64 and task_id.isprintable() else quoted(task_id)
    return TaskNotFound(f"Task not found: {shown}")


def no_push_config(task_id: str, config_id: str | None = None) -> TaskNotFound:
    """``TaskNotFound`` for a push config the task has not (v1.0 §3.1.8), in every
    dialect: the one named ``config_id``, or (None) any."""
    named = f" with id {quoted(config_id)}" if config_id is not None else ""
    return TaskNotFound(f"Not found: task {task_id} has no push notification config{named}")


def method_not_found(method: str) -> MethodNotFound:
    """``MethodNotFound`` naming the caller's method ``quoted`` (cut): a method of
    20,000 characters is not echoed whole."""
    return MethodNotFound(f"Method not found: {quoted(method)}")
