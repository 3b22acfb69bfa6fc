"""The one rule for an http(s) URL given in a setting, an option or a form: a URL with
a host and a port in range, whose scheme is http or https. Each caller words the
fault with what it names (``public_url``, ``--push-url``, an allowed origin)."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit, urlunsplit

import httpx

__all__ = ["bare_url", "http_url", "lower_scheme", "url_below"]


def http_url(url: str) -> SplitResult:
    """``url`` split, when it is an http:// or https:// URL with a host and a port in
    range; otherwise a ValueError that completes the sentence "``url`` ...": "is not a
    URL: ...", "has no valid port (0-65535)", "is not an http:// or https:// URL with a
    host"."""
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
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))
