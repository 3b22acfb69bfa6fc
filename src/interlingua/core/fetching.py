"""A small document fetched over HTTP (a key set, a discovery document), held to a
size and to a time for the whole answer.

httpx's own timeout bounds each read: a host sending its answer a byte at a time
would hold the fetch (and whoever waits for the keys) for as long as it liked,
and a host sending without end would fill the memory.
"""

from __future__ import annotations

import asyncio

import httpx

from .urls import http_url

__all__ = ["DocumentTooLarge", "fetch_document", "fetchable_url"]


class DocumentTooLarge(ValueError):
    """The document is larger than the fetch allows."""


def fetchable_url(url: str, what: str) -> str:
    """``url`` if it is an http(s) URL with a host; a ValueError naming ``what`` (the
    setting) otherwise. Checked where it is configured: a URL httpx cannot read would
    otherwise fail every fetch, with an error outside httpx's ``HTTPError``."""
    try:
        http_url(url)
    except ValueError as exc:
        raise ValueError(f"{what} {url!r} {exc}") from None
    return url


async def fetch_document(client: httpx.AsyncClient, url: str, *, timeout: float,
                         max_bytes: int = 1 << 20) -> bytes:
    """The body of ``GET url`` (JSON asked for); raises ``httpx.HTTPStatusError`` for a
    status other than 2xx, ``TimeoutError`` when the whole answer takes longer than
    ``timeout`` seconds, ``DocumentTooLarge`` past ``max_bytes``, and httpx's own
    errors for a connection that fails."""
    async with asyncio.timeout(timeout), \
            client.stream("GET", url, headers={"Accept": "application/json"}) as response:
        response.raise_for_status()
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                raise DocumentTooLarge(f"{url} answers with more than {max_bytes} bytes")
        return bytes(body)
