"""Automatic resume over real connections: a proxy that cuts the client's
connection mid-stream, a server killed and restarted on SQLite, and giving up
after the allowed attempts."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from interlingua.client import (
    AgentUnreachable,
    ArtifactAssembler,
    Client,
    ResumePolicy,
    StreamEvent,
    StreamInterrupted,
)
from interlingua.core.model import ArtifactUpdate, TaskState
from tests.e2e.agents import story
from tests.e2e.procs import ServerProcess
from tests.e2e.sse_client import STREAM_DEADLINE
from tests.live import live_agent
from tests.ports import free_port

# Streams that never end are this module's likely failure: fail them quickly.
pytestmark = pytest.mark.timeout(30)


async def read_all(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    async with asyncio.timeout(STREAM_DEADLINE):  # heartbeats keep a stream alive
        return [e async for e in stream]


class CuttingProxy:
    """A TCP proxy on a loopback port, in its own thread.

    Connection n (0-based, in the order they are accepted) is cut once the
    agent has sent ``cut_after[n]`` SSE events through it: both sockets are
    aborted (a reset, as when a network path dies). From connection
    ``refuse_from`` on, every connection is accepted and aborted at once.
    """

    def __init__(self, target_port: int, cut_after: dict[int, int] | None = None,
                 refuse_from: int | None = None) -> None:
        self.target_port = target_port
        self.cut_after = cut_after or {}
        self.refuse_from = refuse_from
        self.connections = 0
        #: how many events each connection carried before it was cut (or ended)
        self.carried: list[int] = []
        self.port = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def __enter__(self) -> CuttingProxy:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await self._server.wait_closed()
        # let the handlers see their sockets closed and finish
        for _ in range(10):
            await asyncio.sleep(0)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        self._loop.close()

    async def _handle(self, c_reader: asyncio.StreamReader,
                      c_writer: asyncio.StreamWriter) -> None:
        index = self.connections
        self.connections += 1
        self.carried.append(0)
        if self.refuse_from is not None and index >= self.refuse_from:
            c_writer.transport.abort()
            return
        s_reader, s_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers |= {c_writer, s_writer}
        try:
            await self._pipe(index, c_reader, c_writer, s_reader, s_writer)
        finally:
            for writer in (c_writer, s_writer):
                writer.transport.abort()
                self._writers.discard(writer)

    async def _pipe(self, index: int, c_reader: asyncio.StreamReader,
                    c_writer: asyncio.StreamWriter, s_reader: asyncio.StreamReader,
                    s_writer: asyncio.StreamWriter) -> None:
        limit = self.cut_after.get(index)

        def cut() -> None:
            c_writer.transport.abort()
            s_writer.transport.abort()

        async def upstream() -> None:
            with contextlib.suppress(OSError):
                while data := await c_reader.read(65536):
                    s_writer.write(data)
                    await s_writer.drain()
            with contextlib.suppress(OSError):
                s_writer.write_eof()

        async def downstream() -> None:
            with contextlib.suppress(OSError):
                while data := await s_reader.read(65536):
                    # each event starts with its "id:" line (after a chunk header's CRLF)
                    starts = _event_starts(data)
                    if limit is not None and self.carried[index] + len(starts) > limit:
                        # one read may hold several events: pass on exactly up to the
                        # limit, up to where the first event past it starts
                        data = data[:starts[limit - self.carried[index]]]
                        starts = starts[:limit - self.carried[index]]
                    self.carried[index] += len(starts)
                    c_writer.write(data)
                    await c_writer.drain()
                    if limit is not None and self.carried[index] >= limit:
                        cut()
                        return
            c_writer.close()

        await asyncio.gather(upstream(), downstream(), return_exceptions=True)


def _event_starts(data: bytes) -> list[int]:
    """Where each SSE event's "id:" line starts in ``data``."""
    starts, at = [], data.find(b"\nid: ")
    while at != -1:
        starts.append(at + 1)
        at = data.find(b"\nid: ", at + 1)
    return starts


@pytest.fixture(scope="module")
def story_port() -> Iterator[int]:
    with live_agent(story) as url:
        yield int(url.rsplit(":", 1)[1])


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def check_story(events: list[StreamEvent], n_chunks: int) -> None:
    """Every event once, in log order, and the whole story."""
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    asm = ArtifactAssembler()
    for e in events:
        asm.feed(e)
    assert asm.text("story.txt") == "".join(f"chunk {i};" for i in range(n_chunks))


@pytest.mark.parametrize(("binding", "dialect"),
                         [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0"),
                          ("rest", "0.3")])
async def test_cut_connections_are_resumed_and_every_event_arrives_once(
        story_port: int, binding: str, dialect: str) -> None:
    sleeps = Sleeps()
    # the stream is cut after 5 events, its first resumption after 4 more
    with CuttingProxy(story_port, cut_after={0: 5, 1: 4}) as proxy:
        async with Client(proxy.url, dialect=dialect, binding=binding,
                          resume=ResumePolicy(sleep=sleeps, random=lambda: 1.0)) as client:
            events = await read_all(client.stream("40 0.005"))
    check_story(events, 40)
    assert events[-1].state is TaskState.COMPLETED
    assert proxy.connections == 3
    assert proxy.carried[0] == 5 and proxy.carried[1] == 4
    # one wait per break, each the first step of the backoff (progress resets it)
    assert sleeps.calls == [0.25, 0.25]


