"""JSON-RPC error codes where a dialect's differ from the error's own ``code``.

Codes -32006…-32011 were reassigned after v0.1, and v0.3 has no codes of its own
for two later errors: each codec holds its table (``Codec.error_codes``) and
writes ``Codec.code_of(error)``. Tables are keyed by error class and inherited
as a class attribute would be: the nearest class of an error's MRO that any
table names decides, with its code in this table or else the error's own
``code`` (so ``InvalidTaskState`` is -32009 in v0.1 although its base
``UnsupportedOperation`` is -32004 everywhere).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    ExtendedCardNotConfigured,
    ExtendedCardNotSupported,
    ExtensionSupportRequired,
    InvalidAgentResponse,
    InvalidTaskState,
    RateLimitExceeded,
    RemoteError,
    ResourceUnavailable,
    StreamingNotSupported,
    TaskGenerationMismatch,
    VersionNotSupported,
)

__all__ = ["V01_CODES", "V03_CODES", "code_in"]

Codes = Mapping[type[A2AError], int]

V01_CODES: Codes = {
    InvalidTaskState: -32009,
    StreamingNotSupported: -32006,
    InvalidAgentResponse: -32603,
    ExtendedCardNotConfigured: -32004,
    ExtensionSupportRequired: -32600,
    VersionNotSupported: -32600,
    AuthenticationRequired: -32007,
    AuthorizationFailed: -32008,
    RateLimitExceeded: -32010,
    ResourceUnavailable: -32011,
    # newer than the dialect, and its code there is RateLimitExceeded's
    TaskGenerationMismatch: -32600,
}

# v0.2/v0.3 (and its variants): errors newer than the dialect are invalid requests
V03_CODES: Codes = {
    # the only error v0.3's schema has for an extended card it cannot have (its SDK's too)
    ExtendedCardNotSupported: -32007,
    ExtensionSupportRequired: -32600,
    VersionNotSupported: -32600,
    TaskGenerationMismatch: -32600,
}

#: the classes some table names: the nearest of them in an error's MRO decides
_NAMED = frozenset(V01_CODES) | frozenset(V03_CODES)


def code_in(codes: Codes, error: A2AError | type[A2AError]) -> int:
    """The code of ``error`` under the table ``codes``; a peer's error keeps its code."""
    if isinstance(error, RemoteError):
        return error.remote_code
    cls = error if isinstance(error, type) else type(error)
    for base in cls.__mro__:
        if base in _NAMED:
            return codes.get(base, error.code)
    return error.code
