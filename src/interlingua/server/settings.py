"""Settings of an agent server."""

from __future__ import annotations

import msgspec

__all__ = ["ServerSettings"]


class ServerSettings(msgspec.Struct, kw_only=True):
    #: the base URL clients reach the server at; used in the card
    public_url: str = "http://localhost:8000"
    #: where JSON-RPC is served
    rpc_path: str = "/"
    #: bodies larger than this are refused before they are parsed (HTTP 413)
    max_body_bytes: int = 10 * 1024 * 1024
    #: requests one JSON-RPC batch may hold; a larger batch is one -32600 and runs nothing
    max_batch_items: int = 100
    #: bytes of one answer (a whole JSON-RPC batch's together): what would pass it is
    #: refused with an error naming the limit (JSON-RPC -32603, HTTP 500, gRPC
    #: RESOURCE_EXHAUSTED)
    max_answer_bytes: int = 16 * 1024 * 1024
    #: True: apply the spec's rule that a missing A2A-Version header means 0.3,
    #: and refuse a header that contradicts the method's dialect
    strict_versions: bool = False
    #: True: refuse payloads that mix dialects (v0.1 "type" parts beside v0.2
    #: "kind", a v0.1 task id beside snake_case SAM fields) instead of reading
    #: them by their strongest marker
    strict_dialects: bool = False
    #: whether the HTTP+JSON routes are served (and the card names them)
    rest: bool = True
    #: where the gRPC binding is served (``host:port``), for the card; None: not served
    grpc_url: str | None = None
