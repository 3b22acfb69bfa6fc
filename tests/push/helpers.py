"""Webhook receivers that record what they get, a fake clock, a loopback-only network."""

from __future__ import annotations

import asyncio
import ipaddress
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import httpcore
import msgspec

from interlingua.bus import LocalBus
from interlingua.core.calls import SendConfig, SendMessage
from interlingua.core.model import AuthInfo, PushConfig
from interlingua.core.parts import user_message
from interlingua.server import Agent, Engine
from interlingua.server.push import Attempt, PushService, PushSettings
from interlingua.stores import open_store
from tests.live import asgi_body, live_server


class Received(NamedTuple):
    path: str
    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def nid(self) -> str:
        return self.headers.get("x-a2a-notification-id", "")

    @property
    def seq(self) -> int:
        """The seq the notification id names (``{task}:{config}:{seq}:{nonce}``)."""
        return int(self.nid.split(":")[2])

    def json(self) -> Any:
        return msgspec.json.decode(self.body)


Responder = Callable[["Hook", dict[str, str], bytes, str], "int | tuple[int, list[tuple[str, str]]]"]


class Hook:
    """An ASGI webhook that records every request and answers as ``respond`` says
    (200 by default). It runs on its own thread (``serve_hook``)."""

    def __init__(self, respond: Responder | None = None) -> None:
        self.respond = respond
        self.requests: list[Received] = []
        self.lock = threading.Lock()
        #: set it to hold every request until it is set again
        self.gate = threading.Event()
        self.gate.set()
        #: requests waiting for the gate now
        self.held = 0

    @staticmethod
    def of(hook: Hook, path: str) -> Hook:
        """A hook holding what ``hook`` received on ``path`` alone."""
        one = Hook()
        with hook.lock:
            one.requests = [r for r in hook.requests if r.path == path]
        return one

    def count(self, nid: str) -> int:
        with self.lock:
            return sum(1 for r in self.requests if r.nid == nid)

    def delivered(self) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if 200 <= r.status < 300]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = await asgi_body(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if not self.gate.is_set():
            self.held += 1
            while not self.gate.is_set():
                await asyncio.sleep(0.005)
            self.held -= 1
        answer = self.respond(self, headers, body, scope["path"]) if self.respond else 200
        status, extra = (answer, []) if isinstance(answer, int) else answer
        with self.lock:
            self.requests.append(Received(scope["path"], headers, body, status))
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k.encode(), v.encode()) for k, v in extra]})
        await send({"type": "http.response.body", "body": b"{}"})


@contextmanager
def serve_hook(hook: Hook) -> Iterator[str]:
    """``hook`` on a loopback port; yields its URL."""
    with live_server(hook) as url:
        yield url


class FakeClock:
    """A clock that moves only when slept on (each sleep still yields a moment
    of real time, so the rest of the program runs)."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)
        await asyncio.sleep(0.002)


class LoopbackOnly(httpcore.AsyncNetworkBackend):
    """The network backend under the SSRF guard in tests: connects only to
    loopback addresses and records every address it was asked for, so that a
    guard bug can never send traffic off this machine."""

    def __init__(self) -> None:
        self.inner = httpcore.AnyIOBackend()
        self.asked: list[str] = []

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        self.asked.append(host)
        if not ipaddress.ip_address(host).is_loopback:
            raise httpcore.ConnectError(f"test network: {host} is not loopback")
        return await self.inner.connect_tcp(host, port, timeout=timeout,
                                            local_address=local_address,
                                            socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("test network: no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def dev_settings(**kw: Any) -> PushSettings:
    """Loopback http webhooks allowed, quick retries, a loopback-only network."""
    attempts: list[Attempt] = kw.pop("attempts", [])
    base: dict[str, Any] = {
        "allow_http": True,
        "allow_hosts": ["127.0.0.1"],
        "backoff_base": 0.05,
        "backoff_max": 0.2,
        "poll_interval": 0.2,
        "timeout": 5.0,
        "network_backend": LoopbackOnly(),
        "on_attempt": attempts.append,
    }
    base.update(kw)
    return PushSettings(**base)


async def start_engine(agent: Agent, settings: PushSettings, store: str = "memory://") -> Engine:
    store_obj = open_store(store)
    push = PushService(store_obj, settings, enabled=bool(agent.push_notifications),
                       shared=lambda: engine.leases.shared, now=lambda: engine.now())
    engine = Engine(agent, store_obj, LocalBus(), push=push)
    await engine.start()
    return engine


async def until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait (real time) until ``predicate()`` holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.01)


def send(text: str, url: str, *, blocking: bool = True, token: str | None = None,
         authentication: AuthInfo | None = None, client_task_id: str | None = None,
         config_id: str | None = None) -> SendMessage:
    """A send that carries a push config for ``url``."""
    return SendMessage(
        message=user_message(text),
        config=SendConfig(blocking=blocking, push_config=PushConfig(
            url=url, token=token, authentication=authentication, id=config_id)),
        client_task_id=client_task_id,
    )


async def _echo(text: str) -> str:
    return text.upper()


#: a quick agent with push notifications on
echo = Agent("Echo", "Echoes in capitals.", _echo, push_notifications=True)
