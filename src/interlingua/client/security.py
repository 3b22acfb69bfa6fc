"""The client's side of card security: signed cards (TLS options: ``tls.py``).

``CardVerifier`` checks an agent card's JWS signatures (A2A v1.0 §8.4)
before the client uses the card, and refuses a card none of whose
signatures verifies. Keys come from ``keys`` (pinned: a JWKS, PEMs), from
``jwks_url``, or by default from the JWKS at the card's own origin
(``/.well-known/jwks.json``) — which proves the card is the one its host
publishes (over HTTPS, that host's certificate vouches for it), not that
the host is trustworthy: pin keys for that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import msgspec

from ..core.card_signing import (
    ALGORITHMS,
    CardSignatureError,
    KeysLike,
    load_keys,
    verify_card_document,
)
from ..core.fetching import fetchable_url
from ..core.model import AgentCard
from .card import FetchedCard
from .errors import InvalidCard
from .tls import CertLike, tls_context
from .transport import Transport

__all__ = ["JWKS_PATH", "CardVerifier", "CertLike", "UnverifiedCard", "tls_context"]

JWKS_PATH = "/.well-known/jwks.json"

class UnverifiedCard(InvalidCard):
    """The card's signatures do not verify (or it has none): it may have been tampered with."""


class CardVerifier:
    """Checks the signatures of the cards a client reads."""

    def __init__(self, *, keys: KeysLike | None = None, jwks_url: str | None = None,
                 algorithms: Sequence[str] = ALGORITHMS) -> None:
        self._keys = load_keys(keys) if keys is not None else None
        self.jwks_url = None if jwks_url is None else fetchable_url(jwks_url, "jwks_url")
        self.algorithms = list(algorithms)

    @property
    def finds_keys_itself(self) -> bool:
        """Keys given, or a JWKS URL: no card's origin is needed to find them."""
        return self._keys is not None or self.jwks_url is not None

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
        except RecursionError:
            raise UnverifiedCard(f"{url} is not a usable JWKS: nested too deeply") from None

    async def verify(self, fetched: FetchedCard, transport: Transport) -> AgentCard:
        """The card, once one of its signatures verifies; ``UnverifiedCard`` otherwise."""
        keys = await self.keys(fetched.url, transport)
        try:
            return verify_card_document(fetched.document, keys, algorithms=self.algorithms)
        except CardSignatureError as exc:
            raise UnverifiedCard(f"the card at {fetched.url} is not trusted: {exc}") from None
