"""The client's gRPC binding against a real interlingua server on loopback: both
services (v1.0 ``lf.a2a.v1``, v0.3 ``a2a.v1``), streams and their resumption over a
connection cut mid-stream, errors, authentication as metadata, the extended card,
choosing gRPC from the card, TLS, and the client without the ``grpc`` extra."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import msgspec
import pytest

from interlingua import Agent
from interlingua.bindings.grpc import add_grpc
from interlingua.bindings.grpc.status import status_details
from interlingua.cli.serve import _grpc_credentials
from interlingua.client import Client, ClientError, ResumePolicy, StreamEvent
from interlingua.client import bindings as client_bindings
from interlingua.client.card import interface_url
from interlingua.client.errors import BadResponse
from interlingua.client.grpc import target_of
from interlingua.client.grpc_status import error_of, read_status
from interlingua.core.calls import (
    DeletePushConfig,
    GetExtendedCard,
    GetPushConfig,
    ListPushConfigs,
    SetPushConfig,
)
from interlingua.core.errors import (
    AuthenticationRequired,
    InternalError,
    MethodNotFound,
    ResourceUnavailable,
    TaskNotCancelable,
    TaskNotFound,
)
from interlingua.core.model import (
    AgentCard,
    APIKeyScheme,
    ArtifactUpdate,
    DataPart,
    PushConfig,
    Task,
    TaskState,
)
from interlingua.grpc_wire.address import card_url
from interlingua.host import create_app
from interlingua.server.auth import APIKeyAuth, AuthConfig
from interlingua.server.auth.limits import Limits
from interlingua.server.push.settings import PushSettings
from tests.bindings.chunks_agent import write_chunks
from tests.live import bind_loopback, live_grpc_agent
from tests.security.helpers import PKI, serve_app

pytestmark = pytest.mark.timeout(60)

KEY = "alice-" + "a" * 20




AGENT = Agent("Story", "Writes in chunks.", write_chunks, streaming=True,
              extended_card=lambda base: msgspec.structs.replace(base, name="Story+"))
DIALECTS = ["1.0", "0.3"]


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(AGENT) as where:
        yield where


def _shape(events: list[StreamEvent]) -> list[Any]:
    volatile = {"id", "task_id", "context_id", "message_id", "artifact_id", "timestamp"}

    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in volatile}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return [strip(msgspec.to_builtins(e.item)) for e in events]


# ---------------------------------------------------------------- calls, streams


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_stream_over_grpc_is_the_stream_json_rpc_gives(
        agent: tuple[str, str], dialect: str) -> None:
    base, target = agent
    async with Client(target, binding="grpc", dialect=dialect) as over_grpc, \
            Client(base + "/", dialect=dialect) as over_jsonrpc:
        events = [e async for e in over_grpc.stream("4")]
        expected = [e async for e in over_jsonrpc.stream("4")]
        assert over_grpc.endpoint is not None and over_grpc.endpoint.binding == "GRPC"
    # every event numbered as in the task's log, the number taken out of its metadata
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert _shape(events) == _shape(expected)
    assert events[-1].state is TaskState.COMPLETED
    assert all(not (e.item.metadata or {}) for e in events if isinstance(e.item, ArtifactUpdate))


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_subscribe_after_an_event_replays_the_rest(
        agent: tuple[str, str], dialect: str) -> None:
    _, target = agent
    async with Client(target, binding="grpc", dialect=dialect) as client:
        first: list[StreamEvent] = []
        async for event in client.stream("6 0.01"):
            first.append(event)
            if len(first) == 3:
                break
        task_id = first[0].task_id
        assert task_id is not None
        for _ in range(200):  # the task ends meanwhile: only its log has the rest
            if (await client.get_task(task_id)).status.state is TaskState.COMPLETED:
                break
            await asyncio.sleep(0.02)
        rest = [e async for e in client.subscribe(task_id, last_event_id=first[-1].seq)]
    seqs = [e.seq for e in first + rest]
    assert seqs == list(range(1, len(seqs) + 1))  # nothing lost, nothing twice
    assert sum(isinstance(e.item, ArtifactUpdate) for e in first + rest) == 6
    assert rest[-1].state is TaskState.COMPLETED


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_cancel_and_its_refusal(agent: tuple[str, str], dialect: str) -> None:
    _, target = agent
    async with Client(target, binding="grpc", dialect=dialect) as client:
        task = await client.send("slow", blocking=False)
        assert isinstance(task, Task)
        canceled = await client.cancel(task.id)
        assert canceled.status.state is TaskState.CANCELED
        with pytest.raises(TaskNotCancelable):
            await client.cancel(task.id)
        with pytest.raises(TaskNotFound) as missing:
            await client.get_task("no-such-task")
    assert missing.value.message == "Task not found: no-such-task"


@pytest.mark.parametrize(("dialect", "name"), [("1.0", "Story+"), ("0.3", "Story+")])
async def test_the_extended_card(agent: tuple[str, str], dialect: str, name: str) -> None:
    _, target = agent
    async with Client(target, binding="grpc", dialect=dialect) as client:
        card = await client.call(GetExtendedCard())
    assert isinstance(card, AgentCard) and card.name == name


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_push_config_is_set_read_listed_and_deleted(dialect: str) -> None:
    # v0.3: CreateTaskPushNotificationConfig names the task in ``parent`` and the
    # config's id in ``configId``; both must reach the server
    pushing = Agent("Story", "Writes in chunks.", write_chunks, streaming=True, push_notifications=True)
    hook = PushSettings(allow_http=True, allow_private_networks=True, max_attempts=1)
    with live_grpc_agent(pushing, push=hook) as (_, target):
        async with Client(target, binding="grpc", dialect=dialect) as client:
            task = await client.send("slow", blocking=False)
            assert isinstance(task, Task)
            config = PushConfig(url="http://127.0.0.1:9/hook", id="cfg-1", token="tok-1")
            stored = await client.call(SetPushConfig(task_id=task.id, config=config))
            got = await client.call(GetPushConfig(task_id=task.id, config_id="cfg-1"))
            listed = await client.call(ListPushConfigs(task_id=task.id))
            await client.call(DeletePushConfig(task_id=task.id, config_id="cfg-1"))
            left = await client.call(ListPushConfigs(task_id=task.id))
            await client.cancel(task.id)
    for found in (stored, got):
        assert isinstance(found, PushConfig), found
        assert (found.id, found.url, found.token, found.task_id) == (
            "cfg-1", config.url, "tok-1", task.id)
    assert isinstance(listed, list) and [c.id for c in listed] == ["cfg-1"]
    assert left == []


# ------------------------------------------------------------ choosing the binding


async def test_grpc_is_chosen_from_the_card(agent: tuple[str, str]) -> None:
    base, target = agent
    async with Client(base, binding="grpc") as client:
        endpoint = await client.resolve()
        assert (endpoint.binding, endpoint.dialect) == ("GRPC", "1.0")
        assert endpoint.url == f"grpc://{target}"  # a card's host:port, not a path
        assert [(e.binding, e.dialect) for e in client.endpoints] == [("GRPC", "1.0"),
                                                                     ("GRPC", "0.3")]
        task = await client.send("1")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert client.last_result is not None and b'"TASK_STATE_COMPLETED"' in client.last_result
    async with Client(base) as client:
        await client.resolve()
        offered = [(e.binding, e.dialect) for e in client.endpoints]
    # without a binding asked for, gRPC is among the card's choices, in its order
    assert ("GRPC", "1.0") in offered and ("GRPC", "0.3") in offered


async def test_an_agent_without_the_service_is_method_not_found() -> None:
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with Client(f"127.0.0.1:{port}", binding="grpc", dialect="1.0") as client:
            with pytest.raises(MethodNotFound):
                await client.get_task("t")
            # it was tried in v0.3 too before giving up
            assert client.dialect in ("0.3", "1.0")
    finally:
        await server.stop(0)


async def test_an_unreachable_agent(agent: tuple[str, str]) -> None:
    sock = bind_loopback()
    port = sock.getsockname()[1]
    sock.close()
    async with Client(f"127.0.0.1:{port}", binding="grpc", dialect="1.0", timeout=5) as client:
        with pytest.raises(ClientError, match=r"cannot reach|did not answer"):
            await client.get_task("t")


def test_without_the_extra_grpc_is_refused_when_asked_and_passed_over_otherwise(
        monkeypatch: pytest.MonkeyPatch, agent: tuple[str, str]) -> None:
    base, _ = agent
    spec = client_bindings.BINDINGS["grpc"]
    monkeypatch.setitem(client_bindings.BINDINGS, "grpc",
                        dataclasses.replace(spec, available=lambda: False))
    with pytest.raises(ClientError, match=r"pip install 'interlingua\[grpc\]'"):
        Client(base, binding="grpc")

    async def choose() -> list[str]:
        async with Client(base) as client:
            await client.resolve()
            return [e.binding for e in client.endpoints]

    assert "GRPC" not in asyncio.run(choose())


# ------------------------------------------------------------------ authentication


async def test_headers_travel_as_metadata() -> None:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})})
    with live_grpc_agent(AGENT, auth=auth) as (_, target):
        async with Client(target, binding="grpc", dialect="1.0") as anonymous:
            with pytest.raises(AuthenticationRequired):
                await anonymous.get_task("t")
        async with Client(target, binding="grpc", dialect="1.0",
                          headers={"X-API-Key": KEY}) as alice:
            task = await alice.send("1")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        async with Client(target, binding="grpc", dialect="0.3",
                          headers={"X-API-Key": KEY}) as alice:
            card = await alice.call(GetExtendedCard())
    # the v0.3 proto's security schemes read as the JSON card's
    assert isinstance(card, AgentCard) and card.name == "Story+"
    (scheme,) = card.security_schemes.values()
    assert isinstance(scheme, APIKeyScheme) and scheme.location == "header"
    assert card.security == [{name: []} for name in card.security_schemes]


async def test_a_header_that_is_no_metadata_is_a_clear_error(agent: tuple[str, str]) -> None:
    # refused where it is given, as on every binding (tests/cli/test_text_arguments.py)
    _, target = agent
    with pytest.raises(ValueError, match="the value of header X-Name must be printable ASCII"):
        Client(target, binding="grpc", dialect="1.0", headers={"X-Name": "Zoë"})


# -------------------------------------------------------------------------- TLS


def test_tls_when_the_card_is_read_over_https(tmp_path: Path) -> None:
    pki = PKI.make(tmp_path)
    sock = bind_loopback()
    host, port = sock.getsockname()[:2]
    app = create_app(AGENT, public_url=f"https://{host}:{port}", store="memory://")
    server = add_grpc(app, "127.0.0.1:0",
                      credentials=_grpc_credentials(str(pki.server), None, None))

    async def go(base: str) -> tuple[str, TaskState]:
        async with Client(base, binding="grpc", verify=str(pki.ca)) as client:
            task = await client.send("1")
            assert isinstance(task, Task) and client.endpoint is not None
            return client.endpoint.url, task.status.state

    with serve_app(app, sock, certfile=str(pki.server)) as base:
        url, state = asyncio.run(go(base))
    assert url == f"grpcs://127.0.0.1:{server.port}" and state is TaskState.COMPLETED


def test_a_grpc_address_is_spoken_to_over_grpc_only() -> None:
    with pytest.raises(ValueError, match="gRPC address"):
        Client("grpc://127.0.0.1:50051", binding="rest")
    client = Client("grpcs://agents.example:443")
    assert client.binding == "grpc"
    assert client.endpoint is not None
    assert (client.endpoint.binding, client.endpoint.dialect) == ("GRPC", "1.0")
    assert [e.dialect for e in client.endpoints] == ["1.0", "0.3"]


async def test_a_card_s_grpc_url_is_an_address_to_dial() -> None:
    """``dns:///host:port``, copied from a card, is spoken to as ``grpc://host:port``."""
    agent = Agent("Echo", "Says it back.", _echo_text)
    with live_grpc_agent(agent) as (_, target):
        async with Client(f"dns:///{target}") as client:
            assert client.url == f"grpc://{target}" and client.binding == "grpc"
            task = await client.send("over dns:")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        # a scheme in capitals is the same scheme (it was taken for an HTTP URL)
        async with Client(f"GRPC://{target}") as client:
            assert client.url == f"grpc://{target}" and client.binding == "grpc"
            task = await client.send("in capitals")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED


