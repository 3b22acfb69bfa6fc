"""Health checking (``grpc.health.v1``) and server reflection beside the A2A gRPC
services, called over real gRPC on loopback with the packages' own client stubs."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import descriptor_pb2

from interlingua import Agent
from interlingua.host import create_app
from tests.ci import unavailable
from tests.live import bind_loopback, live_server, url_of

try:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
except ImportError:  # the grpc extra of an older install
    health_pb2 = health_pb2_grpc = reflection_pb2 = reflection_pb2_grpc = None

from interlingua.bindings.grpc import add_grpc

pytestmark = pytest.mark.timeout(60)

A2A = ["lf.a2a.v1.A2AService", "a2a.v1.A2AService"]
SERVING = 1  # HealthCheckResponse.SERVING
NOT_SERVING = 2


@pytest.fixture(autouse=True)
def _packages() -> None:
    if health_pb2 is None:
        unavailable("grpcio-health-checking and grpcio-reflection (the grpc extra: "
                    "pip install -e '.[dev]')")


async def _echo(text: str) -> str:
    return text


class Served:
    """An agent with gRPC on a loopback port, stopped by ``stop()`` or at the end."""

    def __init__(self) -> None:
        self.sock = bind_loopback()
        app = create_app(Agent("Echo", "Says it back.", _echo), public_url=url_of(self.sock))
        self.grpc = add_grpc(app, "127.0.0.1:0")
        self._live = live_server(app, sock=self.sock)

    def __enter__(self) -> str:
        self._live.__enter__()
        assert self.grpc.port
        return f"127.0.0.1:{self.grpc.port}"

    def stop(self) -> None:
        self._live.__exit__(None, None, None)


@pytest.fixture(scope="module")
def target() -> Iterator[str]:
    served = Served()
    try:
        yield served.__enter__()
    finally:
        served.stop()


def test_health_says_serving_for_the_server_and_each_service(target: str) -> None:
    with grpc.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ["", *A2A, "grpc.health.v1.Health"]:
            got = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            assert got.status == SERVING, service
        with pytest.raises(grpc.RpcError) as info:
            health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
        assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_health_says_not_serving_before_the_server_goes() -> None:
    """A watcher (a load balancer) sees NOT_SERVING while the server drains."""
    served = Served()
    target = served.__enter__()
    seen: queue.Queue[Any] = queue.Queue()

    def watch() -> None:
        with grpc.insecure_channel(target) as channel:
            try:
                for answer in health_pb2_grpc.HealthStub(channel).Watch(
                        health_pb2.HealthCheckRequest(service=""), timeout=30):
                    seen.put(answer.status)
            except grpc.RpcError as exc:
                seen.put(exc.code())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert seen.get(timeout=10) == SERVING
    served.stop()
    assert seen.get(timeout=10) == NOT_SERVING
    watcher.join(timeout=20)


def _reflect(target: str, request: Any) -> Any:
    with grpc.insecure_channel(target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        (answer,) = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
        return answer


def test_reflection_lists_every_service(target: str) -> None:
    answer = _reflect(target, reflection_pb2.ServerReflectionRequest(list_services=""))
    names = {s.name for s in answer.list_services_response.service}
    assert set(A2A) <= names
    assert {"grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names


@pytest.mark.parametrize(("service", "method"), [
    ("lf.a2a.v1.A2AService", "SendStreamingMessage"),
    ("a2a.v1.A2AService", "TaskSubscription"),
])
def test_reflection_describes_the_a2a_services(target: str, service: str, method: str) -> None:
    answer = _reflect(target, reflection_pb2.ServerReflectionRequest(
        file_containing_symbol=service))
    files = [descriptor_pb2.FileDescriptorProto.FromString(raw)
             for raw in answer.file_descriptor_response.file_descriptor_proto]
    package, _, name = service.rpartition(".")
    (found,) = [s for f in files if f.package == package for s in f.service if s.name == name]
    assert method in {m.name for m in found.method}


#: what the health check of the shared port said while an agent's turn was ending
#: at shutdown (its engine stopping), and the port, for the turns to call it
_said_at_stop: list[int] = []
_shared_port: list[int] = []


async def _ends_slowly(ctx: Any) -> None:
    """Works until the server stops; as its turn is canceled, asks the port's health."""
    import asyncio

    await ctx.update("working")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{_shared_port[0]}") as channel:
            try:
                got = await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=""), timeout=10)
            except grpc.RpcError:  # the last agent to stop: the port is closed by then
                pass
            else:
                _said_at_stop.append(got.status)
        raise


def test_the_port_of_several_agents_says_not_serving_while_they_stop() -> None:
    """As on a port of one agent: from the moment the server stops, before the turns
    of any agent are ended (before: SERVING until the last agent left the port)."""
    agents = [Agent(name, "Works until stopped.", _ends_slowly) for name in ("A", "B")]
    sock = bind_loopback()
    app = create_app(agents, public_url=url_of(sock), store="memory://")
    hub = add_grpc(app, "127.0.0.1:0")
    _said_at_stop.clear()
    _shared_port[:] = []
    live = live_server(app, sock=sock)
    base = live.__enter__()
    try:
        assert hub.port
        _shared_port.append(hub.port)
        with grpc.insecure_channel(f"127.0.0.1:{hub.port}") as channel:
            got = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=10)
            assert got.status == SERVING

        for name in ("A", "B"):
            sent = httpx.post(f"{base}/agents/{name}/", headers={"A2A-Version": "1.0"}, json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                    "message": {"messageId": f"m-{name}", "role": "ROLE_USER",
                                "parts": [{"text": "work"}]},
                    "configuration": {"returnImmediately": True}}}, timeout=10)
            assert "result" in sent.json(), sent.text
    finally:
        live.__exit__(None, None, None)
    # the first agent to stop asked while the port still listened (for the other)
    assert _said_at_stop[:1] == [NOT_SERVING], _said_at_stop
