"""The card an agent served on the mesh alone (``--no-http``) publishes.

An agent with no HTTP listener must not name an HTTP URL: its card's one
interface is its mesh address, ``mqtt://host:port/NS/agent`` (the broker as the
agent reaches it, without credentials), under the binding name ``MQTT``, which
is ours (A2A defines no MQTT binding). Clients that speak none of a card's
bindings say so instead of posting to a URL where nothing answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

import msgspec

from ..core.model import AgentInterface
from ..server.cards.document import card_document
from .codec import MESH_PROTOCOL_VERSION, MQTT_BINDING
from .topics import MeshURL

if TYPE_CHECKING:
    from ..server.cards.serving import A2AServer

__all__ = ["MQTT_BINDING", "mesh_address", "mesh_only_card"]



def mesh_address(url: MeshURL, namespace: str, agent: str) -> str:
    """``mqtt://host:port/NS/agent``: what ``Client(...)`` takes for this agent."""
    return f"{url.broker}/{quote(namespace, safe='')}/{quote(agent, safe='')}"


def mesh_only_card(server: A2AServer, address: str, binding: str = MQTT_BINDING,
                   protocol_version: str = MESH_PROTOCOL_VERSION) -> bytes:
    """``server``'s card with the mesh address as its only interface (under the
    profile's binding name). Push notifications are not offered: the mesh has no
    calls to register them."""
    card = server.agent.card([AgentInterface(url=address, binding=binding,
                                             protocol_version=protocol_version)])
    card = msgspec.structs.replace(card, capabilities=msgspec.structs.replace(
        card.capabilities, push_notifications=False))
    security = server.security
    card = security.declare(card)
    if security.signer is not None:
        card = security.signer.sign(card)
    body = card_document(card)
    security.check_card(body)
    return body
