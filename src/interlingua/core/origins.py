"""Which web pages' requests an agent takes: its own, and the origins it allows.

A browser lets any page send a "simple" cross-origin request (a POST of
``text/plain``, or of a body with no type) without asking the server first; the
page cannot read the answer, but the request is made. An agent reachable from
the browser (on ``localhost``, on an intranet) would run what any page the user
visits sends it. A browser names the page's origin (``Origin``) on every such
request; other clients send none. So a request with an ``Origin`` that is not
the agent's own (the ``Host`` it was asked at, or its public URL) nor one it
allows is refused before its body is read, on every HTTP binding. Only the pages
of an allowed origin get CORS's headers (``host/app.py``), so no other page could
have read an answer anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .errors import AuthorizationFailed
from .urls import http_url

__all__ = ["CrossOrigin", "Origins", "origin_of"]


class CrossOrigin(AuthorizationFailed):
    """A browser's request from a page of another origin."""


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, as a browser names it (lower case, no
    default port); a ValueError for a URL that has none."""
    try:
        parts = http_url(url.strip())
    except ValueError as exc:
        raise ValueError(f"{url!r} {exc}") from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()  # (http_url: it has one)
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{host}" if port is None or port == default else f"{scheme}://{host}:{port}"


class Origins:
    """The origins whose pages' requests are taken, beside a request's own.

    ``allowed``: origins (``https://app.example``), or ``"*"`` for any page.
    ``public_urls``: the server's own URLs (its pages are its own origin behind a
    proxy that changes the ``Host``). ``trust_forwarded``: the host a request was
    sent to is its ``X-Forwarded-Host`` (set by a proxy in front), as for the card.
    """

    def __init__(self, allowed: Iterable[str] = (), public_urls: Iterable[str | None] = (),
                 *, trust_forwarded: bool = False) -> None:
        allowed = list(allowed)
        self.any = "*" in allowed
        self.allowed = {origin_of(o).encode() for o in allowed if o != "*"}
        self.allowed |= {origin_of(u).encode() for u in public_urls if u}
        self.trust_forwarded = trust_forwarded

    def check_request(self, origin: bytes, header: Callable[[bytes], bytes | None]) -> None:
        """``check`` for a request whose raw headers ``header`` reads."""
        host = None
        if self.trust_forwarded:
            forwarded = header(b"x-forwarded-host")
            host = forwarded.split(b",", 1)[0].strip() if forwarded else None
        self.check(origin, host or header(b"host"))

    def check(self, origin: bytes, host: bytes | None) -> None:
        """Raise ``CrossOrigin`` unless a page of ``origin`` may call: the origin of
        the ``host`` the request was sent to, or an allowed one."""
        if self.any:
            return
        seen = origin.strip().lower()
        if seen in self.allowed:
            return
        _, sep, authority = seen.partition(b"://")
        if sep and host is not None and authority and _same_authority(authority, host.lower(),
                                                                      seen.startswith(b"https")):
            return
        shown = origin.decode("latin-1")[:200]
        raise CrossOrigin(
            f"Forbidden: a browser's request from a page of another origin ({shown!r}) "
            "is refused; allow that origin with allowed_origins "
            "(interlingua serve --allow-origin ORIGIN)")


def _same_authority(authority: bytes, host: bytes, secure: bool) -> bool:
    """Whether an origin's ``host[:port]`` names the ``Host`` header's, the default
    port written or not."""
    if authority == host:
        return True
    default = b":443" if secure else b":80"
    return authority + default == host or host + default == authority
