"""The A2A-over-MQTT topic space and the names on its cards. Pure: no I/O.

::

    $a2a/v1/request/{org}/{unit}/{agent}             requests to an agent
    $a2a/v1/reply/{org}/{unit}/{requester}/{suffix}  answers (the request's Response Topic)
    $a2a/v1/discovery/{org}/{unit}/{agent}           the agent's card, retained
    $a2a/v1/event/{org}/{unit}/{agent}               events outside request/reply (unused)
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from ..topics import MeshURL, check_name

__all__ = [
    "BINDING",
    "PROTOCOL_VERSION",
    "STATUS",
    "STATUS_SOURCE",
    "Space",
    "address",
]

PREFIX = "$a2a/v1"
#: the binding name the profile's cards give their MQTT interface
BINDING = "MQTTv5+JSONRPCv2"
#: its payloads are A2A v1.0's JSON-RPC
PROTOCOL_VERSION = "1.0"
#: the card's user properties: ``online`` / ``offline``, and who said so (``agent`` / ``lwt``)
STATUS = "a2a-status"
STATUS_SOURCE = "a2a-status-source"


@dataclass(frozen=True)
class Space:
    """The topics of one ``{org}/{unit}``."""

    org: str
    unit: str

    def __post_init__(self) -> None:
        check_name("org", self.org)
        check_name("unit", self.unit)

    def _of(self, kind: str, agent: str) -> str:
        return f"{PREFIX}/{kind}/{self.org}/{self.unit}/{agent}"

    def request(self, agent: str) -> str:
        return self._of("request", agent)

    def reply(self, requester: str, suffix: str) -> str:
        return f"{self._of('reply', requester)}/{suffix}"

    def discovery(self, agent: str) -> str:
        return self._of("discovery", agent)

    def discovery_filter(self) -> str:
        return self._of("discovery", "+")

    def event(self, agent: str) -> str:
        return self._of("event", agent)

    def client_id(self, agent: str) -> str:
        """The MQTT client id the profile requires: ``{org}/{unit}/{agent}``."""
        return f"{self.org}/{self.unit}/{agent}"

    def agent_of(self, discovery_topic: str) -> str | None:
        """The agent a discovery topic of this space is about (None: not one)."""
        head = self._of("discovery", "")
        rest = discovery_topic[len(head):] if discovery_topic.startswith(head) else ""
        return rest if rest and "/" not in rest else None


def address(url: MeshURL, org: str, unit: str, agent: str) -> str:
    """``mqtt://host:port/ORG/UNIT/AGENT``: the URL ``client_for`` takes for this agent."""
    return "/".join([url.broker] + [quote(x, safe="") for x in (org, unit, agent)])
