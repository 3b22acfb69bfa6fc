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
from typing import Any

import grpc

__all__ = ["StandardServices"]

log = logging.getLogger("interlingua.grpc")


class StandardServices:
    """Health and reflection on one ``grpc.aio.Server``, for ``services``.

    Health answers ``SERVING`` for the server as a whole (service ``""``) and for
    each service it serves from ``serving()`` on, and ``NOT_SERVING`` from
    ``stopping()`` on, or from the moment an engine it follows (``follow``) begins
    to drain: a probe sees a server that drains as down before it goes.
    """

    def __init__(self, server: grpc.aio.Server, services: Sequence[str]) -> None:
        self._health: Any = None
        self._services: list[str] = []
        self._followers: list[asyncio.Task[None]] = []
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

    def follow(self, drain_begun: asyncio.Event) -> None:
        """Say ``NOT_SERVING`` once ``drain_begun`` (an engine's) is set: the
        drain before the stop refuses new sends, and ``/healthz`` answers 503."""
        if self._health is None:
            return

        async def down_when_draining() -> None:
            await drain_begun.wait()
            await self._set("NOT_SERVING")

        self._followers.append(asyncio.get_running_loop().create_task(down_when_draining()))

    async def stopping(self) -> None:
        for follower in self._followers:
            follower.cancel()
        self._followers.clear()
        await self._set("NOT_SERVING")

    async def _set(self, status: str) -> None:
        if self._health is None:
            return
        from grpc_health.v1 import health_pb2

        value = health_pb2.HealthCheckResponse.ServingStatus.Value(status)
        for name in self._services:
            await self._health.set(name, value)
