"""The machine's Mosquitto (127.0.0.1:1883, MQTT 5) for the mesh tests, agents
served on it in-process, and a raw MQTT peer that publishes requests and
collects what comes back. Each test works in a namespace of its own."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec

from interlingua import Agent, create_app
from interlingua.mesh import MeshSettings, attach
from interlingua.mesh.agent import MeshAgent
from interlingua.mesh.broker import Broker, Inbound
from interlingua.mesh.topics import Topics, parse_mesh_url
from tests.ci import unavailable
from tests.services import reachable

BROKER = "mqtt://127.0.0.1:1883"


def need_broker() -> None:
    if not reachable("127.0.0.1", 1883):
        unavailable("Mosquitto is not running on 127.0.0.1:1883 (scripts/services starts it)")


def namespace() -> str:
    return "t" + uuid.uuid4().hex[:12]


@asynccontextmanager
async def on_mesh(agent: Agent, ns: str, *, store: str = "memory://", name: str | None = None,
                  **settings: Any) -> AsyncIterator[MeshAgent]:
    """``agent`` served on the mesh (no HTTP) for the length of the block."""
    app = create_app(agent, store=store, freeze_gc=False)
    settings.setdefault("card_interval", 0.5)
    settings.setdefault("cancel_grace", 1.0)
    # the broker keeps a test's sessions only briefly
    settings.setdefault("session_expiry", 30)
    attach(app, MeshSettings(url=BROKER, namespace=ns, **settings), name=name)
    async with app.router.lifespan_context(app):
        yield app.state.mesh


class Peer:
    """A raw MQTT client: publishes what a test says, keeps everything it hears."""

    def __init__(self, ns: str) -> None:
        self.topics = Topics(ns)
        self.broker = Broker(parse_mesh_url(BROKER), "peer-" + uuid.uuid4().hex[:10])
        self.heard: asyncio.Queue[Inbound] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Peer:
        await self.broker.connect()

        async def read() -> None:
            async for msg in self.broker.messages():
                await self.heard.put(msg)

        self._reader = asyncio.create_task(read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self.broker.close()

    async def listen(self, *topics: str) -> None:
        await self.broker.subscribe(*topics)

    async def request(self, agent: str, payload: bytes | dict[str, Any],
                      **properties: Any) -> None:
        body = payload if isinstance(payload, bytes) else msgspec.json.encode(payload)
        correlation = properties.pop("correlation", None)
        response_topic = properties.pop("response_topic", None)
        await self.broker.publish(self.topics.request(agent), body, properties,
                                  correlation=correlation, response_topic=response_topic)

    async def next(self, timeout: float = 10.0) -> Inbound:
        return await asyncio.wait_for(self.heard.get(), timeout)

    async def until(self, topic: str, timeout: float = 10.0) -> tuple[Inbound, list[Inbound]]:
        """The next message on ``topic``, and every message heard before it."""
        before: list[Inbound] = []
        while True:
            msg = await self.next(timeout)
            if msg.topic == topic:
                return msg, before
            before.append(msg)

    async def quiet(self, seconds: float = 0.5) -> list[Inbound]:
        """What is heard in the next ``seconds``."""
        out: list[Inbound] = []
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while (left := end - loop.time()) > 0:
            try:
                out.append(await asyncio.wait_for(self.heard.get(), left))
            except TimeoutError:
                break
        return out


def decoded(msg: Inbound) -> Any:
    return msgspec.json.decode(msg.payload)


def stray_updates(rid: str, *, errors: bool = True) -> list[bytes]:
    """What a shared status topic can carry that is no update of the request ``rid``
    (of task ``rid``): not JSON, JSON-RPC of the wrong shape under its id, and updates
    under its id about another task (an artifact, a status saying "injected" and the
    other task completed, in SAM's spelling and in v1.0's). ``errors``: with errors
    under its id too (SAM's status topics carry none; on the A2A-over-MQTT profile's
    reply topic an error is the request's last answer)."""
    def answer(**members: Any) -> bytes:
        return msgspec.json.encode({"jsonrpc": "2.0", "id": rid, **members})

    other = {"task_id": "someone-else", "context_id": "c-other"}
    injected = {"role": "agent", "message_id": "mx", "parts": [{"text": "injected"}]}
    v1_other = {"taskId": "someone-else", "contextId": "c-other"}
    v1_injected = {"role": "ROLE_AGENT", "messageId": "my", "parts": [{"text": "injected"}]}
    wrong = [answer(error={"code": -32603, "message": "injected"}),
             answer(error="injected")] if errors else []
    return [
        b"{not json",
        answer(result="junk"),
        answer(result={"kind": "status-update", "status": "nope"}),
        answer(),
        *wrong,
        answer(result={"kind": "artifact-update", **other, "artifact": {
            "artifact_id": "x", "parts": [{"text": "injected"}]}}),
        answer(result={"kind": "status-update", **other, "final": False, "status": {
            "state": "working", "message": injected}}),
        answer(result={"kind": "task", "id": "someone-else", "context_id": "c-other",
                       "status": {"state": "completed", "message": injected}}),
        answer(result={"artifactUpdate": {**v1_other, "artifact": {
            "artifactId": "y", "parts": [{"text": "injected"}]}}}),
        answer(result={"statusUpdate": {**v1_other, "status": {
            "state": "TASK_STATE_WORKING", "message": v1_injected}}}),
        answer(result={"task": {"id": "someone-else", "contextId": "c-other", "status": {
            "state": "TASK_STATE_COMPLETED", "message": v1_injected}}}),
    ]


def held_agent(release: asyncio.Event) -> Agent:
    """An agent that says it works, waits for ``release``, then writes an artifact
    ("real") and completes."""
    async def held(ctx: Any) -> None:
        await ctx.update("waiting")
        await release.wait()
        await ctx.artifact("real", name="out.txt")
        await ctx.complete("done")

    return Agent("Held", "Waits to be let go.", held, streaming=True)


def stop_child(proc: subprocess.Popen[Any], grace: float = 15.0) -> None:
    """SIGTERM, ``grace`` seconds to exit, then SIGKILL; its pipes read to the end."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.communicate()


async def stop_children(proc: subprocess.Popen[Any],
                        starting: asyncio.Task[subprocess.Popen[Any]] | None) -> None:
    """``stop_child`` of ``proc``, and of the process ``starting`` starts, if any (a
    restart test's new process, still starting when the test failed)."""
    stop_child(proc)
    if starting is not None:
        with contextlib.suppress(BaseException):
            stop_child(await starting)


# ------------------------------------------------------------ A2A over MQTT (emqx)


def org_unit() -> tuple[str, str]:
    """An org and unit no other test uses."""
    return "o" + uuid.uuid4().hex[:10], "u" + uuid.uuid4().hex[:6]


@asynccontextmanager
async def on_emqx(agent: Agent, org: str, unit: str, *, store: str = "memory://",
                  name: str | None = None, http: bool = False,
                  **settings: Any) -> AsyncIterator[Any]:
    """``agent`` served in the A2A-over-MQTT profile for the length of the block."""
    app = create_app(agent, store=store, freeze_gc=False)
    settings.setdefault("session_expiry", 30)
    attach(app, MeshSettings(url=BROKER, namespace="", profile="emqx", org=org, unit=unit,
                             http=http, **settings), name=name)
    async with app.router.lifespan_context(app):
        yield app.state.mesh


class EmqxPeer(Peer):
    """A raw MQTT client in the A2A-over-MQTT topic space of ``org``/``unit``."""

    def __init__(self, org: str, unit: str) -> None:
        super().__init__("unused")
        from interlingua.mesh.emqx.topics import Space

        self.space = Space(org, unit)
        self.reply_topic = self.space.reply("peer", uuid.uuid4().hex[:8])

    async def request(self, agent: str, payload: bytes | dict[str, Any],
                      **properties: Any) -> None:
        body = payload if isinstance(payload, bytes) else msgspec.json.encode(payload)
        correlation = properties.pop("correlation", None)
        response_topic = properties.pop("response_topic", self.reply_topic)
        await self.broker.publish(self.space.request(agent), body, properties,
                                  correlation=correlation, response_topic=response_topic)


@asynccontextmanager
async def in_layout(agent: Agent, layout: str, broker: str, org: str, unit: str = "u",
                    **options: Any) -> AsyncIterator[str]:
    """``agent`` alone on the mesh of ``broker`` in ``layout`` ("sam": namespace ``org``;
    "emqx": ``org``/``unit``), a memory store and ``create_app`` ``options``: its URL."""
    app = create_app(agent, store="memory://", freeze_gc=False, **options)
    name = agent.name
    if layout == "sam":
        settings = MeshSettings(url=broker, namespace=org, card_interval=0.5,
                                session_expiry=30, http=False)
        url = f"{broker}/{org}/{name}"
    else:
        settings = MeshSettings(url=broker, namespace="", profile="emqx", org=org,
                                unit=unit, session_expiry=30, http=False)
        url = f"{broker}/{org}/{unit}/{name}"
    attach(app, settings)
    async with app.router.lifespan_context(app):
        yield url
