"""Error bodies and HTTP statuses of the HTTP+JSON binding (DIALECTS.md §f.2).

v1.0 answers a ``google.rpc.Status`` JSON object with an ``ErrorInfo`` (reason,
domain ``a2a-protocol.org``) and the error's own HTTP status. v0.3 answers
``{"code": …, "message": …, "type": …}`` with the statuses the v0.3 SDK gave: 409 for a task
that cannot be canceled, 501 for what is not supported, 415, 422 for bad params, 502. The
official v0.3 SDKs each read one half of that body: the Python one the ``type`` by name,
the JavaScript one the v0.3 JSON-RPC ``code``. Each body is its codec's
(``Codec.encode_http_error``).
"""

from __future__ import annotations

from ...core.dialects import Codec
from ...core.errors import A2AError, MethodNotFound

__all__ = ["MethodNotAllowed", "error_body", "http_status"]


class MethodNotAllowed(MethodNotFound):
    """A route asked for with a verb it does not take."""

    http_status = 405
    grpc_status = "UNIMPLEMENTED"
    reason = "METHOD_NOT_ALLOWED"
    default_message = "Method not allowed"


def http_status(error: A2AError, codec: Codec) -> int:
    return codec.http_status(error)


def error_body(error: A2AError, codec: Codec, status: int) -> bytes:
    return codec.encode_http_error(error, status)
