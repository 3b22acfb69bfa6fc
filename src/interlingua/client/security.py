"""The client's side of security: TLS trust, client certificates, signed cards.

``tls_context(verify, cert)`` turns the ``verify`` / ``cert`` options into
what httpx takes: certificates are verified by default (the system's CA
bundle via certifi), a CA bundle path replaces it, ``False`` turns checking
off, and ``cert`` (a PEM holding key and certificate, or a (cert, key) pair)
is presented for mutual TLS.

``CardVerifier`` checks an agent card's JWS signatures (A2A v1.0 §8.4)
before the client uses the card, and refuses a card none of whose
signatures verifies. Keys come from ``keys`` (pinned: a JWKS, PEMs), from
``jwks_url``, or by default from the JWKS at the card's own origin
(``/.well-known/jwks.json``) — which proves the card is the one its host
publishes (over HTTPS, that host's certificate vouches for it), not that
the host is trustworthy: pin keys for that.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import msgspec

from ..core.card_signing import (
    ALGORITHMS,
    CardSignatureError,
    KeysLike,
    load_keys,
    verify_card_document,
)
from ..core.model import AgentCard
from .errors import ClientError, InvalidCard

if TYPE_CHECKING:
    from .card import FetchedCard
    from .transport import Transport

__all__ = ["JWKS_PATH", "CardVerifier", "UnverifiedCard", "tls_context"]

JWKS_PATH = "/.well-known/jwks.json"

#: a PEM with key and certificate, or (certificate, key[, password])
CertLike = str | tuple[str, str] | tuple[str, str, str]


class UnverifiedCard(InvalidCard):
    """The card's signatures do not verify (or it has none): it may have been tampered with."""


def tls_context(verify: bool | str | ssl.SSLContext = True,
                cert: CertLike | None = None) -> bool | ssl.SSLContext:
    """What to give httpx for ``verify`` (a path becomes a context, as httpx now wants)."""
    if isinstance(verify, ssl.SSLContext):
        ctx = verify
    elif verify is False:
        if cert is None:
            return False
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif isinstance(verify, str):
        try:
            ctx = ssl.create_default_context(cafile=verify)
        except (OSError, ssl.SSLError) as exc:
            raise ClientError(f"cannot read the CA bundle {verify}: {exc}") from None
    else:
        if cert is None:
            return True
        import certifi

        ctx = ssl.create_default_context(cafile=certifi.where())
    if cert is not None:
        try:
            if isinstance(cert, str):
                ctx.load_cert_chain(cert)
            else:
                ctx.load_cert_chain(*cert)
        except (OSError, ssl.SSLError) as exc:
            raise ClientError(f"cannot load the client certificate: {exc}") from None
    return ctx


class CardVerifier:
    """Checks the signatures of the cards a client reads."""

    def __init__(self, *, keys: KeysLike | None = None, jwks_url: str | None = None,
                 algorithms: Sequence[str] = ALGORITHMS) -> None:
        self._keys = load_keys(keys) if keys is not None else None
        self.jwks_url = jwks_url
        self.algorithms = list(algorithms)

    def jwks_url_for(self, card_url: str) -> str:
        if self.jwks_url is not None:
            return self.jwks_url
        parts = urlsplit(card_url)
        return f"{parts.scheme}://{parts.netloc}{JWKS_PATH}"

    async def keys(self, card_url: str, transport: Transport,
                   headers: dict[str, str] | None = None) -> Any:
        if self._keys is not None:
            return self._keys
        url = self.jwks_url_for(card_url)
        reply = await transport.get(url, {"Accept": "application/json", **(headers or {})})
        if not reply.ok:
            raise UnverifiedCard(f"cannot fetch the keys to verify the card: {url} answered "
                                 f"HTTP {reply.status}")
        try:
            return load_keys(msgspec.json.decode(reply.content))
        except (msgspec.DecodeError, ValueError) as exc:
            raise UnverifiedCard(f"{url} is not a usable JWKS: {exc}") from None

    async def verify(self, fetched: FetchedCard, transport: Transport) -> AgentCard:
        """The card, once one of its signatures verifies; ``UnverifiedCard`` otherwise."""
        keys = await self.keys(fetched.url, transport)
        try:
            return verify_card_document(fetched.document, keys, algorithms=self.algorithms)
        except CardSignatureError as exc:
            raise UnverifiedCard(f"the card at {fetched.url} is not trusted: {exc}") from None
