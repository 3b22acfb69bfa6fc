"""The service: one agent's engine, front door, push, card and security, with no
transport in it.

A ``Service`` is built from one ``ServiceSettings`` (the CLI, ``create_app`` and
the tests all fill it) and started and stopped as one::

    service = Service(agent, ServiceSettings(store="sqlite:///tasks.db"))
    service.add_binding(my_binding)
    async with service:
        ...  # serving

Bindings (``Binding``: JSON-RPC, HTTP+JSON, gRPC, MQTT, or one of your own) are
registered on it and started and stopped around its engine: every binding's
``prepare``, then the engine, then every binding's ``start``; on the way out
every binding's ``stop`` (last registered first), then the engine. The card
lists the interfaces the registered bindings declare. Nothing here knows a
binding by name, nor HTTP, ASGI or Starlette: a host (the ASGI app of
``host/app.py``, or the mesh-only ``interlingua serve --no-http``) serves the
bindings that need one. Nothing is kept per process, so one host may hold
several services.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

import msgspec

from ..bus import open_bus
from ..bus.base import Bus
from ..core.model import AgentCard, AgentInterface
from ..core.nesting import ENCODED
from ..hooks import Hooks
from ..observability.install import build_observer
from ..stores import open_store
from ..stores.base import Store
from .agent import Agent
from .auth.runtime import Security
from .cards.serving import A2AServer
from .cards.signer import CardSigner
from .dispatch import FrontDoor
from .engine import Engine, EngineConfig
from .idempotency import message_id_mode
from .push.service import PushService
from .settings import ServiceSettings

if TYPE_CHECKING:
    from ..observability.install import Observer

__all__ = ["Binding", "Service", "ServiceSettings"]

log = logging.getLogger("interlingua.server")

class Binding(Protocol):
    """A transport in front of a service's front door (``bindings/base.py`` has a
    base class with every method but ``name`` done).

    - ``name``: the binding as metrics and spans label its requests (``jsonrpc``,
      ``rest``, ``grpc``, ``mqtt``); it passes it to ``FrontDoor.enter`` (``Inbound.binding``).
    - ``interfaces(base_url)``: the card's entries for what it serves, for a card
      rendered for clients that reach the service's HTTP host at ``base_url``; a
      binding with an address of its own (gRPC) names that instead. Empty: the
      card names it not (a binding with nothing to declare, or not listening yet).
    - ``extend_card(card)``: the card with what this binding adds to it (gRPC: how
      its streams resume); most return ``card`` as it is.
    - ``prepare(service)``: before the engine starts. Take what it needs of the
      service (``service.door``, the front door every call goes through;
      ``service.card``; ``service.settings``) and listen, so that the card can name
      a port chosen now (then ``service.card.render_again()``).
    - ``start()``: once the engine has started: take requests.
    - ``stop()``: before the engine stops (last registered, first stopped); also
      when a later step of the start-up failed, if its ``prepare`` was called.

    Codecs come from ``interlingua.core.dialects`` (``get_codec``); every call goes
    through the door's one entry, ``service.door.enter(Inbound(...))``.
    """

    @property
    def name(self) -> str: ...

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]: ...

    def extend_card(self, card: AgentCard) -> AgentCard: ...

    async def prepare(self, service: Service) -> None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


B = TypeVar("B", bound=Binding)


class Service:
    """One agent served: its engine (with its leases and recovery), front door, push
    service, card, security and hook points, and the bindings registered on it.

    ``async with service:`` starts it (bindings prepared, engine started, bindings
    started) and stops it (in reverse); a step that fails stops what had started.
    """

    def __init__(self, agent: Agent, settings: ServiceSettings | None = None, *,
                 bindings: Iterable[Binding] = ()) -> None:
        settings = settings if settings is not None else ServiceSettings()
        self.agent = agent
        self.settings = settings
        engine_config = settings.engine_config
        if settings.message_ids is not None:
            engine_config = msgspec.structs.replace(
                engine_config or EngineConfig(),
                message_ids=message_id_mode(settings.message_ids))
        if settings.long_poll_max_wait is not None:
            engine_config = msgspec.structs.replace(
                engine_config or EngineConfig(), long_poll_max_wait=settings.long_poll_max_wait)
        self.store: Store = open_store(settings.store) if isinstance(settings.store, str) \
            else settings.store
        self.bus: Bus = open_bus(settings.bus) if isinstance(settings.bus, str) \
            else settings.bus
        auth = settings.auth
        signer = CardSigner(settings.card_signing, settings.public_url) \
            if settings.card_signing is not None else None
        self.security = Security(auth, settings.limits, signer)
        redis_url = getattr(self.bus, "redis_url", None)
        if redis_url is not None:
            # replicas sharing a Redis bus count rate limits together
            self.security.share_limits(redis_url, getattr(self.bus, "prefix", "interlingua"))
        # where observers hook in; decided once, here: when nothing is observed,
        # every hook point stays an empty list
        self.hooks = Hooks()
        self.observer: Observer | None = build_observer(tracing=settings.tracing,
                                                        metrics=settings.metrics)
        if self.observer is not None:
            self.observer.register(self.hooks)
        self.push = PushService(self.store, settings.push,
                                enabled=bool(agent.push_notifications),
                                shared=self._leases_shared, now=self._now, hooks=self.hooks)
        self.engine = Engine(agent, self.store, self.bus, config=engine_config,
                             card=self._card, authorizer=self.security,
                             admission=self.security, gate=self.security.executors,
                             push=self.push,
                             legacy_owner_of=auth.legacy_owner_of
                             if auth is not None else None,
                             hooks=self.hooks,
                             output_nesting=self.security.limits.max_nesting or ENCODED)
        self.bindings: list[Binding] = []
        #: the card as served (rendered per base URL, signed)
        self.card = A2AServer(agent, self.engine, settings, security=self.security,
                              push=self.push, bindings=self.bindings)
        #: what every binding calls
        self.door = FrontDoor(self.engine, self.security, agent, settings)
        self.started = False
        self._thresholds = gc.get_threshold()
        self._prepared: list[Binding] = []
        for binding in bindings:
            self.add_binding(binding)

    # the engine is made after the push service, which asks it for these
    def _leases_shared(self) -> bool:
        return self.engine.leases.shared

    def _now(self) -> str:
        return self.engine.now()

    def _card(self) -> AgentCard:
        return self.card.card

    # --------------------------------------------------------------- bindings

    def add_binding(self, binding: B) -> B:
        """Serve ``binding`` too: it starts and stops with the service, and the card
        lists what it declares. Before the service starts."""
        if self.started or self._prepared:
            raise RuntimeError(f"the {binding.name} binding is added after the service started")
        if any(b is binding for b in self.bindings):
            return binding
        self.bindings.append(binding)
        self.card.render_again()
        return binding

    def binding(self, name: str) -> Binding | None:
        """The registered binding called ``name`` (the first), or None."""
        return next((b for b in self.bindings if b.name == name), None)

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Service:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Prepare every binding, start the engine, start every binding; a step that
        fails stops what had started (and raises)."""
        if self.started:
            return
        bindings = list(self.bindings)
        try:
            for binding in bindings:
                self._prepared.append(binding)
                await binding.prepare(self)
        except BaseException:
            await self._stop_bindings()
            raise
        try:
            await self.engine.start()
        except BaseException:
            await self._stop_bindings()
            await self._close()
            raise
        self._freeze()
        self.started = True
        try:
            for binding in bindings:
                await binding.start()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop every binding prepared (last first), then the engine."""
        await self._stop_bindings()
        if self.started:
            self.started = False
            self._unfreeze()
        await self.engine.stop()
        await self._close()

    async def _stop_bindings(self) -> None:
        prepared, self._prepared = self._prepared, []
        for binding in reversed(prepared):
            try:
                await binding.stop()
            except Exception:  # one's failure leaves the others to stop
                log.exception("stopping the %s binding failed", binding.name)

    async def _close(self) -> None:
        await self.security.aclose()

    def _freeze(self) -> None:
        settings = self.settings
        if settings.freeze_gc:
            # A full collection visits every tracked object; most of a server's
            # are its imported code, which never becomes garbage (docs/
            # architecture.md, "The heap made at start-up is frozen").
            gc.collect()
            gc.freeze()
        self._thresholds = thresholds = gc.get_threshold()
        young = settings.young_gc_threshold
        if young is not None and young > thresholds[0]:
            # The requests in flight hold more young objects than the default 700:
            # the collector would run for nearly every request, to find next to no
            # garbage (ibid., "The young generation is larger").
            gc.set_threshold(young, *thresholds[1:])

    def _unfreeze(self) -> None:
        gc.set_threshold(*self._thresholds)
        if self.settings.freeze_gc:
            gc.unfreeze()