def test_grpc_addresses() -> None:
    assert target_of("127.0.0.1:50051") == ("127.0.0.1:50051", False)
    assert target_of("127.0.0.1:50051", default_tls=True) == ("127.0.0.1:50051", True)
    assert target_of("grpc://agents.example:50051") == ("agents.example:50051", False)
    assert target_of("grpcs://agents.example:50051/") == ("agents.example:50051", True)
    assert target_of("https://agents.example") == ("agents.example:443", True)
    assert target_of("grpc://[::1]:7") == ("[::1]:7", False)
    # gRPC's own name form, as cards name an endpoint: TLS is the reader's default
    assert target_of("dns:///agents.example:50051") == ("agents.example:50051", False)
    assert target_of("dns:///agents.example:50051", default_tls=True) == \
        ("agents.example:50051", True)
    assert target_of("dns://8.8.8.8/agents.example:7") == ("agents.example:7", False)
    assert target_of("dns:agents.example:7") == ("agents.example:7", False)
    for bad in ("ftp://x:1", "a/b", "grpc://:1", "dns:///a/b"):
        with pytest.raises(ClientError):
            target_of(bad)
    for bad in ("grpc://h:99999", "grpcs://h:x", "grpc://h:\u00b2"):
        with pytest.raises(ClientError, match=r"has no valid port \(0-65535\)"):
            target_of(bad)


