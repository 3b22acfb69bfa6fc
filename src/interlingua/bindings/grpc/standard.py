"""The standard gRPC services beside the A2A ones: health checking
(``grpc.health.v1.Health``) and server reflection
(``grpc.reflection.v1alpha.ServerReflection``), so load balancers, Kubernetes
probes, ``grpc_health_probe`` and ``grpcurl`` work with no A2A knowledge.

Both come with the ``grpc`` extra (grpcio-health-checking, grpcio-reflection); an
installation without them serves the A2A services alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Protocol

import grpc

__all__ = ["Followed", "StandardServices"]

log = logging.getLogger("interlingua.grpc")

#: how often health asks the engines it follows again: a store out of reach is known
#: from time alone (an unrenewed lease), so it is asked for, not told
HEALTH_POLL_SECONDS = 0.5


class Followed(Protocol):
    """What health follows of an engine: what ``/healthz`` says of it, and its drain."""

    drain_begun: asyncio.Event

    def health(self) -> tuple[str, str | None]: ...


class StandardServices:
    """Health and reflection on one ``grpc.aio.Server``, for ``services``.

    Health answers ``SERVING`` for the server as a whole (service ``""``) and for
    each service it serves from ``serving()`` on, and ``NOT_SERVING`` from
    ``stopping()`` on, or while an engine it follows (``follow``) is not ``ok`` as its
    ``/healthz`` says: from the moment it begins to drain (a probe sees a server that
    drains as down before it goes), and while its store is out of reach.
    """

    def __init__(self, server: grpc.aio.Server, services: Sequence[str]) -> None:
        self._health: Any = None
        self._services: list[str] = []
        self._engines: list[Followed] = []
        self._watcher: asyncio.Task[None] | None = None
        try:
            from grpc_health.v1 import health, health_pb2_grpc
            from grpc_reflection.v1alpha import reflection
        except ImportError:  # an older install of the extra: the A2A services alone
            log.debug("grpcio-health-checking or grpcio-reflection missing: no health "
                      "checking or reflection over gRPC")
            return
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        self._services = ["", *services, health.SERVICE_NAME]
        # every service, reflection itself too, as its descriptors are registered
        reflection.enable_server_reflection(
            [*services, health.SERVICE_NAME, reflection.SERVICE_NAME], server)

    async def serving(self) -> None:
        await self._set("SERVING")

    def follow(self, engine: Followed) -> None:
        """Say ``NOT_SERVING`` while ``engine`` is not ``ok`` (draining, or its store
        out of reach), as ``/healthz`` answers 503, and ``SERVING`` again once it is."""
        if self._health is None:
            return
        self._engines.append(engine)
        if self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    def _status(self) -> str:
        ok = all(engine.health()[0] == "ok" for engine in self._engines)
        return "SERVING" if ok else "NOT_SERVING"

    async def _watch(self) -> None:
        shown = "SERVING"
        while True:
            status = self._status()
            if status != shown:
                await self._set(status)
                shown = status
            await _first_set([e.drain_begun for e in self._engines], HEALTH_POLL_SECONDS)

    async def stopping(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
        self._engines.clear()
        await self._set("NOT_SERVING")

    async def _set(self, status: str) -> None:
        if self._health is None:
            return
        from grpc_health.v1 import health_pb2

        value = health_pb2.HealthCheckResponse.ServingStatus.Value(status)
        for name in self._services:
            await self._health.set(name, value)


async def _first_set(events: list[asyncio.Event], timeout: float) -> None:
    """Wait until one of ``events`` not yet set is, for up to ``timeout`` seconds: a
    drain is seen at once, anything else at the next poll."""
    waiting = [asyncio.ensure_future(e.wait()) for e in events if not e.is_set()]
    if not waiting:
        await asyncio.sleep(timeout)
        return
    try:
        await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiting:
            waiter.cancel()
