"""The HTTP+JSON binding as the service registers it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ...core.model import AgentInterface
from ..base import BaseBinding
from .endpoint import CardOf, RESTEndpoint

if TYPE_CHECKING:
    from ...server.service import Service

__all__ = ["RESTBinding"]


class RESTBinding(BaseBinding):
    """HTTP+JSON routes at the base URL (v1.0) and under its ``/v1`` (v0.3); the host
    (``host/app.py``) hands it every request its own routes do not take."""

    name = "rest"

    def __init__(self, service: Service, *, card_of: CardOf | None = None,
                 other_paths: Mapping[str, tuple[str, ...]] | None = None) -> None:
        self.endpoint = RESTEndpoint(service.door, service.settings, card_of=card_of,
                                     other_paths=other_paths)

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]:
        # the routes hang off the base URL: v1.0 at it, v0.3 under its /v1
        return (AgentInterface(url=base_url, binding="HTTP+JSON", protocol_version="1.0"),
                AgentInterface(url=base_url, binding="HTTP+JSON", protocol_version="0.3"))
