"""What the engine needs from its collaborators, as small interfaces.

The engine declares these and receives implementations as constructor
arguments: authentication and limits (``server/auth``) implement
``Authorizer`` and ``Admission``, ``server/turns.py`` the ``TurnGate``, push
notifications (``server/push``) the ``PushHooks``. Dependencies point one way:
the engine imports none of them, and ``host/app.py`` wires them together.
Each port has a default here that does nothing beyond what the engine alone
promises (everything allowed, no limits, no push).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..core.calls import Call, SendMessage
from ..core.errors import ExtendedCardNotConfigured, ExtendedCardNotSupported, PushNotSupported
from ..core.model import AgentCard, Message, PushConfig, Task
from ..signals import DONE
from ..stores.base import Scope
from .context import Context, RequestInfo

__all__ = [
    "NO_ADMISSION",
    "NO_PUSH",
    "OPEN",
    "Admission",
    "Authorizer",
    "PushHooks",
    "TaskLookup",
    "TurnGate",
    "TurnPlace",
]

#: ``lookup(request, task_id)``: the caller's task, for a policy that asks about it
TaskLookup = Callable[[RequestInfo, str], Awaitable[Task | None]]


class Authorizer(Protocol):
    def authorize(self, call: Call, request: RequestInfo,
                  lookup: TaskLookup) -> Awaitable[None]:
        """Raise the refusal when ``request`` may not make ``call`` (awaited for
        every call: ``signals.DONE`` when there is nothing to ask)."""

    def extended_card(self, ext: Any, base: AgentCard | None,
                      request: RequestInfo) -> AgentCard:
        """The extended card ``request``'s caller sees (``Agent.extended_card``)."""


class Admission(Protocol):
    def admission(self, message: Message, metadata: dict[str, Any] | None = None
                  ) -> AbstractContextManager[None] | None:
        """Around a send: refuse a message (sent with ``metadata``) beyond the
        limits, or a send there is no
        room to run; the place is given back if the send starts no turn. None: the
        send holds no place (no cap on turns), and there is nothing to enter."""


class TurnPlace(Protocol):
    def release(self) -> None: ...


class TurnGate(Protocol):
    def take(self) -> TurnPlace:
        """The place of a turn being started (the admitted send's, or a new one)."""

    def unbounded(self, place: TurnPlace | None) -> bool:
        """True: the turn needs no slot and no clock; it may be awaited directly."""

    async def run(self, place: TurnPlace | None, executor: Callable[[Context], Awaitable[Any]],
                  ctx: Context, activity: Callable[[], int]) -> Any:
        """Run one turn in its place, within the time limits: what the executor returns."""


class PushHooks(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def send_configs(self, call: SendMessage, request: RequestInfo,
                           task_id: str) -> list[PushConfig]:
        """The checked config a send carries, stored with the task it creates."""

    async def add_send_configs(self, scope: Scope, task_id: str, call: SendMessage,
                               request: RequestInfo) -> None:
        """Register the config a send to an existing task carries."""

    async def handle(self, call: Any, request: RequestInfo) -> Any:
        """A push-config call (set, get, list, delete)."""


class _Open:
    """Every call allowed; no extended card."""

    def authorize(self, call: Call, request: RequestInfo,
                  lookup: TaskLookup) -> Awaitable[None]:
        return DONE

    def extended_card(self, ext: Any, base: AgentCard | None,
                      request: RequestInfo) -> AgentCard:
        if ext is None:  # (the card offers none: spec §3.3.4)
            raise ExtendedCardNotSupported()
        raise ExtendedCardNotConfigured("No extended agent card is configured for this agent")


class _NoAdmission:
    def admission(self, message: Message, metadata: dict[str, Any] | None = None) -> None:
        return None


class _NoPush:
    """Push notifications off: a send that asks for them, and every config call, is refused."""

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def send_configs(self, call: SendMessage, request: RequestInfo,
                           task_id: str) -> list[PushConfig]:
        if call.config.push_config is not None:
            raise PushNotSupported()
        return []

    async def add_send_configs(self, scope: Scope, task_id: str, call: SendMessage,
                               request: RequestInfo) -> None:
        await self.send_configs(call, request, task_id)

    async def handle(self, call: Any, request: RequestInfo) -> Any:
        raise PushNotSupported()


OPEN: Authorizer = _Open()
NO_ADMISSION: Admission = _NoAdmission()
NO_PUSH: PushHooks = _NoPush()
