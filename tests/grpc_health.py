"""Asking a gRPC port's health (``grpc.health.v1``), as a load balancer's probe does."""

from __future__ import annotations

import time

import grpc

from tests.ci import unavailable

try:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
except ImportError:  # the grpc extra of an older install
    health_pb2 = health_pb2_grpc = None

SERVING, NOT_SERVING = 1, 2  # HealthCheckResponse's


def grpc_health(target: str, service: str = "") -> int:
    """The serving status the port at ``target`` (``host:port``) gives ``service``."""
    if health_pb2 is None:
        unavailable("grpcio-health-checking (the grpc extra: pip install -e '.[dev]')")
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        status: int = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status
        return status


def wait_for_grpc_health(target: str, status: int, within: float) -> int:
    """Ask until the port says ``status`` or ``within`` seconds pass; the last answer."""
    deadline = time.monotonic() + within
    while (got := grpc_health(target)) != status and time.monotonic() < deadline:
        time.sleep(0.05)
    return got
