"""Request bodies sent in a content coding (RFC 9110 §8.4): gzip and deflate are
undone, within the body limit; any other coding is refused by name.

A peer that compresses what it sends (a large message, a push notification) is
read as if it had not; one that names a coding this side does not know is told
so (415, with the codings taken), not answered with a parse error about the
compressed bytes.
"""

from __future__ import annotations

import zlib

from .errors import header_text

__all__ = ["ACCEPTED", "ACCEPT_ENCODING", "BadCoding", "CodingNotSupported", "TooLarge",
           "decode"]

#: the Accept-Encoding a refusal names: the codings ``decode`` undoes
ACCEPTED = "gzip, deflate"
#: that header, as an ASGI refusal of a body's coding carries it (RFC 9110 §12.5.3)
ACCEPT_ENCODING = (b"accept-encoding", ACCEPTED.encode())

# zlib's window bits for each format: gzip's header, zlib's (what HTTP calls
# deflate), and deflate with no header at all (which some senders call deflate)
_GZIP, _ZLIB, _RAW = 16 + zlib.MAX_WBITS, zlib.MAX_WBITS, -zlib.MAX_WBITS


class CodingNotSupported(Exception):
    """The body came in a content coding that is not undone here."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        shown = coding if len(coding) <= 40 else coding[:40] + "..."
        super().__init__(f"Content-Encoding {shown!r} is not supported; send the body "
                         "uncompressed, gzip or deflate")


class BadCoding(Exception):
    """The body is not what its Content-Encoding says (corrupt or cut short)."""


class TooLarge(Exception):
    """The body, once decoded, is larger than the limit."""


def decode(body: bytes, header: str, limit: int) -> bytes:
    """``body`` with the codings of its Content-Encoding ``header`` undone (listed
    in the order they were applied, so undone from the last); ``TooLarge`` as
    soon as it would pass ``limit`` bytes."""
    # (read as sent before it is lower-cased: a refusal quotes it)
    codings = [c.strip().lower() for c in header_text(header).split(",")]
    for coding in reversed(codings):
        if coding in ("", "identity"):
            continue
        if coding in ("gzip", "x-gzip"):
            body = _inflate(body, _GZIP, limit, coding)
        elif coding == "deflate":
            try:
                body = _inflate(body, _ZLIB, limit, coding)
            except BadCoding:
                body = _inflate(body, _RAW, limit, coding)
        else:
            raise CodingNotSupported(coding)
    return body


def _inflate(data: bytes, wbits: int, limit: int, coding: str) -> bytes:
    out: list[bytes] = []
    size = 0
    while True:  # gzip may hold several members, one after another (RFC 1952 §2.2)
        inflater = zlib.decompressobj(wbits)
        try:
            piece = inflater.decompress(data, limit + 1 - size)
        except zlib.error:
            raise BadCoding(f"the body is not valid {coding} data, as its "
                            "Content-Encoding says") from None
        size += len(piece)
        if size > limit or inflater.unconsumed_tail:
            raise TooLarge
        out.append(piece)
        if not inflater.eof:
            raise BadCoding(f"the body's {coding} data is cut short")
        data = inflater.unused_data
        if not data:
            return b"".join(out)
        if wbits != _GZIP:
            raise BadCoding(f"the body holds data after its {coding} stream")
