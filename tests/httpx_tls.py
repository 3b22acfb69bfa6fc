"""One default TLS context for the suite's httpx clients, not one per client.

httpx makes a new ``ssl.SSLContext`` for every client (and every
``httpx.get``), reading the whole CA bundle into it: about 0.1 s each, and the
suite makes a few thousand clients (its own, and the ones ``interlingua.client``
makes), nearly all for plain HTTP on loopback. ``share_default_context()``
makes the context of the default ``verify=True`` once per CA source and hands
the same one to every client asking for it; a client given ``verify=False``, a
CA bundle, a context of its own or a certificate gets what it always did.
"""

from __future__ import annotations

import os
import ssl
from typing import Any

import httpx._transports.default as transports

_made = transports.create_ssl_context
_shared: dict[tuple[str | None, str | None, bool], ssl.SSLContext] = {}


def _context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
    if verify is not True or cert:
        return _made(verify=verify, cert=cert, trust_env=trust_env)
    # what httpx reads for the default (SSL_CERT_FILE, SSL_CERT_DIR, else certifi's)
    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"), trust_env)
    ctx = _shared.get(key)
    if ctx is None:
        ctx = _shared[key] = _made(verify=True, cert=None, trust_env=trust_env)
    return ctx


def share_default_context() -> None:
    transports.create_ssl_context = _context  # type: ignore[assignment]
