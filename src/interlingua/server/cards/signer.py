"""The server's card signature: its key, and the JWKS that publishes the public half.

Keys are handled by the same ``KeyRing`` that signs webhooks (ES256 on
P-256 by default, RS256 as an option; generated, kept in a 0600 key file,
or given as PEM). Card keys and webhook keys are separate rings, published
together at ``/.well-known/jwks.json``: a verifier picks its key by ``kid``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...core.card_signing import card_payloads, sign_payload
from ...core.model import AgentCard, CardSignature
from ..jwks import JWKS_PATH
from ..keyring import KeyRing

__all__ = ["CardSigner", "CardSigning"]

#: payloads whose signatures a signer keeps (two for each of the agent's public and
#: extended cards, per tenant): past this many it starts again with none
_PAYLOADS_KEPT = 32


class CardSigning(msgspec.Struct, kw_only=True):
    #: "ES256" (P-256) or "RS256" (RSA 2048) for a key this server makes
    alg: str = "ES256"
    #: a fixed private key (PEM) instead of a generated one
    key_pem: str | None = None
    #: where a generated key is kept across restarts (None: in memory, new each start)
    key_path: str | None = None
    #: name the JWKS URL in each signature's protected header (``jku``)
    publish_jku: bool = True


class CardSigner:
    """Signs cards with the current key of its ring."""

    def __init__(self, settings: CardSigning, public_url: str | None = None) -> None:
        self.settings = settings
        self.ring = KeyRing(alg=settings.alg, path=settings.key_path, pem=settings.key_pem)
        self.ring.load()
        self.jwks_url = public_url.rstrip("/") + JWKS_PATH if public_url else None
        #: signatures made, by payload, key and JWKS URL
        self._payloads: dict[tuple[bytes, str, str | None], CardSignature] = {}

    def sign(self, card: AgentCard, *, base_url: str | None = None) -> AgentCard:
        """``card`` with its old signatures replaced by ones made now: over the hybrid
        document it is served as, every member of it, and over its v1.0 rendering
        (``card_payloads``); ``jku`` names the JWKS under ``base_url`` (default: the
        public URL)."""
        unsigned = msgspec.structs.replace(card, signatures=[])
        jwks_url = base_url.rstrip("/") + JWKS_PATH if base_url else self.jwks_url
        signatures = [self._signature(p, jwks_url) for p in card_payloads(unsigned)]
        return msgspec.structs.replace(unsigned, signatures=signatures)

    def sign_payload(self, payload: bytes) -> CardSignature:
        """A signature of ``payload``: the canonical form of a rendering of a card
        other than those ``sign`` covers (v0.3's proto card)."""
        return self._signature(payload, self.jwks_url)

    def _signature(self, payload: bytes, jwks_url: str | None) -> CardSignature:
        # A card served again (an extended card at each call) is not signed again:
        # a signature costs more than the rest of the call.
        key = self.ring.current
        jku = jwks_url if self.settings.publish_jku else None
        memo = (payload, key.kid, jku)
        signed = self._payloads.get(memo)
        if signed is None:
            if len(self._payloads) >= _PAYLOADS_KEPT:
                self._payloads.clear()
            signed = self._payloads[memo] = sign_payload(payload, key.key, alg=key.alg,
                                                         kid=key.kid, jku=jku)
        return signed

    def jwks(self) -> dict[str, Any]:
        return self.ring.jwks()