def test_cards_name_grpc_endpoints_in_a_form_every_reader_takes() -> None:
    """An absolute URI (the spec's rule) that a gRPC channel takes unchanged (the
    official SDKs pass it to one); a URL given by the operator is kept."""
    assert card_url("127.0.0.1:50051") == "dns:///127.0.0.1:50051"
    assert card_url("[::1]:50051") == "dns:///[::1]:50051"
    assert card_url("grpcs://agents.example:443") == "grpcs://agents.example:443"
    assert card_url("dns:///agents.example:443") == "dns:///agents.example:443"
    # read from a card served over HTTPS, TLS; over HTTP, plain text
    assert interface_url("GRPC", "dns:///a.example:7", "https://a.example/") == \
        "grpcs://a.example:7"
    assert interface_url("GRPC", "dns:///a.example:7", "http://a.example/") == \
        "grpc://a.example:7"
    assert interface_url("GRPC", "a.example:7", "https://a.example/") == "grpcs://a.example:7"


# ------------------------------------------------------------------------ errors


def test_a_status_reads_back_as_the_error_the_server_wrote() -> None:
    lagged = ResourceUnavailable("behind", data={"lastEventId": 12, "resumable": True})
    status = read_status(status_details(lagged))
    assert status is not None and status["code"] == 14 and status["message"] == "behind"
    assert status["details"][0]["reason"] == "RESOURCE_UNAVAILABLE"
    err = error_of("UNAVAILABLE", "behind", status_details(lagged), "t")
    assert isinstance(err, ResourceUnavailable)
    assert err.data == {"lastEventId": "12", "resumable": "true"}
    # v0.3 SDK servers name the error in the message
    named = error_of("NOT_FOUND", "TaskNotFoundError: no such task", None, "t")
    assert isinstance(named, TaskNotFound) and named.message == "no such task"
    assert isinstance(error_of("UNIMPLEMENTED", "Method not found!", None, "t"),
                      MethodNotFound)
    assert read_status(b"\x0a\xff") is None


