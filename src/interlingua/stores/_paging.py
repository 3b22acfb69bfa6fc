"""ListTasks paging shared by the stores: query checks and keyset page tokens.

Tasks are listed newest first by (sort stamp, id). A page token is the key of
the last task of the previous page plus a fingerprint of the filter it was made
for, msgpack-encoded and url-safe base64: opaque to clients, and a token from
another filter (or one we never made) is refused instead of silently listing
the wrong tasks.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import NamedTuple

import msgspec

from ..core.calls import ListTasks
from ..core.errors import InvalidParams
from ..core.ids import id_fault
from ._projection import check_history_length
from .base import Scope

__all__ = ["Cursor", "check_query", "decode_token", "encode_token", "filter_fingerprint"]

MAX_PAGE_SIZE = 100
_TOKEN_VERSION = 1
# Canonical timestamps are fixed width, so they order correctly as strings.
_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


class Cursor(NamedTuple):
    """The key of the last task on a page: the next page starts below it."""

    stamp: str
    task_id: str


class _Token(msgspec.Struct, array_like=True):
    version: int
    fingerprint: bytes
    stamp: str
    task_id: str


_encoder = msgspec.msgpack.Encoder()
_token_decoder = msgspec.msgpack.Decoder(_Token)
#: a page token refused (named by its params path, as ``check_query`` names members)
_NOT_OURS = "Invalid params: params.pageToken is not a token from a previous ListTasks response"


def check_query(query: ListTasks) -> None:
    """Refuse what the stores cannot answer correctly (callers validate first;
    this keeps a store from returning a wrong page if one does not).

    A refused member is named by its path in the params (``params.pageToken``), as the
    codecs name one: each binding renames it as its caller sent it (gRPC's
    ``page_token``, HTTP+JSON's query parameter; ``core/dialects/as_sent.py``)."""
    if not 1 <= query.page_size <= MAX_PAGE_SIZE:
        raise InvalidParams(
            f"Invalid params: params.pageSize must be between 1 and {MAX_PAGE_SIZE}, "
            f"got {query.page_size}"
        )
    check_history_length(query.history_length)
    # a context no store can hold (core/ids.py): refused alike by every store
    fault = id_fault(query.context_id) if query.context_id else None
    if fault is not None:
        raise InvalidParams(f"Invalid params: params.contextId {fault}")
    after = query.status_timestamp_after
    if after is not None and not _CANONICAL.fullmatch(after):
        raise InvalidParams(
            "Invalid params: params.statusTimestampAfter must be a UTC timestamp like "
            f"2025-01-31T12:00:00.000Z, got {after!r}"
        )


def filter_fingerprint(scope: Scope, query: ListTasks) -> bytes:
    """Eight bytes that change whenever the set of matching tasks would."""
    key = (
        scope.tenant,
        scope.owner,
        query.context_id,
        query.status.value if query.status is not None else None,
        query.status_timestamp_after,
    )
    return hashlib.blake2b(_encoder.encode(key), digest_size=8).digest()


def encode_token(fingerprint: bytes, cursor: Cursor) -> str:
    raw = _encoder.encode(_Token(_TOKEN_VERSION, fingerprint, cursor.stamp, cursor.task_id))
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_token(token: str, fingerprint: bytes) -> Cursor:
    """The cursor in ``token``; ``InvalidParams`` unless we made it for this filter."""
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_", validate=True)
        decoded = _token_decoder.decode(raw)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        # ValueError also covers non-ASCII text; DecodeError covers ValidationError.
        raise InvalidParams(_NOT_OURS) from None
    # (a cursor holding a NUL was never made here, and not every store can compare
    # one: PostgreSQL's text cannot hold it)
    if decoded.version != _TOKEN_VERSION or "\x00" in decoded.stamp \
            or "\x00" in decoded.task_id:
        raise InvalidParams(_NOT_OURS)
    if decoded.fingerprint != fingerprint:
        raise InvalidParams(
            "Invalid params: params.pageToken was issued for a different filter; keep the "
            "tenant, params.contextId, params.status and params.statusTimestampAfter "
            "unchanged while paging, as the same caller"
        )
    return Cursor(decoded.stamp, decoded.task_id)
