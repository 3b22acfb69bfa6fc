"""The agent's card as served: rendered (and signed) once per base URL.

With a ``public_url`` the card names it; without one the card names the URL
each request came in at (scheme, ``Host``, mount path), so each host gets its
own rendering, kept and validated by ``ETag``.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Sequence
from email.utils import formatdate
from typing import Protocol

import msgspec

from ...core.dialects.v1_0 import encode_card_v1
from ...core.dialects.v1_1 import offered
from ...core.model import AgentCard, AgentInterface
from ..agent import Agent
from ..engine import Engine
from ..push.service import PushService
from .document import card_document
from .signer import CardSigner

__all__ = ["A2AServer", "CardVariant"]

#: the card's base URL when neither public_url nor a request says one
_FALLBACK_URL = "http://localhost:8000"


class CardVariant:
    """The card as rendered for one base URL: document, validators and RPC URL.

    ``body`` is the hybrid document every client generation reads; ``v1_body`` the
    card with v1.0's members only, for a request that says ``A2A-Version: 1.x``."""

    __slots__ = ("_v1", "body", "card", "etag", "rpc_url")

    def __init__(self, card: AgentCard, rpc_url: str, body: bytes) -> None:
        self.card = card
        self.rpc_url = rpc_url
        self.body = body
        self.etag = _etag(body)
        self._v1: tuple[bytes, str] | None = None

    def for_version(self, version: str | None) -> tuple[bytes, str]:
        """(document, ETag) for a request of ``version`` (Major.Minor, None: no header)."""
        if version is None or not version.startswith("1."):
            return self.body, self.etag
        if self._v1 is None:
            body = msgspec.json.encode(encode_card_v1(self.card))
            self._v1 = (body, _etag(body))
        return self._v1


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


#: rendered cards kept per base URL when they come from requests (each Host is one)
_MAX_VARIANTS = 64


class CardSecurity(Protocol):
    """What the card takes of the server's security (``auth.runtime.Security``):
    the schemes it declares, the check that it publishes no secret, the signer."""

    signer: CardSigner | None

    def declare(self, card: AgentCard) -> AgentCard: ...

    def check_card(self, document: bytes) -> None: ...


class CardSettings(Protocol):
    """What the card reads of the service's settings (``ServiceSettings``)."""

    @property
    def public_url(self) -> str | None: ...

    @property
    def rpc_path(self) -> str: ...

    @property
    def offer_1_1(self) -> bool: ...


class Declares(Protocol):
    """What the card asks of each binding (``service.Binding``): its interfaces,
    and what it adds to the card."""

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]: ...

    def extend_card(self, card: AgentCard) -> AgentCard: ...


def by_version(interfaces: Sequence[AgentInterface]) -> list[AgentInterface]:
    """The interfaces grouped by protocol version, newest first as the bindings list
    them (each binding's v1.0 entries, then each one's v0.3 ...), in order within."""
    order: dict[str, int] = {}
    for i in interfaces:
        order.setdefault(i.protocol_version, len(order))
    return sorted(interfaces, key=lambda i: order[i.protocol_version])


class A2AServer:
    """The agent's card as served, for each base URL clients reach it at: the
    interfaces the service's bindings declare, the push extension, the security
    schemes, the signature."""

    def __init__(self, agent: Agent, engine: Engine, settings: CardSettings,
                 security: CardSecurity,
                 push: PushService | None = None,
                 bindings: Sequence[Declares] = ()) -> None:
        self.agent = agent
        #: the bindings the card lists (the service's own list: added to as they are)
        self.bindings = bindings
        self.push = push
        self.security = security
        self.engine = engine
        self.settings = settings
        #: without a public URL the card's URLs come from each request
        self.per_request = not settings.public_url
        self.last_modified = formatdate(time.time(), usegmt=True)
        self._variants: OrderedDict[str, CardVariant] = OrderedDict()
        default = self.variant_for(settings.public_url or _FALLBACK_URL)
        self.card = default.card
        self.card_bytes = default.body
        self.rpc_url = default.rpc_url

    def render_again(self) -> None:
        """Forget the rendered cards (the settings they come from changed)."""
        self._variants.clear()
        default = self.variant_for(self.settings.public_url or _FALLBACK_URL)
        self.card = default.card
        self.card_bytes = default.body
        self.rpc_url = default.rpc_url

    def variant_for(self, base: str) -> CardVariant:
        """The card for clients that reach this server at ``base`` (rendered once, kept)."""
        base = base.rstrip("/")
        found = self._variants.get(base)
        if found is not None:
            self._variants.move_to_end(base)
            return found
        variant = self._render(base)
        self._variants[base] = variant
        if len(self._variants) > _MAX_VARIANTS:
            self._variants.popitem(last=False)
        return variant

    def _render(self, base: str) -> CardVariant:
        path = self.settings.rpc_path
        path = path if path.startswith("/") else "/" + path
        rpc_url = base + "/" if path == "/" else base + path
        bindings = self.bindings
        interfaces = [i for b in bindings for i in b.interfaces(base)]
        if self.settings.offer_1_1:
            interfaces = offered(interfaces)
        card = self.agent.card(by_version(interfaces))
        for binding in bindings:
            card = binding.extend_card(card)
        if self.push is not None:
            card = self.push.card_with_extension(card, base)
        # declared from the same config that enforces, then signed as served
        card = self.security.declare(card)
        if self.security.signer is not None:
            card = self.security.signer.sign(card, base_url=base)
        body = card_document(card)
        self.security.check_card(body)
        return CardVariant(card, rpc_url, body)
