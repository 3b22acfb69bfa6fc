"""JSON-RPC 2.0 envelopes: parse requests, build responses. No I/O.

``params`` stays raw JSON bytes here: the dialect codec decodes it straight
into its typed structs, so a body is parsed exactly once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from .dialects._common import check_utf8
from .errors import A2AError, InvalidRequest, ParseError
from .reading import json_fault, without_bom

__all__ = [
    "Batch",
    "Request",
    "error_response",
    "parse",
    "result_head",
    "result_response",
]

RequestId = str | int | None


class _Envelope(msgspec.Struct, forbid_unknown_fields=False):
    jsonrpc: str
    method: str
    id: str | int | msgspec.UnsetType | None = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class Request(msgspec.Struct):
    method: str
    id: RequestId
    params: bytes | None
    #: False for a notification (no ``id`` member): it gets no response body
    has_id: bool = True


class Batch(msgspec.Struct):
    """A JSON-RPC batch: each item is a parsed ``Request`` or the error it raised."""

    items: list[Request | tuple[RequestId, A2AError]]


_decoder = msgspec.json.Decoder(_Envelope)
_any_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def parse(body: bytes, check_batch: Callable[[int], None] | None = None) -> Request | Batch:
    """Parse one request body. Raises ``ParseError`` or ``InvalidRequest``.

    ``InvalidRequest`` carries ``data={"id": …}`` when the id could be read, so
    the response can echo it. ``check_batch(n)`` is called with a batch's number
    of items before any is read, and may refuse it by raising.
    """
    # params stay raw here: the whole body is checked once (nearly every body is
    # ASCII: then no call)
    if not body.isascii():
        check_utf8(body, "the body")
    try:
        try:
            env = _decoder.decode(body)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return _parse_slow(body, check_batch)
    except RecursionError:
        raise InvalidRequest("Invalid Request: the JSON is nested too deeply") from None
    params = env.params
    if env.jsonrpc == "2.0" and params is not msgspec.UNSET:
        raw = bytes(params)
        if raw[:1] == b"{":  # nearly every call: _to_request's answer, without its call
            rid = env.id
            if rid is msgspec.UNSET:
                return Request(env.method, None, raw, False)
            return Request(env.method, rid, raw)
    return _to_request(env)


def _to_request(env: _Envelope) -> Request:
    if env.jsonrpc != "2.0":
        raise _invalid('"jsonrpc" must be exactly "2.0"', env.id)
    has_id = env.id is not msgspec.UNSET
    rid = None if env.id is msgspec.UNSET else env.id
    params: bytes | None = None
    if env.params is not msgspec.UNSET:
        raw = bytes(env.params)
        first = raw.lstrip()[:1]
        if first not in (b"{", b"["):
            if first == b"n":  # "params": null is commonly sent for "no params"
                raw = b""
            else:
                raise _invalid('"params" must be an object or an array', rid)
        params = raw or None
    return Request(method=env.method, id=rid, params=params, has_id=has_id)


def _invalid(message: str, rid: Any) -> InvalidRequest:
    if rid is msgspec.UNSET:
        rid = None
    return InvalidRequest(f"Invalid Request: {message}", data={"id": rid})


def _parse_slow(body: bytes, check_batch: Callable[[int], None] | None) -> Request | Batch:
    try:
        doc = _any_decoder.decode(body)
    except msgspec.DecodeError as exc:
        unmarked = without_bom(body)
        if unmarked is not None:
            # some clients send a byte order mark: read without it (only here, once
            # the body was refused)
            return parse(unmarked, check_batch)
        raise ParseError(f"Parse error: {json_fault(body, exc)}") from None
    if isinstance(doc, list):
        if not doc:
            raise InvalidRequest("Invalid Request: empty batch")
        if check_batch is not None:
            check_batch(len(doc))
        items: list[Request | tuple[RequestId, A2AError]] = []
        for entry in doc:
            try:
                items.append(_from_doc(entry))
            except InvalidRequest as exc:
                items.append((_salvage_id(entry), exc))
        return Batch(items)
    return _from_doc(doc)


def _from_doc(doc: Any) -> Request:
    if not isinstance(doc, dict):
        raise _invalid("the request must be a JSON object", None)
    rid = doc.get("id", msgspec.UNSET)
    if rid is not msgspec.UNSET and (
        isinstance(rid, bool) or not (rid is None or isinstance(rid, (str, int)))
    ):
        raise _invalid('"id" must be a string, an integer or null', None)
    if "jsonrpc" not in doc:
        raise _invalid('missing "jsonrpc": "2.0"', rid)
    if doc["jsonrpc"] != "2.0":
        raise _invalid('"jsonrpc" must be exactly "2.0"', rid)
    if "method" not in doc:
        raise _invalid('missing "method"', rid)
    if not isinstance(doc["method"], str):
        raise _invalid('"method" must be a string', rid)
    try:
        env = msgspec.convert(doc, _Envelope)
    except msgspec.ValidationError:
        env = None
    if env is None:
        # params of a non-JSON shape already rejected below; re-encode them raw
        env = _Envelope(jsonrpc="2.0", method=doc["method"], id=rid)
    params = doc.get("params", msgspec.UNSET)
    if params is not msgspec.UNSET:
        if params is None:
            env.params = msgspec.UNSET
        elif not isinstance(params, (dict, list)):
            raise _invalid('"params" must be an object or an array', rid)
        else:
            env.params = msgspec.Raw(_encoder.encode(params))
    return _to_request(env)


def _salvage_id(entry: Any) -> RequestId:
    if isinstance(entry, dict):
        rid = entry.get("id")
        if isinstance(rid, (str, int)) and not isinstance(rid, bool):
            return rid
    return None


# The id is encoded by msgspec's encoder directly, not through a helper of our
# own: every answer has one.


def result_response(rid: RequestId, result: bytes) -> bytes:
    """A success response around already-encoded ``result`` JSON."""
    return b'{"jsonrpc":"2.0","id":' + _encoder.encode(rid) + b',"result":' + result + b"}"


def result_head(rid: RequestId) -> bytes:
    """What goes before a result in a success response (``}`` goes after it)."""
    return b'{"jsonrpc":"2.0","id":' + _encoder.encode(rid) + b',"result":'


def error_response(rid: RequestId, error: bytes) -> bytes:
    """An error response around an already-encoded ``error`` member."""
    return b'{"jsonrpc":"2.0","id":' + _encoder.encode(rid) + b',"error":' + error + b"}"
