"""A2A 1.1 (draft): task generations, long-polling GetTask and ifGenerationMatch,
on every binding (JSON-RPC, HTTP+JSON, gRPC), on a real server on loopback.

What a 1.0 caller sees is checked too: its answers carry no 1.1 member (parsed by
the official a2a-sdk 1.3.0's own protobuf classes, unknown members refused), and a
1.0 request carrying ``ifGenerationMatch`` is refused naming the version to ask for,
while one carrying ``currentGeneration`` is a long poll, as the draft's example shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from google.protobuf import json_format

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from interlingua.host import create_app
from tests.live import bind_loopback, live_server, url_of

from .drivers import DRIVERS_11, GRPC10, JSONRPC11, REST10, Driver, Refused
from .generations_agent import AGENT

MAX_WAIT = 1.0
ROOT = Path(__file__).resolve().parents[2]
OFFICIAL_PY = ROOT / ".interop" / "py-a2a-1.3.0" / "bin" / "python"


@contextlib.contextmanager
def served(**create_app_kwargs: Any) -> Iterator[tuple[str, Any]]:
    """The agent on loopback with gRPC too: (base URL, the app: its engine in state)."""
    from interlingua.bindings.grpc import add_grpc

    sock = bind_loopback()
    create_app_kwargs.setdefault("store", "memory://")
    create_app_kwargs.setdefault("long_poll_max_wait", MAX_WAIT)
    app = create_app(AGENT, public_url=url_of(sock), **create_app_kwargs)
    add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        yield url, app


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Any]]:
    with served() as got:
        yield got


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as cl:
        yield cl


@pytest.fixture(params=sorted(DRIVERS_11))
def kind(request: pytest.FixtureRequest) -> type[Driver]:
    return DRIVERS_11[request.param]


def send(text: str, task_id: str | None = None, *, if_match: int | None = None,
         streaming: bool = False) -> c.SendMessage:
    return c.SendMessage(
        message=m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)],
                          task_id=task_id),
        config=c.SendConfig(if_generation_match=if_match), streaming=streaming)


def task_of(d: Driver, text: str) -> m.Task:
    got = d.call(send(text))
    assert isinstance(got, m.Task)
    return got


def get(d: Driver, task_id: str, after: int | None = None) -> m.Task:
    got = d.call(c.GetTask(id=task_id, current_generation=after))
    assert isinstance(got, m.Task)
    return got


def generations(items: list[tuple[int, Any]]) -> list[int]:
    return [item.generation for _, item in items]


# ------------------------------------------------------------------ generations


def test_every_stream_event_moves_the_generation_by_one_and_every_binding_agrees(
        server: tuple[str, Any], client: httpx.Client) -> None:
    url, _ = server
    drivers = [k(client, url) for k in DRIVERS_11.values()]
    items = drivers[0].stream(send("chunks 3", streaming=True))
    # the task (1), working, three chunks, input-required: one each, none repeated
    assert generations(items) == [1, 2, 3, 4, 5, 6]
    task_id = items[0][1].id
    assert {get(d, task_id).generation for d in drivers} == {6}
    generation = 6
    for d in drivers:
        # a follow-up: its history entry is no event; the task it made working (the
        # stream's first item), the agent's "writing", two chunks, input-required are
        follow = d.stream(send("chunks 2", task_id, streaming=True))
        assert generations(follow) == list(range(generation + 1, generation + 6)), d.name
        generation += 5
        assert {get(e, task_id).generation for e in drivers} == {generation}, d.name
        assert len(get(d, task_id).history) > 2


def test_a_task_made_in_1_0_has_generations_for_a_1_1_reader(
        server: tuple[str, Any], client: httpx.Client) -> None:
    url, _ = server
    made = task_of(REST10(client, url), "ask")
    assert made.generation == 0  # not read from a 1.0 answer: it has none
    assert {get(k(client, url), made.id).generation for k in DRIVERS_11.values()} == {2}


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_1_1_task_list_holds_each_tasks_generation_on_every_binding(
        store: str, tmp_path: Path, client: httpx.Client) -> None:
    url_of_store = "memory://" if store == "memory" else f"sqlite:///{tmp_path}/tasks.db"
    with served(store=url_of_store) as (url, _):
        drivers = [k(client, url) for k in DRIVERS_11.values()]
        d = drivers[0]
        ids = [task_of(d, "chunks 2").id, task_of(d, "ask").id, task_of(d, "done").id]
        # a task whose last event is an artifact's: a list without artifacts folds none
        kept = d.call(c.SendMessage(message=send("keep 2").message,
                                    config=c.SendConfig(blocking=False)))
        assert isinstance(kept, m.Task)
        ids.append(kept.id)
        assert get(d, kept.id, after=3).generation == 4  # working, two chunks
        want = {task_id: get(d, task_id).generation for task_id in ids}
        assert [want[i] for i in ids] == [5, 2, 2, 4], want
        for e in drivers:
            for query in (c.ListTasks(), c.ListTasks(history_length=0),
                          c.ListTasks(include_artifacts=True)):
                page = e.call(query)
                assert isinstance(page, c.ListTasksResult)
                assert {t.id: t.generation for t in page.tasks} == want, (e.name, query)
        # a 1.0 list has none (the test can fail: the 1.1 one has them)
        v10 = {"A2A-Version": "1.0"}
        docs = [("ListTasksResponse", client.get(f"{url}/tasks", headers=v10).json()),
                ("ListTasksResponse", client.post(url + "/", headers=v10, json={
                    "jsonrpc": "2.0", "id": 1, "method": "ListTasks",
                    "params": {"includeArtifacts": True}}).json()["result"])]
        assert "generation" not in json.dumps(docs)
        assert "generation" in client.get(f"{url}/tasks", headers={"A2A-Version": "1.1"}).text
        page = GRPC10(client, url).call(c.ListTasks())
        assert isinstance(page, c.ListTasksResult)
        assert {t.generation for t in page.tasks} == {0}
        if OFFICIAL_PY.exists():
            assert _official_parse(docs) == ""
        d.call(c.CancelTask(id=kept.id))


# ------------------------------------------------------------------ 1.0 callers


def _official_parse(docs: list[tuple[str, Any]]) -> str:
    """Each (message name, document) parsed by the official a2a-sdk 1.3.0's protobuf
    classes with unknown members refused; what failed (empty: nothing)."""
    script = (
        "import json, sys\n"
        "from a2a.types import a2a_pb2\n"
        "from google.protobuf import json_format\n"
        "bad = []\n"
        "for name, doc in json.load(sys.stdin):\n"
        "    try:\n"
        "        json_format.ParseDict(doc, getattr(a2a_pb2, name)(),"
        " ignore_unknown_fields=False)\n"
        "    except json_format.ParseError as exc:\n"
        "        bad.append(f'{name}: {exc}')\n"
        "print('\\n'.join(bad))\n")
    done = subprocess.run([str(OFFICIAL_PY), "-c", script], input=json.dumps(docs),
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def _sse_docs(resp: httpx.Response) -> list[Any]:
    return [json.loads(line[6:]) for line in resp.text.splitlines() if line.startswith("data: ")]


@pytest.mark.skipif(not OFFICIAL_PY.exists(), reason="the official SDK (.interop) is not set up")
def test_a_1_0_callers_answers_carry_no_1_1_member(server: tuple[str, Any],
                                                   client: httpx.Client) -> None:
    url, _ = server
    v10 = {"A2A-Version": "1.0"}
    task_id = task_of(JSONRPC11(client, url), "chunks 2").id  # a task with generations
    docs: list[tuple[str, Any]] = []

    def rpc(method: str, params: dict[str, Any]) -> httpx.Response:
        return client.post(url + "/", headers=v10, json={"jsonrpc": "2.0", "id": 1,
                                                         "method": method, "params": params})

    docs.append(("Task", rpc("GetTask", {"id": task_id}).json()["result"]))
    message = {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": "chunks 2"}],
               "taskId": task_id}
    docs.append(("SendMessageResponse",
                 rpc("SendMessage", {"message": message}).json()["result"]))
    message = {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": "chunks 2"}]}
    streamed = rpc("SendStreamingMessage", {"message": message})
    docs += [("StreamResponse", d["result"]) for d in _sse_docs(streamed)]
    docs.append(("Task", client.get(f"{url}/tasks/{task_id}", headers=v10).json()))
    message["messageId"] = new_id()
    streamed = client.post(url + "/message:stream", headers=v10, json={"message": message})
    docs += [("StreamResponse", d) for d in _sse_docs(streamed)]
    assert len(docs) > 8
    # the test can fail: the same answers asked for in 1.1 carry generation
    assert "generation" in client.get(f"{url}/tasks/{task_id}",
                                      headers={"A2A-Version": "1.1"}).text
    assert _official_parse(docs) == ""
    assert "generation" in _official_parse(
        [("Task", client.get(f"{url}/tasks/{task_id}", headers={"A2A-Version": "1.1"}).json())])
    # gRPC 1.0: the Task message of a 1.0 answer has no generation set
    task = GRPC10(client, url).call(c.GetTask(id=task_id))
    assert isinstance(task, m.Task) and task.generation == 0


def test_a_1_0_long_poll_is_held_as_the_draft_shows(
        server: tuple[str, Any], client: httpx.Client) -> None:
    """Draft §3.2.7's example long-polls with ``A2A-Version: 1.0``: ``currentGeneration``
    is taken from a 1.0 request on every binding (held, or answered at once for a
    passed generation), and its answer names the generation to poll for next."""
    url, _ = server
    task_id = task_of(JSONRPC11(client, url), "ask").id  # at generation 2
    v10 = {"A2A-Version": "1.0"}

    def rpc(current: int) -> Any:
        body = client.post(url + "/", headers=v10, json={
            "jsonrpc": "2.0", "id": 1, "method": "GetTask",
            "params": {"id": task_id, "currentGeneration": str(current)}}).json()
        assert "result" in body, body
        return body["result"]

    def rest(current: int) -> Any:
        resp = client.get(f"{url}/tasks/{task_id}?currentGeneration={current}", headers=v10)
        assert resp.status_code == 200, resp.text
        return resp.json()

    def grpc(current: int) -> Any:
        return {"generation": str(_grpc_get(client, url, task_id, version="1.0",
                                            current=current).generation)}

    for name, poll in (("jsonrpc", rpc), ("rest", rest), ("grpc", grpc)):
        began = time.monotonic()
        assert poll(1)["generation"] == "2", name  # passed: at once
        assert time.monotonic() - began < MAX_WAIT / 2, name
        began = time.monotonic()
        assert poll(2)["generation"] == "2", name  # not passed: held to the maximum wait
        assert MAX_WAIT * 0.95 <= time.monotonic() - began < MAX_WAIT + 1.0, name
    # a 1.0 GetTask without it still carries no 1.1 member
    assert "generation" not in client.get(f"{url}/tasks/{task_id}", headers=v10).text


def test_a_1_0_send_with_if_generation_match_is_refused_naming_the_field_as_sent(
        server: tuple[str, Any], client: httpx.Client) -> None:
    url, _ = server
    task_id = task_of(JSONRPC11(client, url), "ask").id
    v10 = {"A2A-Version": "1.0"}
    params = {"message": {"messageId": new_id(), "role": "ROLE_USER", "taskId": task_id,
                          "parts": [{"text": "ask"}]},
              "configuration": {"ifGenerationMatch": "2"}}
    body = client.post(url + "/", headers=v10, json={"jsonrpc": "2.0", "id": 1,
                                                     "method": "SendMessage",
                                                     "params": params}).json()
    assert body["error"]["code"] == -32602, body
    assert "params.configuration.ifGenerationMatch" in body["error"]["message"], body
    assert "A2A-Version: 1.1" in body["error"]["message"], body
    # over HTTP+JSON the field is the body's, not a JSON-RPC params member
    resp = client.post(f"{url}/message:send", headers=v10, json=params)
    message = resp.json()["error"]["message"]
    assert resp.status_code == 400 and "A2A-Version: 1.1" in message, message
    assert "params" not in message.removeprefix("Invalid params for SendMessage"), message
    assert "configuration.ifGenerationMatch" in message, message
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb

    request = pb.SendMessageRequest()
    json_format.ParseDict(params, request)
    with pytest.raises(Refused) as refused:
        _grpc_unary(client, url, "SendMessage", request, version="1.0")
    assert refused.value.status == "INVALID_ARGUMENT" and "A2A-Version: 1.1" in \
        refused.value.message
    assert get(JSONRPC11(client, url), task_id).generation == 2  # nothing was written


@pytest.mark.parametrize(("query", "named"), [
    ("currentGeneration=abc", "query parameter currentGeneration"),
    ("current_generation=-1", "query parameter current_generation"),
    ("historyLength=-1", "query parameter historyLength"),
])
def test_a_rest_refusal_names_the_query_parameter_as_sent(
        server: tuple[str, Any], client: httpx.Client, query: str, named: str) -> None:
    url, _ = server
    task_id = task_of(JSONRPC11(client, url), "ask").id
    for version in ("1.0", "1.1"):
        resp = client.get(f"{url}/tasks/{task_id}?{query}", headers={"A2A-Version": version})
        message = resp.json()["error"]["message"]
        assert resp.status_code == 400 and named in message, (version, message)
        assert "params." not in message, (version, message)


def _grpc_get(client: httpx.Client, url: str, task_id: str, *, version: str,
              current: int) -> Any:
    """A gRPC GetTask with ``current_generation`` set, sent with ``version``."""
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb

    request = pb.GetTaskRequest(id=task_id, current_generation=current)
    return _grpc_unary(client, url, "GetTask", request, version=version)


def _grpc_unary(client: httpx.Client, url: str, rpc: str, request: Any, *,
                version: str) -> Any:
    """``request`` (a v1.0 message, sent as it is) to ``rpc``, with ``version``."""
    import grpc

    d = GRPC10(client, url, headers={"A2A-Version": version})
    method = d._method(rpc, request, False)

    async def go() -> Any:
        return await method(request, metadata=d._metadata(), timeout=30)

    try:
        return d.loop.run(go())
    except grpc.aio.AioRpcError as exc:
        raise d._refused_rpc(exc) from None


# ------------------------------------------------------------ ifGenerationMatch


def test_a_stale_if_generation_match_is_refused_on_every_binding(
        kind: type[Driver], server: tuple[str, Any], client: httpx.Client) -> None:
    url, _ = server
    d = kind(client, url)
    task = task_of(d, "ask")
    assert task.generation == 2
    with pytest.raises(Refused) as refused:
        d.call(send("ask", task.id, if_match=1))
    exc = refused.value
    if d.name.startswith("jsonrpc"):
        assert (exc.status, exc.reason) == (200, "-32010")
        (info,) = exc.body["error"]["data"]
        metadata = info["metadata"]
    elif d.name.startswith("rest"):
        assert (exc.status, exc.reason) == (409, "TASK_GENERATION_MISMATCH")
        assert exc.body["error"]["status"] == "ABORTED"
        metadata = exc.body["error"]["details"][0]["metadata"]
    else:
        assert (exc.status, exc.reason) == ("ABORTED", "TASK_GENERATION_MISMATCH")
        metadata = _grpc_error_metadata(d, send("ask", task.id, if_match=1))
    assert metadata == {"taskId": task.id, "expectedGeneration": "1", "currentGeneration": "2"}
    assert "expected 1 but current generation is 2" in exc.message
    after = get(d, task.id)
    assert (after.generation, len(after.history)) == (2, len(task.history))  # nothing written
    # the generation it is at is taken; on a new task the field is ignored
    assert d.call(send("ask", task.id, if_match=2)).generation == 4  # type: ignore[union-attr]
    assert d.call(send("ask", if_match=99)).generation == 2  # type: ignore[union-attr]


def _grpc_error_metadata(d: Driver, call: c.SendMessage) -> dict[str, str]:
    """The ErrorInfo metadata of the gRPC refusal of ``call``, read with googleapis'
    own ``google.rpc`` classes."""
    import grpc
    from google.rpc import error_details_pb2, status_pb2

    assert isinstance(d, GRPC10)
    rpc, request = d.request(call)
    method = d._method(rpc, request, False)

    async def go() -> Any:
        return await method(request, metadata=d._metadata(), timeout=30)

    with pytest.raises(grpc.aio.AioRpcError) as refused:
        d.loop.run(go())
    trailers = dict(refused.value.trailing_metadata() or ())
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    return dict(info.metadata)


#: the reason each binding's refusal of a stale ifGenerationMatch carries
MISMATCH = {"jsonrpc": "-32010", "rest": "TASK_GENERATION_MISMATCH",
            "grpc": "TASK_GENERATION_MISMATCH"}


def race_follow_ups(kind: type[Driver], urls: list[str], task: m.Task) -> list[object]:
    """One follow-up for ``task``'s generation sent to each of ``urls`` at once: what
    each got (the task, or the refusal's reason)."""
    outcomes: list[object] = []
    barrier = threading.Barrier(len(urls))

    def follow_up(url: str) -> None:
        with httpx.Client(timeout=30) as own:
            barrier.wait()
            try:
                outcomes.append(kind(own, url).call(
                    send("ask", task.id, if_match=task.generation)))
            except Refused as exc:
                outcomes.append(exc.reason)

    threads = [threading.Thread(target=follow_up, args=(u,)) for u in urls]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return outcomes


def test_of_two_follow_ups_for_one_generation_exactly_one_is_taken(
        kind: type[Driver], server: tuple[str, Any], client: httpx.Client) -> None:
    # In one process the two are kept apart before the store-level check (in
    # ``Writer._write``) is reached; the two-replica tests below (and
    # tests/e2e/test_generations_replicas.py) are the ones that fail without it.
    url, _ = server
    d = kind(client, url)
    mismatch = MISMATCH[d.name.split("-")[0]]
    for _ in range(5):
        task = task_of(d, "ask")
        outcomes = race_follow_ups(kind, [url, url], task)
        taken = [o for o in outcomes if isinstance(o, m.Task)]
        assert len(taken) == 1 and outcomes.count(mismatch) == 1, outcomes
        assert get(d, task.id).generation == task.generation + 2


# ------------------------------------------------------------------- long polls


def test_a_long_poll_for_a_passed_generation_is_answered_at_once(
        kind: type[Driver], server: tuple[str, Any], client: httpx.Client) -> None:
    url, _ = server
    d = kind(client, url)
    task = task_of(d, "ask")
    began = time.monotonic()
    assert get(d, task.id, after=task.generation - 1).generation == task.generation
    assert time.monotonic() - began < MAX_WAIT / 2


def test_a_long_poll_is_answered_when_the_task_moves_on(
        kind: type[Driver], server: tuple[str, Any], client: httpx.Client) -> None:
    url, app = server
    d = kind(client, url)
    task = task_of(d, "ask")
    got, took = poll_while(kind, url, app, task, lambda: d.call(send("ask", task.id)))
    assert got and got[0].generation > task.generation
    assert took < MAX_WAIT * 0.9, took  # woken by the commit, not by the maximum wait


def test_a_long_poll_ends_at_the_maximum_wait_with_the_task_as_it_is(
        kind: type[Driver], server: tuple[str, Any], client: httpx.Client) -> None:
    url, app = server
    d = kind(client, url)
    task = task_of(d, "ask")
    began = time.monotonic()
    got = get(d, task.id, after=task.generation)
    took = time.monotonic() - began
    assert got.generation == task.generation
    assert MAX_WAIT * 0.95 <= took < MAX_WAIT + 1.0, took
    assert app.state.engine.long_polls.held == 0


def test_a_finished_task_is_answered_at_once(
        kind: type[Driver], server: tuple[str, Any], client: httpx.Client) -> None:
    url, _ = server
    d = kind(client, url)
    task = task_of(d, "done")
    assert task.status.state is m.TaskState.COMPLETED
    began = time.monotonic()
    assert get(d, task.id, after=task.generation).generation == task.generation
    assert time.monotonic() - began < MAX_WAIT / 2


@pytest.mark.parametrize("binding", ["jsonrpc", "rest", "grpc"])
def test_a_long_poll_ends_when_its_caller_gives_up(binding: str) -> None:
    with served(long_poll_max_wait=30.0) as (url, app), httpx.Client(timeout=30) as cl:
        d = JSONRPC11(cl, url)
        task = task_of(d, "ask")
        held = app.state.engine.long_polls
        began = time.monotonic()
        if binding == "grpc":
            with pytest.raises(Refused) as refused:
                _grpc_deadline(cl, url, task.id, task.generation)
            assert refused.value.status == "DEADLINE_EXCEEDED"
        else:
            path = (url + "/", "POST") if binding == "jsonrpc" else \
                (f"{url}/tasks/{task.id}?currentGeneration={task.generation}", "GET")
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                    "params": {"id": task.id, "currentGeneration": str(task.generation)}}
            with pytest.raises(httpx.ReadTimeout), httpx.Client(timeout=0.5) as impatient:
                impatient.request(path[1], path[0], headers={"A2A-Version": "1.1"},
                                  json=body if binding == "jsonrpc" else None)
        # the server lets go of it soon after, long before its maximum wait
        _until(lambda: held.held == 0, timeout=5)
        assert time.monotonic() - began < 10


