"""The headers of a webhook request: content type, idempotency id, token, credentials.

``Authorization`` is built from the config's ``authentication``
(``AuthInfo.schemes`` + ``credentials``); the first scheme is used:

=================  ====================================================
scheme             what is sent
=================  ====================================================
``Bearer``         ``Authorization: Bearer <credentials>``
``Basic``          ``Authorization: Basic <base64(credentials)>`` when the
                   credentials are ``user:password``; as given when they
                   are already base64
``ApiKey``         credentials as the v0.1 spec's JSON example,
                   ``{"in": "header"|"query"|"cookie", "name": …, "value": …}``:
                   that header, query parameter or cookie; plain
                   credentials: ``Authorization: ApiKey <credentials>``
anything else      ``Authorization: <scheme> <credentials>``
=================  ====================================================

A scheme without credentials sends nothing (this server obtains no tokens of
its own). An ApiKey header may not be one this server sends itself, nor one
that frames or routes the request (``reserved_header``): refused when the
config is set, and a config stored before that rule is not sent. The token, when set, goes in ``X-A2A-Notification-Token`` (every
dialect, DIALECTS.md §i.19). Credentials and the token are never forwarded to
another host by a redirect.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import NamedTuple
from urllib.parse import quote

import httpx
import msgspec

from ...core.dialects import get_codec
from ...core.model import AuthInfo
from ...core.push_wire import NOTIFICATION_ID_HEADER, TOKEN_HEADER

__all__ = [
    "NOTIFICATION_ID_HEADER",
    "TOKEN_HEADER",
    "WebhookRequest",
    "auth_parts",
    "build_request",
    "check_authentication",
    "check_token",
    "content_type",
    "notification_id",
    "reserved_header",
]

V1_CONTENT_TYPE = "application/a2a+json"
JSON_CONTENT_TYPE = "application/json"

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_SCHEME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
#: RFC 6265's cookie-octets: no space, quote, comma, semicolon or backslash, which
#: would end the value or start another cookie in the receiver's Cookie header
_COOKIE_VALUE = re.compile(r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*\Z")
_COOKIE_OCTETS = ("authentication.credentials value for a cookie may not hold a space, "
                  "quote, comma, semicolon or backslash (RFC 6265 cookie-octets)")


#: headers that frame the message or route it (RFC 9110, RFC 9112), or that the
#: sender writes itself: a second one beside the sender's would make the request
#: another (a Transfer-Encoding beside the Content-Length), or one no client sends
_FRAMING = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
    "te", "trailer", "expect", "forwarded",
})
#: headers the server sets on a notification (or may: the trace context hook)
_SET_BY_SERVER = frozenset({
    "content-type", "content-encoding", "a2a-version", "traceparent", "tracestate", "baggage",
})
_FRAMING_PREFIXES = ("proxy-",)
#: the A2A and notification headers (X-A2A-Notification-Id, -Token, X-A2A-Signature ...)
_SERVER_PREFIXES = ("x-a2a-", "a2a-")


def reserved_header(name: str) -> str | None:
    """Why an ApiKey config may not send header ``name`` (any case), or None when it may.

    ``Authorization`` and ``Cookie`` may be named: an ApiKey scheme that names a
    header sends no other credentials."""
    low = name.lower()
    if low in _FRAMING or low.startswith(_FRAMING_PREFIXES):
        return "it frames or routes the request"
    if low in _SET_BY_SERVER or low.startswith(_SERVER_PREFIXES):
        return "the server sets it on every notification"
    return None


def _visible(value: str) -> bool:
    return all(" " <= c <= "~" for c in value)


def notification_id(task_id: str, config_id: str, seq: int, nonce: str) -> str:
    """``{task}:{config}:{seq}:{nonce}``, each id percent-encoded (ids of uuids and
    other unreserved characters stay as they are). ``nonce`` is the delivery's
    (random, fixed when it was queued): a task id (a v0.1 client's) and the config
    id made from it may be another agent's, scope's or server's too. A delivery
    without one (none of the stores' makes one) has the id of three parts."""
    ident = f"{quote(task_id, safe='')}:{quote(config_id, safe='')}:{seq}"
    return f"{ident}:{quote(nonce, safe='')}" if nonce else ident


def content_type(dialect: str) -> str:
    return get_codec(dialect).media_type


class _ApiKey(msgspec.Struct):
    name: str
    value: str
    in_: str = msgspec.field(default="header", name="in")


class AuthParts(NamedTuple):
    headers: list[tuple[str, str]]
    query: list[tuple[str, str]]
    cookie: str | None


def _api_key(credentials: str) -> _ApiKey | None:
    if not credentials.lstrip().startswith("{"):
        return None
    try:
        return msgspec.json.decode(credentials, type=_ApiKey)
    except (msgspec.DecodeError, RecursionError):  # (JSON nested too deeply: no key either)
        return None


def check_token(token: str | None) -> None:
    """``ValueError`` naming the problem if the token cannot be a header value."""
    if token is not None and not _visible(token):
        raise ValueError("token must be printable ASCII (it is sent as a header value)")


def check_authentication(auth: AuthInfo | None) -> None:
    """``ValueError`` naming the field if the authentication cannot be sent."""
    if auth is None:
        return
    if not auth.schemes:
        raise ValueError("authentication.schemes must name at least one scheme")
    scheme = auth.schemes[0]
    if not _SCHEME.match(scheme):
        raise ValueError(f"authentication scheme {scheme!r} is not a valid HTTP auth scheme")
    cred = auth.credentials
    if cred is None:
        return
    if scheme.lower() == "apikey":
        key = _api_key(cred)
        if cred.lstrip().startswith("{") and key is None:
            raise ValueError('authentication.credentials for ApiKey must be '
                             '{"in": "header"|"query"|"cookie", "name": ..., "value": ...}')
        if key is not None:
            if key.in_ not in ("header", "query", "cookie"):
                raise ValueError('authentication.credentials "in" must be header, query or cookie')
            if key.in_ != "query" and not _HEADER_NAME.match(key.name):
                raise ValueError(f"authentication.credentials name {key.name!r} is not a "
                                 "valid header or cookie name")
            why = reserved_header(key.name) if key.in_ == "header" else None
            if why is not None:
                raise ValueError(f"authentication.credentials names ApiKey header "
                                 f"{key.name!r}, which a config may not send: {why}")
            if not _visible(key.value):
                raise ValueError("authentication.credentials value must be printable ASCII")
            if key.in_ == "cookie" and not _COOKIE_VALUE.match(key.value):
                raise ValueError(_COOKIE_OCTETS)
            return
    if not _visible(cred):
        raise ValueError("authentication.credentials must be printable ASCII "
                         "(it is sent as a header value)")


def auth_parts(auth: AuthInfo | None) -> AuthParts:
    """What the config's authentication adds to a request (see the table above)."""
    if auth is None or not auth.schemes or auth.credentials is None:
        return AuthParts([], [], None)
    scheme, cred = auth.schemes[0], auth.credentials
    low = scheme.lower()
    if low == "bearer":
        return AuthParts([("Authorization", f"Bearer {cred}")], [], None)
    if low == "basic":
        return AuthParts([("Authorization", f"Basic {_basic(cred)}")], [], None)
    if low == "apikey":
        key = _api_key(cred)
        if key is not None:
            if key.in_ == "query":
                return AuthParts([], [(key.name, key.value)], None)
            if key.in_ == "cookie":
                if not _COOKIE_VALUE.match(key.value):  # a config stored before the rule
                    raise ValueError(_COOKIE_OCTETS)
                return AuthParts([], [], f"{key.name}={key.value}")
            return AuthParts([(key.name, key.value)], [], None)
    return AuthParts([("Authorization", f"{scheme} {cred}")], [], None)


def _basic(cred: str) -> str:
    if ":" in cred:
        return base64.b64encode(cred.encode("utf-8")).decode("ascii")
    try:
        base64.b64decode(cred, validate=True)
    except (binascii.Error, ValueError):
        return base64.b64encode(cred.encode("utf-8")).decode("ascii")
    return cred


class WebhookRequest(NamedTuple):
    url: str
    headers: list[tuple[str, str]]
    #: lower-cased names of headers that are not sent to another host on a redirect
    sensitive: frozenset[str]


def build_request(
    url: str,
    *,
    dialect: str,
    token: str | None,
    authentication: AuthInfo | None,
    nid: str,
    signature: tuple[str, str] | None = None,
) -> WebhookRequest:
    """The URL (with any API key query parameter) and headers of one delivery.

    ``signature`` is ``(header name, detached JWS)``. ``ValueError`` naming the
    header for an ApiKey header a config may not send (``reserved_header``: one
    stored before configs were held to it), rather than a request with two.
    """
    parts = auth_parts(authentication)
    for name, _ in parts.headers:
        why = reserved_header(name)
        if why is not None:
            raise ValueError(f"the config's ApiKey header {name!r} is not sent: {why}; "
                             "set the config again with another header")
    headers = [
        ("Content-Type", content_type(dialect)),
        (NOTIFICATION_ID_HEADER, nid),
        *parts.headers,
    ]
    sensitive = {name.lower() for name, _ in parts.headers}
    if token is not None:
        headers.append((TOKEN_HEADER, token))
        sensitive.add(TOKEN_HEADER.lower())
    if parts.cookie is not None:
        headers.append(("Cookie", parts.cookie))
        sensitive.add("cookie")
    if signature is not None:
        headers.append(signature)
    version = get_codec(dialect).push_version
    if version is not None:
        headers.append(("A2A-Version", version))
    if parts.query:
        url = str(httpx.URL(url).copy_merge_params(dict(parts.query)))
    return WebhookRequest(url, headers, frozenset(sensitive))
