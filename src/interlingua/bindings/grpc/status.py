"""An ``A2AError`` as a gRPC status: its code, its message, and a
``google.rpc.Status`` with one ``google.rpc.ErrorInfo`` in the
``grpc-status-details-bin`` trailer (DIALECTS.md §f.2).

The two messages are small and fixed, so they are written here in protobuf's
wire format rather than pulled in with the googleapis protos.
"""

from __future__ import annotations

from typing import Any

import grpc
import msgspec

from ...core.errors import A2AError

__all__ = ["DETAILS_KEY", "ERROR_DOMAIN", "ERROR_INFO_TYPE", "code_of", "status_details"]

DETAILS_KEY = "grpc-status-details-bin"
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN = "a2a-protocol.org"

_CODES = {c.name: c for c in grpc.StatusCode}


def code_of(error: A2AError) -> grpc.StatusCode:
    return _CODES.get(error.grpc_status, grpc.StatusCode.INTERNAL)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, ValueError, OverflowError):
        return str(value)


def error_info(reason: str, metadata: dict[str, str] | None = None) -> bytes:
    """``google.rpc.ErrorInfo {reason = 1; domain = 2; map<string, string> metadata = 3}``."""
    out = _field(1, reason.encode()) + _field(2, ERROR_DOMAIN.encode())
    for key, value in (metadata or {}).items():
        out += _field(3, _field(1, key.encode()) + _field(2, value.encode()))
    return out


def status_details(error: A2AError) -> bytes:
    """``google.rpc.Status {int32 code = 1; string message = 2; repeated Any details = 3}``."""
    data = error.data
    metadata: dict[str, str] | None = None
    if isinstance(data, dict):
        metadata = {str(k): _text(v) for k, v in data.items() if v is not None}
    elif data is not None:
        metadata = {"data": _text(data)}
    any_info = _field(1, ERROR_INFO_TYPE.encode()) + _field(2, error_info(error.reason, metadata))
    code = code_of(error).value[0]
    out = b""
    if code:
        out += _varint(1 << 3 | 0) + _varint(code)
    if error.message:
        out += _field(2, error.message.encode())
    return out + _field(3, any_info)