# ------------------------------------------------------------------- resumption


class H2Cutter:
    """A TCP proxy on loopback that cuts its first connection (both ways, a reset)
    once the agent has sent ``cut_after`` HTTP/2 DATA frames through it: a gRPC
    stream broken mid-way. Later connections pass untouched."""

    def __init__(self, target_port: int, cut_after: int) -> None:
        self.target_port = target_port
        self.cut_after = cut_after
        self.connections = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    def __enter__(self) -> H2Cutter:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        # the connections' handlers end here, not later in another test's log
        handlers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in handlers:
            t.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self._loop.run_until_complete(start())
        self._loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        n = self.connections
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers |= {writer, up_writer}

        def cut() -> None:
            writer.transport.abort()
            up_writer.transport.abort()

        async def upstream() -> None:
            with contextlib.suppress(OSError):
                while data := await reader.read(65536):
                    up_writer.write(data)
                    await up_writer.drain()

        async def downstream() -> None:
            frames, buffer = 0, b""
            with contextlib.suppress(OSError):
                while data := await up_reader.read(65536):
                    if n == 0:
                        buffer += data
                        out = b""
                        while len(buffer) >= 9:
                            size = int.from_bytes(buffer[:3], "big")
                            if len(buffer) < 9 + size:
                                break
                            frame, buffer = buffer[:9 + size], buffer[9 + size:]
                            if frame[3] == 0 and size > 0:
                                frames += 1
                            out += frame
                            if frames >= self.cut_after:
                                writer.write(out)
                                await writer.drain()
                                cut()
                                return
                        data = out
                    writer.write(data)
                    await writer.drain()

        await asyncio.gather(upstream(), downstream())
        cut()


