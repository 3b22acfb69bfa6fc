"""The base URL a request reached the server at, for an app built without ``public_url``.

Mounted under a path (``app.mount("/agents/echo", create_app(agent))``) or
served under several names, the card must name the URL the caller used: the
request's scheme, its ``Host`` and the ASGI ``root_path`` (where the app is
mounted). ``X-Forwarded-Proto``/``-Host``/``-Prefix`` are read only when the
app is told to trust them (a proxy in front sets them; a client could forge
them). An optional allowed-hosts list refuses every other name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..bindings.http.request_headers import RequestHeaders
from ..core.asgi_json import send_json

__all__ = ["AnsweredHosts", "HostNotAllowed", "HostPolicy"]

# a DNS name or IPv4 address, or a bracketed IPv6 address, with an optional port
_HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,253})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?")
_PREFIX = re.compile(r"(?:/[A-Za-z0-9._~!$&'()*+,;=:@%-]*)*")


class HostNotAllowed(Exception):
    """The request names a host this server does not answer for; the message says which."""


class HostPolicy:
    """Which hosts are answered, and how the base URL is read from a request."""

    def __init__(self, allowed_hosts: Sequence[str] | None = None,
                 trust_forwarded: bool = False) -> None:
        # an IPv6 address is matched as a Host header writes it: in brackets
        self.allowed = [f"[{h.lower()}]" if ":" in h and not h.startswith("[") else h.lower()
                        for h in allowed_hosts] if allowed_hosts else None
        self.trust_forwarded = trust_forwarded

    def check(self, host: str) -> None:
        """Raise ``HostNotAllowed`` unless ``host`` (name[:port]) may be answered."""
        if not _HOST.fullmatch(host):
            raise HostNotAllowed(f"Host {_short(host)} is not a host name")
        if self.allowed is None:
            return
        name = _name_of(host)
        for pattern in self.allowed:
            if pattern == "*" or pattern == name or (
                    pattern.startswith("*.") and name.endswith(pattern[1:])):
                return
        raise HostNotAllowed(f"Host {_short(host)} is not one this server answers for")

    def host_of(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        forwarded = headers.get("x-forwarded-host") if self.trust_forwarded else None
        host = _first(forwarded) or headers.get("host") or _server_host(scope)
        return host.strip()

    def base_url(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        """``scheme://host[:port]/root/path`` of the request (no trailing slash)."""
        host = self.host_of(scope, headers)
        self.check(host)
        scheme = str(scope.get("scheme") or "http")
        prefix = ""
        if self.trust_forwarded:
            proto = _first(headers.get("x-forwarded-proto"))
            if proto in ("http", "https"):
                scheme = proto
            forwarded_prefix = _first(headers.get("x-forwarded-prefix")) or ""
            if _PREFIX.fullmatch(forwarded_prefix):
                prefix = forwarded_prefix.rstrip("/")
        root = str(scope.get("root_path") or "")
        if not _PREFIX.fullmatch(root):
            root = ""
        return f"{scheme}://{host.lower()}{prefix}{root.rstrip('/')}"


class AnsweredHosts:
    """``app`` for requests whose ``Host`` names one of ``allowed`` (a 400 otherwise),
    read as ``serve`` reads it (an IPv6 address in brackets): for the command-line
    servers that are no agent's app (``listen``, ``inspect``)."""

    def __init__(self, app: Any, allowed: Sequence[str]) -> None:
        self.app, self.hosts = app, HostPolicy(allowed)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            try:
                self.hosts.check(self.hosts.host_of(scope, RequestHeaders(scope["headers"])))
            except HostNotAllowed as exc:
                await send_json(send, 400, {"error": str(exc)})
                return
        await self.app(scope, receive, send)


def _first(value: str | None) -> str | None:
    if not value:
        return None
    return value.split(",", 1)[0].strip() or None


def _name_of(host: str) -> str:
    if host.startswith("["):
        return host[: host.index("]") + 1].lower()
    return host.rsplit(":", 1)[0].lower() if ":" in host else host.lower()


def _server_host(scope: Mapping[str, Any]) -> str:
    server = scope.get("server")
    if not server:
        return "localhost"
    host, port = server[0], server[1]
    if ":" in str(host):
        host = f"[{host}]"
    return f"{host}:{port}" if port else str(host)


def _short(value: str, limit: int = 64) -> str:
    return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."