def _grpc_deadline(client: httpx.Client, url: str, task_id: str, current: int) -> Any:
    import grpc

    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb

    d = GRPC10(client, url, headers={"A2A-Version": "1.1"})
    request = pb.GetTaskRequest(id=task_id, current_generation=current)
    method = d._method("GetTask", request, False)

    async def go() -> Any:
        return await method(request, metadata=d._metadata(), timeout=0.5)

    try:
        return d.loop.run(go())
    except grpc.aio.AioRpcError as exc:
        raise Refused(exc.code().name, "", exc.details() or "", None) from None  # type: ignore[arg-type]


def test_many_long_polls_on_one_task_are_woken_by_one_commit(
        server: tuple[str, Any], client: httpx.Client) -> None:
    url, app = server
    task = task_of(JSONRPC11(client, url), "ask")
    n = 200
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {
        "id": task.id, "currentGeneration": str(task.generation)}})
    headers = {"A2A-Version": "1.1", "Content-Type": "application/json"}

    async def polls() -> list[tuple[int, float]]:
        limits = httpx.Limits(max_connections=n + 10)
        async with httpx.AsyncClient(timeout=30, limits=limits) as cl:
            async def one() -> tuple[int, float]:
                resp = await cl.post(url + "/", content=body, headers=headers)
                return int(resp.json()["result"]["generation"]), time.monotonic()

            waiting = [asyncio.ensure_future(one()) for _ in range(n)]
            while app.state.engine.long_polls.held < n:
                await asyncio.sleep(0.01)
            await asyncio.to_thread(JSONRPC11(client, url).call, send("ask", task.id))
            return await asyncio.gather(*waiting)

    # the maximum wait is long enough that only the commit can end these polls
    engine = app.state.engine
    engine.long_polls.max_wait = 20.0
    try:
        began = time.monotonic()
        answers = asyncio.run(polls())
    finally:
        engine.long_polls.max_wait = MAX_WAIT
    assert {g for g, _ in answers} == {task.generation + 2}
    assert max(t for _, t in answers) - began < 10
    assert engine.long_polls.held == 0