class Sleeps:
    """The resume policy's waits, recorded and not slept."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


class ChannelSleeps(Sleeps):
    """The waits, recorded; each lasts only until the client's gRPC channels have
    noticed that their connection was cut, which a real wait gives them time for. (With
    no wait at all, a loaded machine can send the resumption on the cut connection before
    the channel has let go of it: it fails, and a second wait is taken.)"""

    def __init__(self) -> None:
        super().__init__()
        self.client: Client | None = None

    async def __call__(self, seconds: float) -> None:
        await super().__call__(seconds)
        assert self.client is not None
        ready = grpc.ChannelConnectivity.READY
        for binding in self.client._bindings.values():
            for channel in getattr(binding, "_channels", {}).values():
                if channel.get_state() is ready:
                    async with asyncio.timeout(10):
                        await channel.wait_for_state_change(ready)


async def read_all(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    async with asyncio.timeout(30):
        return [e async for e in stream]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_cut_stream_is_resumed_and_every_event_arrives_once(
        agent: tuple[str, str], dialect: str) -> None:
    _, target = agent
    port = int(target.rpartition(":")[2])
    sleeps = ChannelSleeps()
    with H2Cutter(port, cut_after=5) as proxy:
        async with Client(f"127.0.0.1:{proxy.port}", binding="grpc", dialect=dialect,
                          resume=ResumePolicy(sleep=sleeps, random=lambda: 1.0)) as client:
            sleeps.client = client
            events = await read_all(client.stream("30 0.01"))
    assert proxy.connections >= 2
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    text = "".join(p.text for e in events if isinstance(e.item, ArtifactUpdate)
                   for p in e.item.artifact.parts if hasattr(p, "text"))
    assert text == "".join(f"chunk {i};" for i in range(30))
    assert events[-1].state is TaskState.COMPLETED
    # one break, one wait: the policy's first
    assert sleeps.calls == [0.25]


async def _echo_text(text: str) -> str:
    return text


@pytest.mark.parametrize(("text", "seq"), [("12", 12), ("\u00b2", None), ("x", None)])
def test_a_stream_event_s_id_is_read_in_ascii_digits_only(text: str, seq: int | None) -> None:
    # "²" passes str.isdigit(), which int() refuses: the id is the agent's to write
    from interlingua.bindings.grpc import EVENT_ID_KEY
    from interlingua.client.grpc import _event
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1

    message = pb1.StreamResponse()
    message.status_update.task_id = "t1"
    message.status_update.metadata.update({EVENT_ID_KEY: text})
    got, doc = _event(message)
    assert got == seq
    assert EVENT_ID_KEY.encode() not in doc and b'"t1"' in doc



# ------------------------------------------------ values nested past protobuf's reach


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


async def _deep_answer(ctx: Any) -> None:
    # an agent's own output is not held to the limit a request is
    await ctx.complete(artifact=DataPart(data={"x": _nested(int(ctx.text))}))


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_task_nested_past_what_protobuf_carries_is_a_clear_error(dialect: str) -> None:
    """60 levels: the server writes the message, and the client cannot read it back
    (protobuf parses 100 levels, two a level of JSON): ``BadResponse`` saying so, not an
    AttributeError. 400 levels: protobuf's own conversion gives out in the server: an
    internal error saying why, not a traceback in the log and a bare "Internal error"."""
    with live_grpc_agent(Agent("Deep", "Answers deeply.", _deep_answer),
                         limits=Limits(max_nesting=None)) as (url, target):
        async with Client(url, dialect=dialect) as over_http:
            tasks = [await over_http.send(str(n)) for n in (60, 400)]
        async with Client(target, binding="grpc", dialect=dialect) as over_grpc:
            with pytest.raises(BadResponse, match="protobuf cannot read"):
                await over_grpc.get_task(tasks[0].id)  # type: ignore[union-attr]
            with pytest.raises(InternalError, match="nested too deeply for protobuf"):
                await over_grpc.get_task(tasks[1].id)  # type: ignore[union-attr]
