"""A send while another process holds the SQLite store's write lock past its
busy_timeout is refused on every binding with its own "unavailable" answer (503,
``UNAVAILABLE``), saying that the store is busy, and leaves no task behind: not a
task answered that was never written, nor an internal error."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from interlingua.core import calls as c
from tests.live import bind_loopback, live_server, url_of
from tests.stores.locks import write_locked

from .drivers import DRIVERS, Refused
from .test_parity import AGENT, send
from .test_parity_drain import UNAVAILABLE

#: a stream opens (its headers sent) before its first write, so the refusal is its one
#: event: the error as each binding writes one inside a stream (the HTTP status of a
#: JSON-RPC stream, the status an HTTP+JSON v1.0 error carries, none in v0.3's)
IN_STREAM = {**UNAVAILABLE, "jsonrpc-1.0": (200, "-32603"), "jsonrpc-0.3": (200, "-32603"),
             "rest-0.3": (0, "InternalError")}


@pytest.fixture
def store_file(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server (all bindings) on a SQLite file that gives up on its write lock
    after 200 ms."""
    from interlingua.bindings.grpc import add_grpc
    from interlingua.host import create_app

    path = tmp_path / "tasks.db"
    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store=f"sqlite:///{path}?busy_timeout=200")
    add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        yield url, path


@pytest.mark.parametrize("kind", list(DRIVERS))
@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "blocking"])
def test_a_send_while_the_store_is_locked_is_refused_and_makes_no_task(
        kind: str, streaming: bool, store_file: tuple[str, Path]) -> None:
    url, path = store_file
    with httpx.Client(timeout=30) as client:
        d = DRIVERS[kind](client, url)
        call = send("1", streaming=streaming)
        with write_locked(path), pytest.raises(Refused) as refused:
            d.stream(call) if streaming else d.call(call)
        answers = IN_STREAM if streaming else UNAVAILABLE
        assert (refused.value.status, refused.value.reason) == answers[kind]
        assert "store" in refused.value.message
        if d.lists_tasks:  # the lock gone, the store serves again: no task was made
            page = d.call(c.ListTasks(page_size=10))
            assert isinstance(page, c.ListTasksResult) and page.tasks == []
            assert d.call(send("1")).status.state.value == "completed"  # type: ignore[union-attr]


@pytest.mark.parametrize("method", ["tasks/send-streaming", "tasks/send"])
async def test_a_send_on_the_mesh_while_the_store_is_locked_is_refused(
        method: str, tmp_path: Path) -> None:
    from tests.mesh.helpers import Peer, decoded, namespace, need_broker, on_mesh

    need_broker()
    ns = namespace()
    path = tmp_path / "tasks.db"
    store = f"sqlite:///{path}?busy_timeout=200"
    async with on_mesh(AGENT, ns, store=store, name="Worker") as mesh, Peer(ns) as peer:
        reply_to = peer.topics.client_response("busy")
        status = peer.topics.client_status("busy", "#")
        await peer.listen(reply_to, status)
        with write_locked(path):
            await peer.request("Worker", {"jsonrpc": "2.0", "id": "b1", "method": method,
                                          "params": {"message": {
                                              "role": "user", "parts": [{"text": "1"}],
                                              "message_id": "b1-m"}}},
                               replyTo=reply_to, clientId="busy")
            answer, before = await peer.until(reply_to)
        assert before == []  # nothing was said of a task that was never written
        error = decoded(answer)["error"]
        assert error["code"] == -32603 and "store" in error["message"]
        assert mesh.door.engine.running_turns == 0
    done = sqlite3.connect(path)
    try:  # no task was made, in any scope
        assert done.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    finally:
        done.close()
