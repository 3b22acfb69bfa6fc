"""Streaming over real HTTP: resume without loss, restarts, fan-out, long streams."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from interlingua.server import EngineConfig

from .procs import ServerProcess
from .sse_client import V1, events, rpc, v03_message, v1_message

# Streams that never end are this module's likely failure: fail them quickly.
pytestmark = pytest.mark.timeout(30)


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _chunks(results: list[Any]) -> list[str]:
    out = []
    for r in results:
        if "artifactUpdate" in r:
            out.extend(p["text"] for p in r["artifactUpdate"]["artifact"]["parts"])
    return out


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return "memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/tasks.db"


def test_cut_connection_then_resume_gets_every_event_once(store: str) -> None:
    with ServerProcess("tests/e2e/agents.py:story", store) as srv, httpx.Client(timeout=30) as c:
        first = list(events(c, srv.url + "/", rpc("SendStreamingMessage",
                                                   {"message": v1_message("40 0.01")}),
                            V1, limit=8))
        # The connection is closed here, mid-stream.
        ids = [int(i) for i, _, _ in first]
        assert ids == list(range(1, 9))
        task_id = first[0][2]["result"]["task"]["id"]
        rest = list(events(c, srv.url + "/", rpc("SubscribeToTask", {"id": task_id}),
                           {**V1, "Last-Event-ID": str(ids[-1])}))
        rest_ids = [int(i) for i, _, _ in rest]
        assert rest_ids == list(range(ids[-1] + 1, ids[-1] + 1 + len(rest_ids)))
        results = [d["result"] for _, _, d in first + rest]
        assert _chunks(results) == [f"chunk {i};" for i in range(40)]
        assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        # the task as stored has the whole artifact
        got = c.post(srv.url + "/", json=rpc("GetTask", {"id": task_id}), headers=V1).json()
        parts = got["result"]["artifacts"][0]["parts"]
        assert [p["text"] for p in parts] == [f"chunk {i};" for i in range(40)]


def test_resume_in_v03_dialect(store: str) -> None:
    with ServerProcess("tests/e2e/agents.py:story", store) as srv, httpx.Client(timeout=30) as c:
        first = list(events(c, srv.url + "/", rpc("message/stream",
                                                   {"message": v03_message("20 0.01")}), limit=5))
        task_id = first[0][2]["result"]["id"]
        last = first[-1][0]
        rest = list(events(c, srv.url + "/", rpc("tasks/resubscribe", {"id": task_id}),
                           {"Last-Event-ID": last}))
        results = [d["result"] for _, _, d in first + rest]
        ids = [int(i) for i, _, _ in first + rest]
        assert ids == list(range(1, len(ids) + 1))
        texts = [p["text"] for r in results if r.get("kind") == "artifact-update"
                 for p in r["artifact"]["parts"]]
        assert texts == [f"chunk {i};" for i in range(20)]
        assert results[-1]["kind"] == "status-update" and results[-1]["final"] is True


def test_resume_after_server_restart_on_sqlite(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/tasks.db"
    srv = ServerProcess("tests/e2e/agents.py:story", db).start()
    try:
        with httpx.Client(timeout=30) as c:
            first = list(events(c, srv.url + "/", rpc("SendStreamingMessage",
                                                       {"message": v1_message("1000 0.01")}),
                                V1, limit=6))
            srv.kill()  # crash mid-task
            task_id = first[0][2]["result"]["task"]["id"]
            last = int(first[-1][0])
            srv = ServerProcess("tests/e2e/agents.py:story", db, port=srv.port).start()
            rest = list(events(c, srv.url + "/", rpc("SubscribeToTask", {"id": task_id}),
                               {**V1, "Last-Event-ID": str(last)}))
    finally:
        srv.stop()
    ids = [int(i) for i, _, _ in first + rest]
    assert ids == list(range(1, len(ids) + 1)), ids
    results = [d["result"] for _, _, d in first + rest]
    chunks = _chunks(results)
    assert chunks == [f"chunk {i};" for i in range(len(chunks))]
    final = results[-1]["statusUpdate"]["status"]
    assert final["state"] == "TASK_STATE_FAILED"
    assert "restarted" in final["message"]["parts"][0]["text"]


def test_three_subscribers_and_a_slow_one_see_the_same_events(store: str) -> None:
    n_chunks = 300
    with ServerProcess("tests/e2e/agents.py:story", store) as srv, httpx.Client(timeout=60) as c:
        # a non-blocking send creates the task; subscribers attach while it runs
        first = c.post(srv.url + "/", headers=V1, json=rpc("SendMessage", {
            "message": v1_message(f"{n_chunks} 0.002"),
            "configuration": {"returnImmediately": True}})).json()["result"]["task"]
        seen: dict[str, list[tuple[int, str]]] = {}
        slow_started = threading.Event()
        release_slow = threading.Event()

        def subscribe(name: str, slow: bool) -> None:
            dec_ids: list[tuple[int, str]] = []
            with httpx.Client(timeout=60) as cc:
                body = rpc("SubscribeToTask", {"id": first["id"]})
                for i, _, data in events(cc, srv.url + "/", body, V1):
                    dec_ids.append((int(i), msgspec.json.encode(data["result"]).decode()))
                    if slow and len(dec_ids) == 2:
                        slow_started.set()
                        release_slow.wait(60)  # stop reading until the task is done
            seen[name] = dec_ids

        threads = [threading.Thread(target=subscribe, args=(f"s{i}", False)) for i in range(3)]
        threads.append(threading.Thread(target=subscribe, args=("slow", True)))
        for t in threads:
            t.start()
        assert slow_started.wait(30)
        # While the slow reader reads nothing, the executor still finishes.
        deadline = time.monotonic() + 30
        state = ""
        while time.monotonic() < deadline:
            task = c.post(srv.url + "/", headers=V1,
                          json=rpc("GetTask", {"id": first["id"], "historyLength": 0})).json()
            state = task["result"]["status"]["state"]
            if state == "TASK_STATE_COMPLETED":
                break
            time.sleep(0.05)
        assert state == "TASK_STATE_COMPLETED"
        assert "slow" not in seen  # the slow reader is still behind
        release_slow.set()
        for t in threads:
            t.join(60)
    # Everyone got the same events in the same order after its own starting point.
    tails = {name: [e for e in evs if e[0] > 0] for name, evs in seen.items()}
    last_ids = {name: evs[-1][0] for name, evs in tails.items()}
    assert len(set(last_ids.values())) == 1
    reference = dict(max(tails.values(), key=len)[1:])
    for name, evs in tails.items():
        for seq, payload in evs[1:]:  # [0] is each subscriber's task snapshot
            assert reference[seq] == payload, name
        ids = [s for s, _ in evs[1:]]
        assert ids == list(range(ids[0], ids[0] + len(ids))), name


def test_ten_thousand_chunks_complete(tmp_path: Path) -> None:
    with ServerProcess("tests/e2e/agents.py:story", f"sqlite:///{tmp_path}/t.db") as srv, \
            httpx.Client(timeout=120) as c:
        assert srv.proc is not None
        n = 0
        last: Any = None
        rss: dict[int, int] = {}
        for _, _, data in events(c, srv.url + "/", rpc("SendStreamingMessage",
                                                       {"message": v1_message("10000")}), V1):
            n += 1
            last = data["result"]
            if n in (2000, 10000):
                rss[n] = _rss(srv.proc.pid)
        assert n == 1 + 1 + 10000 + 1  # task, working, chunks, completed
        assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        # Memory stays flat: 8,000 more events cost the server little beyond the
        # chunks' own text in the running task (a few hundred bytes each).
        assert rss[10000] - rss[2000] < 16 * 1024 * 1024, rss


def test_subscribe_to_finished_task_per_dialect() -> None:
    with ServerProcess("tests/e2e/agents.py:echo", "memory://") as srv, \
            httpx.Client(timeout=30) as c:
        task = c.post(srv.url + "/", headers=V1, json=rpc("SendMessage", {
            "message": v1_message("hi")})).json()["result"]["task"]
        # v1.0: a fresh subscribe to a finished task is an error, as plain JSON
        r = c.post(srv.url + "/", headers=V1, json=rpc("SubscribeToTask", {"id": task["id"]}))
        assert r.headers["content-type"].startswith("application/json")
        assert r.json()["error"]["code"] == -32004
        # v0.3: the final state once, then the stream ends
        got = list(events(c, srv.url + "/", rpc("tasks/resubscribe", {"id": task["id"]})))
        assert len(got) == 1
        result = got[0][2]["result"]
        assert result["kind"] == "status-update" and result["final"] is True
        assert result["status"]["state"] == "completed"
        # resume of a finished task with nothing missed: an empty stream
        got = list(events(c, srv.url + "/", rpc("SubscribeToTask", {"id": task["id"]}),
                          {**V1, "Last-Event-ID": "3"}))
        assert got == []
        # resume from the start: every event again, in order
        got = list(events(c, srv.url + "/", rpc("SubscribeToTask", {"id": task["id"]}),
                          {**V1, "Last-Event-ID": "0"}))
        assert [int(i) for i, _, _ in got] == [1, 2, 3]


def test_errors_before_the_stream_are_plain_json_rpc() -> None:
    with ServerProcess("tests/e2e/agents.py:echo", "memory://") as srv, \
            httpx.Client(timeout=30) as c:
        r = c.post(srv.url + "/", headers=V1, json=rpc("SubscribeToTask", {"id": "nope"}))
        assert r.status_code == 200 and r.json()["error"]["code"] == -32001
        r = c.post(srv.url + "/", headers=V1, json=rpc("SendStreamingMessage", {
            "message": {"role": "ROLE_USER", "parts": []}}))
        assert r.json()["error"]["code"] == -32602
        r = c.post(srv.url + "/", headers={**V1, "Last-Event-ID": "abc"},
                   json=rpc("SubscribeToTask", {"id": "x"}))
        assert r.json()["error"]["code"] == -32602
        assert "Last-Event-ID" in r.json()["error"]["message"]


def test_a_client_that_goes_away_frees_its_stream_and_the_task_runs_on() -> None:
    from interlingua.host import create_app
    from interlingua.server import Agent, Context
    from tests.live import bind_loopback, live_server, url_of

    async def waits(ctx: Context) -> None:
        await ctx.update("waiting")
        await ctx.cancelled.wait()

    sock = bind_loopback()
    # heartbeats far off: only the disconnect itself can end the stream in time
    app = create_app(Agent("w", "waits", waits), public_url=url_of(sock),
                     engine_config=EngineConfig(heartbeat_interval=600))
    bus = app.state.engine.bus
    with live_server(app, sock=sock) as url, httpx.Client(timeout=10) as c:
        body = rpc("SendStreamingMessage", {"message": v1_message("x")})
        task_id = ""
        for n, (_, _, data) in enumerate(events(c, url + "/", body, V1)):
            if n == 0:
                task_id = data["result"]["task"]["id"]
            else:
                assert bus._topics  # the open stream's subscription
                break  # closes the connection, mid-stream
        deadline = time.monotonic() + 5
        while bus._topics and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not bus._topics
        # the stream was only a reader: the task itself goes on
        task = c.post(url + "/", headers=V1, json=rpc("GetTask", {"id": task_id})).json()
        assert task["result"]["status"]["state"] == "TASK_STATE_WORKING"
        # and a new reader can follow it
        again = list(events(c, url + "/", rpc("SubscribeToTask", {"id": task_id}), V1, limit=1))
        assert again[0][2]["result"]["task"]["id"] == task_id
