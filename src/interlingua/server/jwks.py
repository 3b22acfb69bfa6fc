"""``GET /.well-known/jwks.json``: the public keys of the server's signatures.

Card keys and webhook keys are separate rings, published together: a verifier
picks its key by ``kid``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from .keyring import KeyRing

__all__ = ["JWKS_PATH", "jwks_endpoint"]

JWKS_PATH = "/.well-known/jwks.json"


def jwks_endpoint(card_keys: KeyRing | None, push_keys: KeyRing | None) -> Any:
    """The endpoint publishing ``card_keys`` and ``push_keys`` (None: not in use)."""

    async def endpoint(request: Request) -> Response:
        keys: list[dict[str, Any]] = []
        if card_keys is not None:
            keys.extend(card_keys.jwks()["keys"])
        if push_keys is not None:
            if not push_keys.loaded:
                await asyncio.to_thread(push_keys.load)
            seen = {k.get("kid") for k in keys}
            keys.extend(k for k in push_keys.jwks()["keys"] if k.get("kid") not in seen)
        if not keys:
            return Response(b'{"error":"this server publishes no signing keys"}',
                            status_code=404, media_type="application/json")
        return Response(msgspec.json.encode({"keys": keys}),
                        media_type="application/jwk-set+json",
                        headers={"Cache-Control": "public, max-age=300"})

    return endpoint