def poll_while(kind: type[Driver], url: str, app: Any, task: m.Task,
               commit: Any) -> tuple[list[m.Task], float]:
    """A long poll for the generation after ``task``'s, sent to ``url``; once ``app``
    holds it, ``commit()``: what the poll got, and how long it took."""
    got: list[m.Task] = []

    def poll_once() -> None:
        with httpx.Client(timeout=30) as own:
            got.append(get(kind(own, url), task.id, after=task.generation))

    poll = threading.Thread(target=poll_once)
    began = time.monotonic()
    poll.start()
    _until(lambda: app.state.engine.long_polls.held == 1)
    commit()
    poll.join(15)
    return got, time.monotonic() - began


def _until(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# ---------------------------------------------------------------------- restart


def test_generations_survive_a_restart_and_are_never_reused(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    with served(store=store) as (url, _), httpx.Client(timeout=30) as cl:
        d = JSONRPC11(cl, url)
        items = d.stream(send("chunks 3", streaming=True))
        task_id = items[0][1].id
        before = get(d, task_id).generation
        assert before == generations(items)[-1] == 6
    with served(store=store) as (url, _), httpx.Client(timeout=30) as cl:
        for k in DRIVERS_11.values():
            assert get(k(cl, url), task_id).generation == before
        follow = JSONRPC11(cl, url).stream(send("chunks 1", task_id, streaming=True))
        assert generations(follow) == [before + 1, before + 2, before + 3, before + 4]


# --------------------------------------------------------------------- replicas


def test_two_replicas_agree_wake_each_others_long_polls_and_take_one_of_two_follow_ups(
        pg_url: str, redis_url: str) -> None:
    # two services on one PostgreSQL store and one Redis bus: each its own engine,
    # runs and caches, as two processes would have
    with served(store=pg_url, bus=redis_url, long_poll_max_wait=10.0) as (a_url, _), \
            served(store=pg_url, bus=redis_url, long_poll_max_wait=10.0) as (b_url, b), \
            httpx.Client(timeout=30) as cl:
        a = JSONRPC11(cl, a_url)
        task = task_of(a, "chunks 2")
        assert {get(k(cl, url), task.id).generation for k in DRIVERS_11.values()
                for url in (a_url, b_url)} == {task.generation}

        # a poll held on B, over each binding, is answered when A commits, through the bus
        for k in DRIVERS_11.values():
            task = get(a, task.id)
            got, took = poll_while(k, b_url, b, task,
                                   functools.partial(a.call, send("ask", task.id)))
            assert got and got[0].generation > task.generation, k.name
            assert took < 5.0, k.name  # not the maximum wait (10 s)

        # a follow-up for one generation sent to each replica at once: one is taken
        for _ in range(5):
            task = task_of(a, "ask")
            outcomes = race_follow_ups(JSONRPC11, [a_url, b_url], task)
            taken = [o for o in outcomes if isinstance(o, m.Task)]
            assert len(taken) == 1 and len(outcomes) == 2, outcomes
            assert get(a, task.id).generation == task.generation + 2
