"""The client's side of card security: signed cards (TLS options: ``tls.py``).

``CardVerifier`` checks an agent card's JWS signatures (A2A v1.0 §8.4)
before the client uses the card, and refuses a card none of whose
signatures verifies. Keys come from ``keys`` (pinned: a JWKS, PEMs), from
``jwks_url``, or by default from a JWKS of the card's own origin: the one a
signature's ``jku`` names there, else the one beside the card
(``/agents/{name}/.well-known/jwks.json`` for an agent served below a path),
else the origin's ``/.well-known/jwks.json`` — which proves the card is the
one its host publishes (over HTTPS, that host's certificate vouches for it),
not that the host is trustworthy: pin keys for that.
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
    verified_card,
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
        #: where the keys of the last card verified came from (None: given, or none yet)
        self.keys_url: str | None = None
        #: the kid of the signature that verified the last card ("": one of no kid)
        self.kid: str | None = None

    @property
    def finds_keys_itself(self) -> bool:
        """Keys given, or a JWKS URL: no card's origin is needed to find them."""
        return self._keys is not None or self.jwks_url is not None

    def jwks_url_for(self, card_url: str, card: AgentCard | None = None) -> str:
        """The JWKS URL looked at first for the card at ``card_url``."""
        return self.jwks_urls_for(card_url, card)[0]

    def jwks_urls_for(self, card_url: str, card: AgentCard | None = None) -> list[str]:
        """The JWKS URLs looked at, in turn, for the card at ``card_url``: ``jwks_url``;
        else the JWKS beside the card, then the origin's. A signature's ``jku`` is not
        taken, even at the card's origin: it is the signer's word, and another agent
        served there would name its own keys (a card read over the mesh or gRPC names
        its own URL, so the signer chose where its keys were looked for)."""
        del card  # (kept in the signature: what the keys of a card are may depend on it)
        if self.jwks_url is not None:
            return [self.jwks_url]
        parts = urlsplit(card_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        urls = []
        below, at_well_known, _ = parts.path.rpartition("/.well-known/")
        if at_well_known:
            urls.append(origin + below + JWKS_PATH)
        urls.append(origin + JWKS_PATH)
        return list(dict.fromkeys(urls))

    async def keys(self, card_url: str, transport: Transport,
                   headers: dict[str, str] | None = None, *,
                   card: AgentCard | None = None) -> Any:
        if self._keys is not None:
            return self._keys
        refusals = []
        urls = self.jwks_urls_for(card_url, card)
        for n, url in enumerate(urls, 1):
            reply = await transport.get(url, {"Accept": "application/json", **(headers or {})})
            if reply.ok:
                try:
                    found = self._key_set(url, reply.content)
                    self.keys_url = url
                    return found
                except UnverifiedCard:
                    if n == len(urls):
                        raise
                    continue  # (a page answering any path, not keys: the next place)
            refusals.append(f"{url} answered HTTP {reply.status}")
        raise UnverifiedCard(f"cannot fetch the keys to verify the card: {', '.join(refusals)}")

    @staticmethod
    def _key_set(url: str, content: bytes) -> Any:
        try:
            return load_keys(msgspec.json.decode(content))
        except (msgspec.DecodeError, ValueError) as exc:
            raise UnverifiedCard(f"{url} is not a usable JWKS: {exc}") from None
        except RecursionError:
            raise UnverifiedCard(f"{url} is not a usable JWKS: nested too deeply") from None

    async def verify(self, fetched: FetchedCard, transport: Transport) -> AgentCard:
        """The card, once one of its signatures verifies; ``UnverifiedCard`` otherwise."""
        if not fetched.card.signatures:
            # said as it is, before any keys are looked for (which an unsigned card's
            # agent may well not publish)
            raise UnverifiedCard(f"the card at {fetched.url} is not trusted: "
                                 "the card is not signed")
        keys = await self.keys(fetched.url, transport, card=fetched.card)
        try:
            card, self.kid = verified_card(fetched.document, keys, algorithms=self.algorithms)
        except CardSignatureError as exc:
            raise UnverifiedCard(f"the card at {fetched.url} is not trusted: {exc}") from None
        return card