async def test_many_cuts_with_progress_never_exhaust_the_retries(story_port: int) -> None:
    cuts = {n: 3 for n in range(8)}
    with CuttingProxy(story_port, cut_after=cuts) as proxy:
        async with Client(proxy.url, dialect="1.0",
                          resume=ResumePolicy(retries=1, sleep=Sleeps())) as client:
            events = await read_all(client.stream("30 0.003"))
    check_story(events, 30)
    assert proxy.connections >= 9


@pytest.mark.parametrize("retries", [0, 1, 4])
async def test_gives_up_after_the_allowed_attempts_with_growing_waits(
        story_port: int, retries: int) -> None:
    sleeps = Sleeps()
    seen: list[StreamEvent] = []
    with CuttingProxy(story_port, cut_after={0: 4}, refuse_from=1) as proxy:
        resume = ResumePolicy(retries=retries, backoff=0.1, max_backoff=10.0, jitter=0.5,
                              sleep=sleeps, random=lambda: 0.0)
        async with Client(proxy.url, dialect="1.0", resume=resume) as client:
            with pytest.raises(StreamInterrupted) as info:
                async with asyncio.timeout(STREAM_DEADLINE):
                    async for e in client.stream("50 0.01"):
                        seen.append(e)
    # 1 stream + one connection per attempt; a wait before each attempt
    assert proxy.connections == 1 + retries
    assert sleeps.calls == pytest.approx([0.05 * 2**k for k in range(retries)])
    # what arrived before the cut arrived once, in order
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1)) and len(seen) <= 4
    err = info.value
    assert isinstance(err, AgentUnreachable)  # so the CLI exits 3
    assert err.task_id == seen[0].task_id and err.last_event_id == seen[-1].seq
    assert f"task {err.task_id}" in str(err)
    assert (f"gave up after {retries} attempt" in str(err)) if retries else (
        "resuming is switched off" in str(err))


@pytest.mark.parametrize("binding", ["jsonrpc", "grpc"])
def test_server_killed_and_restarted_on_sqlite(tmp_path: Path, binding: str) -> None:
    """The server dies mid-stream (SIGKILL) and comes back on the same port with
    the same SQLite file: the client reconnects and reads the rest of the log,
    ending with the failure the restarted server records for the lost run.
    Before (gRPC): the attempt after the restart failed at once, "Connection refused"
    from the attempt before, while grpc's channel waited out a backoff of its own."""
    db = f"sqlite:///{tmp_path}/tasks.db"
    serving: dict[str, object] = {}
    if binding == "grpc":
        serving = {"grpc_port": free_port(), "bindings": ("jsonrpc", "rest", "grpc")}
    procs = [ServerProcess("tests/e2e/agents.py:story", db, **serving).start()]
    url = (f"grpc://127.0.0.1:{serving['grpc_port']}" if binding == "grpc"
           else procs[0].url + "/")
    sleeps: list[float] = []

    async def sleep_then_restart(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:  # the first attempt found nothing listening
            procs.append(await asyncio.to_thread(ServerProcess(
                "tests/e2e/agents.py:story", db, port=procs[0].port, **serving).start))

    async def run() -> list[StreamEvent]:
        events: list[StreamEvent] = []
        resume = ResumePolicy(retries=3, sleep=sleep_then_restart)
        async with Client(url, dialect="1.0", resume=resume) as client, \
                asyncio.timeout(STREAM_DEADLINE):
            async for e in client.stream("1000 0.01"):
                events.append(e)
                if len(events) == 8:
                    procs[0].kill()
        return events

    try:
        events = asyncio.run(run())
    finally:
        for p in procs:
            p.stop()
    assert len(sleeps) == 2 and len(procs) == 2
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len(events) > 8
    texts = [e.item.artifact.parts[0].text for e in events  # type: ignore[union-attr]
             if isinstance(e.item, ArtifactUpdate)]
    assert texts == [f"chunk {i};" for i in range(len(texts))]
    assert events[-1].state is TaskState.FAILED and events[-1].final


@pytest.mark.parametrize("binding", ["jsonrpc", "grpc"])
def test_server_killed_for_good_is_given_up_on_promptly(tmp_path: Path, binding: str) -> None:
    """Each attempt dials the server anew (over gRPC too, with no channel of its own
    backoff): nothing there, the stream is given up after the policy's attempts, and a
    call after it is refused at once, neither waiting for a server that is gone."""
    serving: dict[str, object] = {}
    if binding == "grpc":
        serving = {"grpc_port": free_port(), "bindings": ("jsonrpc", "rest", "grpc")}
    proc = ServerProcess("tests/e2e/agents.py:story", f"sqlite:///{tmp_path}/tasks.db",
                         **serving).start()
    url = (f"grpc://127.0.0.1:{serving['grpc_port']}" if binding == "grpc"
           else proc.url + "/")
    sleeps = Sleeps()

    async def run() -> None:
        seen = 0
        async with Client(url, dialect="1.0", resume=ResumePolicy(retries=3, sleep=sleeps),
                          timeout=5) as client, asyncio.timeout(10):
            with pytest.raises(StreamInterrupted) as info:
                async for _ in client.stream("1000 0.01"):
                    seen += 1
                    if seen == 8:
                        proc.kill()
            assert info.value.task_id is not None
            with pytest.raises(AgentUnreachable):
                await client.get_task(info.value.task_id)

    try:
        asyncio.run(run())
    finally:
        proc.stop()
    assert len(sleeps.calls) == 3
