"""The one rule for an http(s) URL given in a setting, an option or a form: a URL with
a host and a port in range, whose scheme is http or https. Each caller words the
fault with what it names (``public_url``, ``--push-url``, an allowed origin)."""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit, urlunsplit

import httpx

__all__ = ["bare_url", "http_url", "lower_scheme", "masked_url", "space_fault", "url_below"]


def http_url(url: str) -> SplitResult:
    """``url`` split, when it is an http:// or https:// URL with a host and a port in
    range; otherwise a ValueError that completes the sentence "``url`` ...": "is not a
    URL: ...", "has no valid port (0-65535)", "is not an http:// or https:// URL with a
    host"."""
    fault = space_fault(url)
    if fault is not None:
        raise ValueError(fault)
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # ("Invalid IPv6 URL": a bracket left open)
        raise ValueError(f"is not a URL: {exc}") from None
    try:
        parts.port  # noqa: B018 (reading it checks the range)
    except ValueError:
        raise ValueError("has no valid port (0-65535)") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError("is not an http:// or https:// URL with a host")
    try:  # what urllib passes and httpx, which reads it, refuses: a control character,
        # a host IDNA cannot encode
        httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:  # (idna's errors are ValueErrors)
        raise ValueError(f"is not a URL: {exc}") from None
    return parts


def space_fault(url: str) -> str | None:
    """What completes "``url`` ..." when white space or a control character starts or
    ends it, or white space stands in its host ("is not a URL: ..."), else None.
    urllib strips them at the start and splits the rest, so the URL would pass as
    given and be refused only where it is called (httpx reads `` http://h`` as a
    relative URL)."""
    if url and (_blank(url[0]) or _blank(url[-1])):
        return "is not a URL: it starts or ends with white space or a control character"
    authority = _AUTHORITY.match(url)
    if authority and any(c.isspace() for c in authority[1]):
        return "is not a URL: its host holds white space"
    return None


def _blank(char: str) -> bool:
    return char.isspace() or not char.isprintable()


#: the authority of a URL with a scheme: what stands between ``//`` and a path, query
#: or fragment
_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)")


def url_below(url: str, path: str) -> str:
    """``path`` (``/x``, maybe with its own query) below ``url``: its path extended,
    and a query ``url`` carries (an agent's ``?code=KEY``) kept, before the path's."""
    if "?" not in url and "#" not in url:
        return url.rstrip("/") + path
    try:
        parts = urlsplit(url)
    except ValueError:  # (a card's URL no parser takes: said where it is fetched)
        return url.rstrip("/") + path
    own, _, query = path.partition("?")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + own,
                       "&".join(q for q in (parts.query, query) if q), ""))


def lower_scheme(url: str) -> str:
    """``url`` with its scheme in lower case (schemes are case-insensitive, RFC 3986
    §3.1): ``GRPC://h:1`` is the gRPC address ``grpc://h:1``, not an HTTP URL."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.isascii() and scheme.isalpha() and not scheme.islower():
        return scheme.lower() + sep + rest
    return url


def bare_url(url: str) -> str:
    """``url`` as a third party is shown it (a model, an MCP client, a caller told why a
    server failed): without a user and password, a query or a fragment, which may hold
    credentials."""
    try:
        parts = urlsplit(str(url))
    except ValueError:  # ("Invalid IPv6 URL"): nothing of it is shown
        return "(a URL that is not valid)"
    if not parts.scheme:
        return str(url)
    if password_unescaped(parts.netloc, str(url)):
        # ``u:pa/ss@host``: what a parser takes for the host and port is the user and
        # the start of the password, and the rest of it is in the path
        return bare_url(_after_userinfo(str(url)))
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def password_unescaped(netloc: str, url: str) -> bool:
    """``url`` holds a user and a password whose ``/``, ``?`` or ``#`` is not escaped:
    its parsed ``netloc`` (``user:pa``) has no ``@``, a port that is no number, and an
    ``@`` follows it in the URL."""
    if "@" in netloc or ":" not in netloc or netloc.endswith("]"):
        return False
    port = netloc.rpartition(":")[2]
    return not (port.isascii() and port.isdigit()) and "@" in url.partition(netloc)[2]


def _after_userinfo(url: str) -> str:
    """``url`` without everything between its scheme and the last ``@``."""
    start = _SCHEME.match(url)
    head = start.end() if start else 0
    return url[:head] + url[head:].rpartition("@")[2]


#: a scheme and the slashes after it (RFC 3986 §3.1), as far as the text has them
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:/*")


def masked_url(url: str) -> str:
    """``url`` as a message that quotes a caller's URL may show it: what stands where a
    user and password go (up to an ``@`` of the authority) shown as ``***``, whatever
    else the URL is. In a text no parser reads as a URL with that authority (a ``/``,
    ``?`` or ``#`` in the password, a slash missing), everything up to its last ``@``
    is masked: what was meant as a password is never shown (a path's ``@`` too)."""
    start = _SCHEME.match(url)
    head = start.end() if start else 0
    rest = url[head:]
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    at = rest.rfind("@", 0, end)
    if at < 0:
        at = rest.rfind("@")
    if at < 0:
        return url
    return url[:head] + "***" + rest[at:]
