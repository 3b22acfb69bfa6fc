"""Where a gRPC endpoint's URL leads: its ``host:port`` and whether it is TLS. Apart
from the gRPC binding, which needs the extra: a card's interfaces are read without it."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..grpc_wire.address import dns_target
from .errors import ClientError

__all__ = ["target_of"]


def target_of(url: str, *, default_tls: bool = False) -> tuple[str, bool]:
    """An endpoint's URL -> (grpc target ``host:port``, whether to use TLS)."""
    text = dns_target(url.strip())
    scheme, sep, rest = text.partition("://")
    if sep:
        scheme = scheme.lower()
        if scheme not in ("grpc", "grpcs", "http", "https"):
            raise ClientError(f"{url!r} is not a gRPC address (grpc://host:port)")
        tls = scheme in ("grpcs", "https")
        parts = urlsplit(f"//{rest}")
        try:
            host, port = parts.hostname or "", parts.port
        except ValueError:  # (urllib's words name neither the URL nor the range)
            raise ClientError(f"{url!r} has no valid port (0-65535)") from None
        if not host:
            raise ClientError(f"{url!r} names no host")
        if port is None:
            port = 443 if tls else 80
        host = f"[{host}]" if ":" in host else host
        return f"{host}:{port}", tls
    target = text.rstrip("/")
    if not target or "/" in target:
        raise ClientError(f"{url!r} is not a gRPC address (host:port)")
    return target, default_tls
