"""The binding interface: what a transport in front of a service implements.

The port is the service's (``server/service.py: Binding``, a Protocol, so that
the service imports no binding); ``BaseBinding`` here does every part of it but
``name``, for a binding to override what it needs. A new binding is one module
(a ``BaseBinding`` subclass) and one registration (``service.add_binding(b)``,
or ``create_app(agent, bindings=[b])``):

- ``name``: how metrics and spans label its requests (``Inbound(binding=name, ...)``
  given to ``FrontDoor.enter``): ``jsonrpc``, ``rest``, ``grpc``, ``mqtt``, or its own.
- ``interfaces(base_url)``: the card's ``AgentInterface`` entries for what it
  serves (``base_url``: where the card's reader reaches the HTTP host).
- ``extend_card(card)``: what it adds to the card (gRPC: how streams resume).
- ``prepare(service)``: before the engine starts; take ``service.door`` (the front
  door, whose one entry ``enter(inbound)`` every call goes through) and listen.
- ``start()``: once the engine has started. ``stop()``: before it stops.

Codecs come from the registry (``interlingua.core.dialects.get_codec``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from ..core.model import AgentCard, AgentInterface
from ..server.service import Binding

if TYPE_CHECKING:
    from ..server.service import Service

__all__ = ["BaseBinding", "Binding"]


class BaseBinding:
    """A binding with nothing to declare and nothing to start: subclasses set
    ``name`` and override what they need (see the module's docstring)."""

    name: ClassVar[str] = ""

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]:
        return ()

    def extend_card(self, card: AgentCard) -> AgentCard:
        return card

    async def prepare(self, service: Service) -> None:
        return None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None
