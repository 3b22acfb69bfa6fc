"""The credentials a session sends: API key, bearer token or basic.

They live in the server-side session only; the page learns which kind is
set, never the value.
"""

from __future__ import annotations

import base64
from typing import Any

from .recorder import SECRET_HEADERS

__all__ = ["KINDS", "CredentialError", "headers_for"]

KINDS = ("none", "apikey", "bearer", "basic")


class CredentialError(ValueError):
    """The credentials given cannot be sent."""


def _text(auth: dict[str, Any], key: str) -> str:
    value = auth.get(key) or ""
    if not isinstance(value, str):
        raise CredentialError(f"{key} must be text")
    if any(ord(c) < 0x20 or ord(c) > 0x7E for c in value):
        raise CredentialError(f"{key} must be printable ASCII (it goes into an HTTP header)")
    return value


def headers_for(auth: Any) -> tuple[dict[str, str], frozenset[str]]:
    """The headers to send for ``auth`` and the header names to mask in frames."""
    if auth is None:
        return {}, SECRET_HEADERS
    if not isinstance(auth, dict):
        raise CredentialError("credentials must be an object")
    kind = auth.get("kind") or "none"
    if kind not in KINDS:
        raise CredentialError(f"unknown kind of credentials {kind!r}; use one of "
                              f"{', '.join(KINDS)}")
    if kind == "none":
        return {}, SECRET_HEADERS
    if kind == "apikey":
        name = _text(auth, "name").strip() or "X-API-Key"
        if not all(c.isalnum() or c in "-_" for c in name):
            raise CredentialError(f"{name!r} is not a header name")
        return {name: _given(auth, "value", "the API key")}, SECRET_HEADERS | {name.lower()}
    if kind == "bearer":
        return {"Authorization": f"Bearer {_given(auth, 'value', 'the bearer token')}"}, \
            SECRET_HEADERS
    user, password = _text(auth, "user"), _text(auth, "password")
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}, SECRET_HEADERS


def _given(auth: dict[str, Any], key: str, what: str) -> str:
    """A credential's text, without the spaces a form leaves around it; an empty one
    is refused here (the request would fail with an error that names no credential)."""
    value = _text(auth, key).strip()
    if not value:
        raise CredentialError(f"{what} is empty")
    return value
