"""The topic layouts an agent can be served in on a broker, each a ``Profile``:
``sam`` (Solace Agent Mesh, mesh/agent.py) and ``emqx`` (A2A over MQTT,
mesh/emqx/). What differs between them (topics, presence, reply routing, the
task id's origin) lives in each one's agent; the binding, the CLI and the card
ask the profile, never its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .card import mesh_address
from .codec import MESH_PROTOCOL_VERSION, MQTT_BINDING
from .settings import MeshSettings
from .topics import Topics

if TYPE_CHECKING:
    from ..server.dispatch import FrontDoor

__all__ = ["PROFILES", "Profile", "profile_of"]


@dataclass(frozen=True)
class Profile:
    """One layout: the name of its interface on a card, the agent's URL and request
    topic, and the agent that serves it."""

    name: str
    #: the interface's binding name and protocol version on the agent's card
    binding: str
    protocol_version: str
    #: whether a card served over HTTP lists the mesh interface too
    listed_beside_http: bool

    def address(self, settings: MeshSettings, agent: str) -> str:
        raise NotImplementedError

    def request_topic(self, settings: MeshSettings, agent: str) -> str:
        raise NotImplementedError

    def agent(self, door: FrontDoor, card: bytes, name: str, settings: MeshSettings) -> Any:
        raise NotImplementedError


class _SAM(Profile):
    def address(self, settings: MeshSettings, agent: str) -> str:
        return mesh_address(settings.broker_url(), settings.namespace, agent)

    def request_topic(self, settings: MeshSettings, agent: str) -> str:
        return Topics(settings.namespace).request(agent)

    def agent(self, door: FrontDoor, card: bytes, name: str, settings: MeshSettings) -> Any:
        from .agent import MeshAgent

        return MeshAgent(door, card, name, settings)


class _EMQX(Profile):
    def _space(self, settings: MeshSettings) -> Any:
        from .emqx.topics import Space

        assert settings.org is not None and settings.unit is not None
        return Space(settings.org, settings.unit)

    def address(self, settings: MeshSettings, agent: str) -> str:
        from .emqx.topics import address

        assert settings.org is not None and settings.unit is not None
        return address(settings.broker_url(), settings.org, settings.unit, agent)

    def request_topic(self, settings: MeshSettings, agent: str) -> str:
        return str(self._space(settings).request(agent))

    def agent(self, door: FrontDoor, card: bytes, name: str, settings: MeshSettings) -> Any:
        from .emqx.agent import EmqxAgent

        return EmqxAgent(door, card, name, settings)


PROFILES: dict[str, Profile] = {p.name: p for p in (
    # (listed beside HTTP: consumers read the agent's topic level there, --mesh-name)
    _SAM("sam", MQTT_BINDING, MESH_PROTOCOL_VERSION, listed_beside_http=True),
    # the binding name and version the profile's own cards give (its SDK's build_card)
    _EMQX("emqx", "MQTTv5+JSONRPCv2", "1.0", listed_beside_http=True),
)}


def profile_of(settings: MeshSettings) -> Profile:
    try:
        return PROFILES[settings.profile]
    except KeyError:
        raise ValueError(f"unknown mesh profile {settings.profile!r}; known: "
                         f"{', '.join(PROFILES)}") from None
