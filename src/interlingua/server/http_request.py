"""What every HTTP binding reads from a request the same way: the body (with a size
limit), the ``A2A-Version`` (header or query parameter) and the extensions asked for."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

__all__ = ["BodyTooLarge", "extensions", "read_body", "version_of"]

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


class BodyTooLarge(Exception):
    """The request's body (or its Content-Length) is over the limit."""


async def read_body(receive: Receive, limit: int, headers: Mapping[str, str]) -> bytes:
    """The whole body; ``BodyTooLarge`` once it (or its announced length) passes ``limit``."""
    length = headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def version_of(scope: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The raw ``A2A-Version``: the header, else the query parameter (v1.0 allows both)."""
    found = headers.get("a2a-version")
    if found:
        return found
    qs: bytes = scope.get("query_string", b"")
    if not qs or (b"A2A-Version" not in qs and b"a2a-version" not in qs):
        return None
    for k, v in parse_qsl(qs.decode("latin-1")):
        if k.lower() == "a2a-version":
            return v
    return None


def extensions(headers: Mapping[str, str]) -> list[str]:
    """The extension URIs asked for (``A2A-Extensions``, or v0.3's ``X-A2A-Extensions``)."""
    raw = headers.get("a2a-extensions") or headers.get("x-a2a-extensions")
    if not raw:
        return []
    return [e.strip() for e in raw.split(",") if e.strip()]
