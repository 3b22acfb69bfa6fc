"""A gRPC listener's address: ``host:port`` as given, and the host a card names."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["_card_host", "_split"]

_WILDCARDS = {"", "0.0.0.0", "::", "[::]"}


def _split(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    # (ASCII digits: str.isdigit() also takes "²", which int() refuses)
    if not sep or not (port.isascii() and port.isdigit()) or int(port) > 65535:
        raise ValueError(f"{address!r} is not host:port (a port is 0 to 65535)")
    return host, int(port)


def _card_host(public_url: str, bound: str) -> str:
    if public_url:
        name = urlsplit(public_url).hostname
        if name:
            return f"[{name}]" if ":" in name else name
    return "localhost" if bound in _WILDCARDS else bound
