"""Reading a gRPC error: the ``google.rpc.Status`` in ``grpc-status-details-bin``,
its ``google.rpc.ErrorInfo``, and the status code when there is neither (which an
HTTP+JSON ``Status`` body without an ErrorInfo is read by too: ``error_of_code``).

No grpc import here (the status code comes as its name), so this is testable on
its own. The two messages are small and fixed, so they are read from protobuf's
wire format directly rather than pulled in with the googleapis protos; the server
writes them the same way (``bindings/grpc/status.py``).
"""

from __future__ import annotations

from typing import Any

from ..core.dialects.v1_0 import decode_status
from ..core.errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    InternalError,
    InvalidParams,
    MethodNotFound,
    RateLimitExceeded,
    TaskNotFound,
    UnsupportedOperation,
)
from .errors import AgentTimeout, AgentUnreachable, ClientError, NotConnected
from .generations import mismatch_in, mismatch_of_status

__all__ = ["DETAILS_KEY", "error_of", "error_of_code", "read_status"]

DETAILS_KEY = "grpc-status-details-bin"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


class _Truncated(ValueError):
    pass


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """The (number, value) pairs of a protobuf message: varints and length-delimited
    values (the only wire types Status, Any and ErrorInfo use; others are skipped)."""
    out: list[tuple[int, int | bytes]] = []
    i, n = 0, len(data)

    def varint() -> int:
        nonlocal i
        shift = result = 0
        while True:
            if i >= n or shift > 63:
                raise _Truncated
            byte = data[i]
            i += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    while i < n:
        key = varint()
        number, kind = key >> 3, key & 7
        if kind == 0:
            out.append((number, varint()))
        elif kind == 2:
            size = varint()
            if i + size > n:
                raise _Truncated
            out.append((number, data[i:i + size]))
            i += size
        elif kind == 1:
            i += 8
        elif kind == 5:
            i += 4
        else:
            raise _Truncated
    return out


def _text(value: int | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def read_status(data: bytes) -> dict[str, Any] | None:
    """``google.rpc.Status`` bytes -> its JSON form (``{"code", "message", "details"}``
    with each ErrorInfo as ``{"@type", "reason", "domain", "metadata"}``); None when
    the bytes are not one."""
    try:
        status: dict[str, Any] = {"code": 0, "message": "", "details": []}
        for number, value in _fields(data):
            if number == 1 and isinstance(value, int):
                status["code"] = value
            elif number == 2:
                status["message"] = _text(value)
            elif number == 3 and isinstance(value, bytes):
                any_ = dict(_fields(value))
                type_url = _text(any_.get(1, b""))
                detail: dict[str, Any] = {"@type": type_url}
                payload = any_.get(2, b"")
                if type_url == _ERROR_INFO and isinstance(payload, bytes):
                    metadata: dict[str, str] = {}
                    for k, v in _fields(payload):
                        if k == 1:
                            detail["reason"] = _text(v)
                        elif k == 2:
                            detail["domain"] = _text(v)
                        elif k == 3 and isinstance(v, bytes):
                            entry = dict(_fields(v))
                            metadata[_text(entry.get(1, b""))] = _text(entry.get(2, b""))
                    if metadata:
                        detail["metadata"] = metadata
                status["details"].append(detail)
        return status
    except _Truncated:
        return None


# v0.3 SDK servers send no details: the message starts with the error's type
# (``TaskNotFoundError: …``), the names v0.3's HTTP+JSON bodies use.
def _v03_named(message: str) -> A2AError | None:
    from ..core.dialects.v0_3_protojson import ERROR_TYPES

    name, sep, rest = message.partition(":")
    cls = ERROR_TYPES.get(name.strip()) if sep else None
    return cls(rest.strip() or None) if cls is not None else None


# what a bare status code means when nothing more is said
_BY_CODE: dict[str, type[A2AError]] = {
    "UNAUTHENTICATED": AuthenticationRequired,
    "PERMISSION_DENIED": AuthorizationFailed,
    "RESOURCE_EXHAUSTED": RateLimitExceeded,
    "INVALID_ARGUMENT": InvalidParams,
    "NOT_FOUND": TaskNotFound,
    "FAILED_PRECONDITION": UnsupportedOperation,
    "INTERNAL": InternalError,
}


def error_of_code(code: str, message: str, origin: str) -> A2AError | None:
    """The error a bare status code (its ``google.rpc.Code`` name: a gRPC status's, an
    HTTP+JSON ``Status`` body's ``status``) stands for when no ErrorInfo says more, so
    that both bindings read one status alike; ``origin`` says where it came from. None
    for a code no A2A error answers."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return None
    return cls(f"{message} ({origin})" if message else None)


def error_of(code: str, message: str, details: bytes | None, target: str,
             *, timeout: float | None = None) -> Exception:
    """A failed RPC (its status code's name, its message, the details trailer) ->
    the ``A2AError`` its ErrorInfo names, or the client error its code stands for."""
    if details:
        status = read_status(details)
        if status is not None:
            err = decode_status({"error": status}) or mismatch_of_status(status)
            if err is not None:
                return mismatch_in(err)
    named = _v03_named(message)
    if named is not None:
        return named
    if code == "UNAVAILABLE":
        # gRPC's own word for a channel that never connected: nothing was sent
        unsent = "failed to connect to all addresses" in message
        failed = NotConnected if unsent else AgentUnreachable
        return failed(f"cannot reach {target}: {message or 'unavailable'}")
    if code == "CANCELLED":
        return AgentUnreachable(f"the call to {target} was cancelled: {message}")
    if code == "DEADLINE_EXCEEDED":
        limit = f" within {timeout:g} s" if timeout is not None else ""
        return AgentTimeout(f"{target} did not answer{limit}")
    if code == "UNIMPLEMENTED":
        # the service or method is not served here: another binding may be
        return MethodNotFound(f"{target} does not serve this method over gRPC ({message})")
    err = error_of_code(code, message, f"gRPC {code} from {target}")
    if err is not None:
        return err
    return ClientError(f"{target} answered gRPC {code}: {message}")
