"""Error bodies and HTTP statuses of the HTTP+JSON binding (DIALECTS.md §f.2).

v1.0 answers a ``google.rpc.Status`` JSON object with an ``ErrorInfo`` (reason,
domain ``a2a-protocol.org``) and the error's own HTTP status. v0.3 answers
``{"code": …, "message": …, "type": …}`` with the statuses the v0.3 SDK gave: 409 for a task
that cannot be canceled, 501 for what is not supported, 415, 422 for bad params, 502. The
official v0.3 SDKs each read one half of that body: the Python one the ``type`` by name,
the JavaScript one the v0.3 JSON-RPC ``code``.
"""

from __future__ import annotations

import msgspec

from ...core.dialects.v1_0 import encode_status
from ...core.errors import (
    A2AError,
    ContentTypeNotSupported,
    ExtendedCardNotConfigured,
    InvalidAgentResponse,
    InvalidParams,
    MethodNotFound,
    PushNotSupported,
    TaskNotCancelable,
    UnsupportedOperation,
)

__all__ = ["MethodNotAllowed", "error_body", "http_status"]


class MethodNotAllowed(MethodNotFound):
    """A route asked for with a verb it does not take."""

    http_status = 405
    grpc_status = "UNIMPLEMENTED"
    reason = "METHOD_NOT_ALLOWED"
    default_message = "Method not allowed"


# v0.3's statuses where they differ from the error's own (v1.0's)
_V03_STATUS: tuple[tuple[type[A2AError], int], ...] = (
    (TaskNotCancelable, 409),
    (PushNotSupported, 501),
    (UnsupportedOperation, 501),
    (ContentTypeNotSupported, 415),
    (InvalidAgentResponse, 502),
    (ExtendedCardNotConfigured, 404),
    (InvalidParams, 422),
)


def http_status(error: A2AError, dialect: str) -> int:
    if dialect == "0.3":
        for cls, status in _V03_STATUS:
            if isinstance(error, cls):
                return status
    return error.http_status


# v0.3: the error's type by name beside its message, as the official SDK's v0.3 routes
# answer and its v0.3 REST client reads (a bare 404 is "method not found" to it)
_V03_TYPE = {
    "TASK_NOT_FOUND": "TaskNotFoundError",
    "TASK_NOT_CANCELABLE": "TaskNotCancelableError",
    "PUSH_NOTIFICATION_NOT_SUPPORTED": "PushNotificationNotSupportedError",
    "UNSUPPORTED_OPERATION": "UnsupportedOperationError",
    "CONTENT_TYPE_NOT_SUPPORTED": "ContentTypeNotSupportedError",
    "INVALID_AGENT_RESPONSE": "InvalidAgentResponseError",
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": "ExtendedAgentCardNotConfiguredError",
    "EXTENSION_SUPPORT_REQUIRED": "ExtensionSupportRequiredError",
    "VERSION_NOT_SUPPORTED": "VersionNotSupportedError",
    "INVALID_PARAMS": "InvalidParamsError",
    "INVALID_REQUEST": "InvalidRequestError",
    "PARSE_ERROR": "JSONParseError",
    "METHOD_NOT_FOUND": "MethodNotFoundError",
    "INTERNAL_ERROR": "InternalError",
}


def error_body(error: A2AError, dialect: str, status: int) -> bytes:
    if dialect == "0.3":
        kind = _V03_TYPE.get(error.reason)
        if kind is None:
            return msgspec.json.encode({"message": error.message})
        return msgspec.json.encode({"code": error.code_for("0.3"), "message": error.message,
                                    "type": kind})
    return encode_status(error, status)
