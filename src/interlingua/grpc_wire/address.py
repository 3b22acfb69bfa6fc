"""How a card names a gRPC endpoint, and how a reader gets ``host:port`` back.
(No grpc import here: cards are written and read without the extra.)

The spec asks for an absolute URL; the official SDKs hand the card's URL to a gRPC
channel unchanged, and a channel resolves neither ``grpc://``, ``http://`` nor
``https://`` (measured with a2a-sdk 1.3.0 and 0.3.26; docs/grpc.md). gRPC's own
name syntax, ``dns:///host:port``, is both: an absolute URI and a channel target.
"""

from __future__ import annotations

__all__ = ["card_url", "dns_target"]


def card_url(address: str) -> str:
    """How the card names the gRPC endpoint at ``address``: a bare ``host:port`` as
    ``dns:///host:port``; a URL with a scheme as it is."""
    return address if ":/" in address or address[:4].lower() == "dns:" else f"dns:///{address}"


def dns_target(url: str) -> str:
    """``dns:[//authority/]host:port`` -> ``host:port``; any other text unchanged.
    (The form says nothing of TLS: the reader decides, as for a bare address.)"""
    if url[:4].lower() != "dns:":
        return url
    rest = url[4:]
    if rest.startswith("//"):
        # the DNS server to ask (usually empty): the system's resolver is used
        rest = rest[2:].partition("/")[2]
    return rest
