"""Concurrent clients over real HTTP: idempotent sends make one task and run the
executor once; a messageId reused for another message is a new message (refused
in strict mode); racing cancels never answer a stale state; v1.0 subscriptions
follow a task through input-required to its end."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Client, Context, get_text
from interlingua.core.model import TaskState

from ..live import live_agent
from .sse_client import V1, events, rpc

STORES = ["memory", "sqlite"]


def _store(kind: str, tmp_path: Path) -> str:
    return "memory://" if kind == "memory" else f"sqlite:///{tmp_path}/tasks.db"


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")
        return url
    return _store(request.param, tmp_path)


def _message(text: str, message_id: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def _counting_agent(runs: Counter[str]) -> Agent:
    async def work(ctx: Context) -> None:
        runs[ctx.message.message_id] += 1
        await asyncio.sleep(0.01)
        if ctx.text == "ask":
            await ctx.require_input("and then?")
            return
        await ctx.complete("done")

    return Agent("Counter", "Counts its runs.", work)


async def _rpc(c: httpx.AsyncClient, url: str, method: str, params: dict[str, Any]) -> Any:
    r = await c.post(url + "/", headers=V1, json=rpc(method, params))
    return r.json()


@pytest.mark.parametrize("kind", STORES)
async def test_concurrent_sends_of_one_message_make_one_task_and_one_run(
        kind: str, tmp_path: Path) -> None:
    runs: Counter[str] = Counter()
    with live_agent(_counting_agent(runs), store=_store(kind, tmp_path)) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            for attempt in range(50):
                mid = f"m-{attempt}"
                # blocking and non-blocking sends, at once
                answers = await asyncio.gather(*(
                    _rpc(c, url, "SendMessage", {
                        "message": _message("hi", mid),
                        "configuration": {"returnImmediately": n % 2 == 1}})
                    for n in range(8)))
                ids = {a["result"]["task"]["id"] for a in answers}
                assert len(ids) == 1, answers
            listed = await _rpc(c, url, "ListTasks", {"pageSize": 100})
    assert listed["result"]["totalSize"] == 50
    assert set(runs.values()) == {1}, runs
    assert len(runs) == 50


@pytest.mark.parametrize("kind", STORES)
async def test_a_retried_follow_up_starts_one_turn(kind: str, tmp_path: Path) -> None:
    runs: Counter[str] = Counter()
    with live_agent(_counting_agent(runs), store=_store(kind, tmp_path)) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            for attempt in range(10):
                first = await _rpc(c, url, "SendMessage", {"message": _message("ask", f"a-{attempt}")})
                task = first["result"]["task"]
                assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
                mid = f"f-{attempt}"
                answers = await asyncio.gather(*(
                    _rpc(c, url, "SendMessage", {"message": _message("ask", mid,
                                                                     taskId=task["id"])})
                    for _ in range(8)))
                assert {a["result"]["task"]["id"] for a in answers} == {task["id"]}, answers
                # a retry after the turn ended is answered, not run again
                again = await _rpc(c, url, "SendMessage", {"message": _message(
                    "ask", mid, taskId=task["id"])})
                assert again["result"]["task"]["id"] == task["id"]
    assert [runs[f"f-{n}"] for n in range(10)] == [1] * 10


async def test_two_replies_at_once_to_a_question_start_one_turn(any_store: str) -> None:
    # (on SQLite and PostgreSQL the second reply, arriving while the first one's write
    # was in flight, found the task still waiting for input: both were taken, and the
    # agent ran twice)
    runs: Counter[str] = Counter()
    with live_agent(_counting_agent(runs), store=any_store) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            for attempt in range(25):
                asked = await _rpc(c, url, "SendMessage", {
                    "message": _message("ask", f"q-{attempt}")})
                task = asked["result"]["task"]

                async def reply(n: int, task_id: str = task["id"],
                                attempt: int = attempt) -> Any:
                    await asyncio.sleep(0.001 * (attempt % 4) * n)  # the second a little later
                    return await _rpc(c, url, "SendMessage", {"message": _message(
                        "go on", f"r-{attempt}-{n}", taskId=task_id)})

                answers = await asyncio.gather(reply(0), reply(1))
                taken = [a for a in answers if "result" in a]
                refused = [a["error"] for a in answers if "error" in a]
                assert len(taken) == 1 and len(refused) == 1, answers
                assert taken[0]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
                assert refused[0]["code"] == -32004, refused
                # (on a loaded machine the second may come once the first's turn ended)
                assert any(said in refused[0]["message"] for said in (
                    "already being continued", "continued by another message",
                    "takes a message only while it waits for input",
                    "a finished task takes no more messages")), refused
                assert runs[f"r-{attempt}-0"] + runs[f"r-{attempt}-1"] == 1, runs


async def test_a_cancel_racing_a_reply_is_never_an_internal_error(any_store: str) -> None:
    # (on SQLite and PostgreSQL the reply was answered -32603 when the cancel won, or,
    # blocking, with the task still working when the turn ended before the cancel's
    # write was stored)
    async def work(ctx: Context) -> None:
        if ctx.text == "ask":
            await ctx.require_input("and then?")
            return
        await ctx.update("working on it")
        await asyncio.sleep(0.05)
        await ctx.complete("done")

    with live_agent(Agent("Asker", "Asks, then works.", work), store=any_store) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            for attempt in range(25):
                asked = await _rpc(c, url, "SendMessage", {
                    "message": _message("ask", f"q-{attempt}")})
                task_id = asked["result"]["task"]["id"]
                sent, canceled = await asyncio.gather(
                    _rpc(c, url, "SendMessage", {"message": _message(
                        "go on", f"r-{attempt}", taskId=task_id)}),
                    _rpc(c, url, "CancelTask", {"id": task_id}))
                final = (await _rpc(c, url, "GetTask", {"id": task_id}))["result"]
                codes = {a["error"]["code"] for a in (sent, canceled) if "error" in a}
                assert codes <= {-32004, -32002}, (sent, canceled)
                if "result" in canceled:
                    assert final["status"]["state"] == "TASK_STATE_CANCELED", (sent, final)
                    if "error" in sent:
                        assert "canceled" in sent["error"]["message"], sent
                    else:  # a blocking send is answered once its turn settled
                        assert sent["result"]["task"]["status"]["state"] == \
                            "TASK_STATE_CANCELED", sent


async def test_a_message_id_reused_for_another_message_is_refused_in_strict_mode(
        any_store: str) -> None:
    runs: Counter[str] = Counter()
    with live_agent(_counting_agent(runs), store=any_store, message_ids="strict") as url:
        async with httpx.AsyncClient(timeout=30) as c:
            first = await _rpc(c, url, "SendMessage", {"message": _message("hi", "m-1")})
            same = await _rpc(c, url, "SendMessage", {"message": _message(
                "hi", "m-1", metadata={"retry": 2})})  # metadata is not compared
            assert same["result"]["task"]["id"] == first["result"]["task"]["id"]
            for changed in (_message("other text", "m-1"),
                            {**_message("hi", "m-1"), "role": "ROLE_AGENT"},
                            _message("hi", "m-1", contextId="another-context")):
                answer = await _rpc(c, url, "SendMessage", {"message": changed})
                assert answer["error"]["code"] == -32602, answer
                assert "already used for a different message" in answer["error"]["message"]
            # the v0.3 dialect gets its own code for the same refusal
            r = await c.post(url + "/", json={"jsonrpc": "2.0", "id": 1, "method": "message/send",
                                              "params": {"message": {
                                                  "kind": "message", "messageId": "m-1",
                                                  "role": "user",
                                                  "parts": [{"kind": "text", "text": "x"}]}}})
            assert r.json()["error"]["code"] == -32602
    assert runs["m-1"] == 1


async def test_a_message_id_reused_for_other_content_is_a_new_message(
        any_store: str, caplog: pytest.LogCaptureFixture) -> None:
    runs: Counter[str] = Counter()
    caplog.set_level(logging.WARNING, "interlingua.engine")
    with live_agent(_counting_agent(runs), store=any_store) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            async def send(message: dict[str, Any], **config: Any) -> dict[str, Any]:
                answer = await _rpc(c, url, "SendMessage", {"message": message,
                                                            "configuration": config})
                assert "result" in answer, answer
                task: dict[str, Any] = answer["result"]["task"]
                return task

            first = await send(_message("hi", "m-1"))
            others = [await send(changed, returnImmediately=immediately)
                      for immediately in (False, True)
                      for changed in (_message(f"other text {immediately}", "m-1"),
                                      {**_message(f"hi {immediately}", "m-1"),
                                       "role": "ROLE_AGENT"},
                                      _message("hi", "m-1", contextId=f"ctx-{immediately}"))]
            ids = [first["id"], *(t["id"] for t in others)]
            assert len(set(ids)) == 7, ids
            # an exact retry of each gets the task that message made, nothing run again
            for task in [first, *others]:
                message = task["history"][0]
                retry = {k: message[k] for k in ("messageId", "role", "parts")}
                if message.get("contextId", "").startswith("ctx-"):
                    retry["contextId"] = message["contextId"]
                for immediately in (False, True):
                    again = await send(retry, returnImmediately=immediately)
                    assert again["id"] == task["id"], (retry, again)
            # a follow-up reusing the id with other content: a new turn of its task
            asked = await send(_message("ask", "a-1"))
            assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            turn = await send(_message("ask", "f-1", taskId=asked["id"]))
            other_turn = await send(_message("and more", "f-1", taskId=asked["id"]))
            assert turn["id"] == other_turn["id"] == asked["id"]
            assert other_turn["status"]["state"] == "TASK_STATE_COMPLETED"
            again = await send(_message("ask", "f-1", taskId=asked["id"]))
            assert again["id"] == asked["id"]
            assert [m["parts"][0]["text"] for m in again["history"]
                    if m["role"] == "ROLE_USER"] == ["ask", "ask", "and more"]
            listed = await _rpc(c, url, "ListTasks", {"pageSize": 100})
    assert listed["result"]["totalSize"] == 8
    assert runs["m-1"] == 7 and runs["f-1"] == 2, runs
    # said where it is seen: a send that looks its message id up (one that waits
    # for its answer; a non-blocking one is written without a look-up)
    warned = [r.getMessage() for r in caplog.records if "used before" in r.getMessage()]
    assert any("'m-1'" in w for w in warned) and any("'f-1'" in w for w in warned), warned


#: a memory store has one server, so it has no "two on the store" case
_SERVERS = [pytest.param(kind, n, id=f"{kind}-{'alone' if n == 1 else 'two-on-the-store'}")
            for kind in ("memory", "sqlite", "postgresql") for n in (1, 2)
            if not (kind == "memory" and n == 2)]


@pytest.mark.parametrize(("kind", "processes"), _SERVERS)
@pytest.mark.parametrize("blocking", [True, False], ids=["blocking", "non-blocking"])
async def test_other_content_under_a_known_message_id_is_logged_once_on_each_path(
        kind: str, blocking: bool, processes: int, tmp_path: Path,
        request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture) -> None:
    """A send that waits for its answer, on a server alone on its store, looks its
    message id up first; one that does not wait, or one on a store that several
    servers share, is written without that look-up. Either way other content
    under a known id is logged once, with the id and the task of the message it
    had; so is a new turn of a task under the id of another task's message."""
    any_store = request.getfixturevalue("pg_url") if kind == "postgresql" \
        else _store(kind, tmp_path)
    caplog.set_level(logging.WARNING, "interlingua.engine")
    config = {"returnImmediately": not blocking}
    mid, follow = str(uuid.uuid4()), str(uuid.uuid4())
    with contextlib.ExitStack() as servers:
        urls = [servers.enter_context(live_agent(_counting_agent(Counter()), store=any_store))
                for _ in range(processes)]
        url = urls[-1]  # the last to start sees the others at once
        async with httpx.AsyncClient(timeout=30) as c:
            first = await _rpc(c, urls[0], "SendMessage", {"message": _message("hi", mid)})
            other = await _rpc(c, url, "SendMessage", {"message": _message("other", mid),
                                                       "configuration": config})
            first_id, other_id = first["result"]["task"]["id"], other["result"]["task"]["id"]
            assert first_id != other_id
            asked = await _rpc(c, url, "SendMessage", {"message": _message("ask", follow)})
            asked_id = asked["result"]["task"]["id"]
            turn = await _rpc(c, url, "SendMessage", {
                "message": _message("more", follow, taskId=asked_id), "configuration": config})
            assert turn["result"]["task"]["id"] == asked_id
    said = "was used before for a message with other content (task {}); this one is " \
        "taken as a new message"
    warned = [r.getMessage() for r in caplog.records if "used before" in r.getMessage()]
    assert warned == [f"messageId {mid!r} " + said.format(first_id),
                      f"messageId {follow!r} " + said.format(asked_id)], warned


async def test_racing_cancels_answer_canceled_never_a_stale_state(tmp_path: Path) -> None:
    async def wait(ctx: Context) -> None:
        await ctx.update("working")
        await asyncio.sleep(30)

    agent = Agent("Waiter", "Waits.", wait)
    with live_agent(agent, store=f"sqlite:///{tmp_path}/tasks.db") as url:
        async with httpx.AsyncClient(timeout=30) as c:
            for _ in range(20):
                sent = await _rpc(c, url, "SendMessage", {
                    "message": _message("go", str(uuid.uuid4())),
                    "configuration": {"returnImmediately": True}})
                task_id = sent["result"]["task"]["id"]
                answers = await asyncio.gather(*(
                    _rpc(c, url, "CancelTask", {"id": task_id}) for _ in range(4)))
                states = [a["result"]["status"]["state"] for a in answers if "result" in a]
                codes = [a["error"]["code"] for a in answers if "error" in a]
                assert states and set(states) == {"TASK_STATE_CANCELED"}, answers
                assert set(codes) <= {-32002}, answers
                later = await _rpc(c, url, "CancelTask", {"id": task_id})
                assert later["error"]["code"] == -32002


def _interrupted_agent() -> Agent:
    async def two_turns(ctx: Context) -> None:
        if ctx.text != "answer":
            await ctx.require_input("what now?")
            return
        await ctx.update("carrying on")
        await ctx.complete("finished")

    return Agent("Two turns", "Asks, then finishes.", two_turns)


def _read(url: str, body: dict[str, Any], headers: dict[str, str],
          out: list[tuple[str | None, Any]]) -> None:
    with httpx.Client(timeout=httpx.Timeout(20, read=20)) as c:
        for ev_id, _, data in events(c, url + "/", body, headers):
            out.append((ev_id, data))


@pytest.mark.parametrize("resume", [False, True])
def test_a_v1_subscription_follows_a_task_through_input_required(resume: bool) -> None:
    with live_agent(_interrupted_agent()) as url, httpx.Client(timeout=10) as c:
        task = c.post(url + "/", headers=V1, json=rpc("SendMessage", {
            "message": _message("start", str(uuid.uuid4()))})).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        headers = dict(V1)
        if resume:
            headers["Last-Event-ID"] = "1"
        got: list[tuple[str | None, Any]] = []
        reader = threading.Thread(target=_read, args=(
            url, rpc("SubscribeToTask", {"id": task["id"]}), headers, got))
        reader.start()
        # the subscription stays open at input-required
        reader.join(0.5)
        assert reader.is_alive(), got
        c.post(url + "/", headers=V1, json=rpc("SendMessage", {
            "message": _message("answer", str(uuid.uuid4()), taskId=task["id"])}))
        reader.join(10)
        assert not reader.is_alive()
    states = [d["result"].get("statusUpdate", {}).get("status", {}).get("state")
              or d["result"].get("task", {}).get("status", {}).get("state") for _, d in got]
    assert states[-1] == "TASK_STATE_COMPLETED", got
    assert "TASK_STATE_WORKING" in states
    ids = [int(i) for i, _ in got if i is not None]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_a_v03_resubscribe_still_ends_at_input_required() -> None:
    with live_agent(_interrupted_agent()) as url, httpx.Client(timeout=10) as c:
        task = c.post(url + "/", json={"jsonrpc": "2.0", "id": 1, "method": "message/send",
                                       "params": {"message": {
                                           "kind": "message", "messageId": "m-1", "role": "user",
                                           "parts": [{"kind": "text", "text": "start"}]}}}
                      ).json()["result"]
        got = list(events(c, url + "/", {"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe",
                                          "params": {"id": task["id"]}}))
    # the stream ends with the interrupted state (here: the task as it stands)
    assert got[-1][2]["result"]["status"]["state"] == "input-required"
    assert got[-1][2]["result"].get("final", True) is True


def test_a_v03_resubscribe_from_the_log_ends_at_input_required_the_agent_went_past() -> None:
    # An agent that asks for input and carries on in the same turn: a v0.3 stream
    # ends at the question (final: true). Read from the log on a resume, the question
    # sat inside one page with what followed it, and the stream ran on past it.
    async def asks_and_goes_on(ctx: Context) -> None:
        await ctx.update("working")
        await ctx.update("which one?", state=TaskState.INPUT_REQUIRED)
        await ctx.update("carrying on")
        for n in range(3):
            await ctx.artifact(f"chunk {n}", name="out.txt")
        await ctx.complete("done")

    agent = Agent("Asks", "Asks, then goes on.", asks_and_goes_on, streaming=True)
    with live_agent(agent) as url, httpx.Client(timeout=10) as c:
        task = c.post(url + "/", json={"jsonrpc": "2.0", "id": 1, "method": "message/send",
                                       "params": {"message": {
                                           "kind": "message", "messageId": "m-asks",
                                           "role": "user",
                                           "parts": [{"kind": "text", "text": "go"}]}}}
                      ).json()["result"]
        got = list(events(c, url + "/", {"jsonrpc": "2.0", "id": 2,
                                          "method": "tasks/resubscribe",
                                          "params": {"id": task["id"]}},
                          {"Last-Event-ID": "0"}))
    finals = [d["result"] for _, _, d in got if d["result"].get("final")]
    assert len(finals) == 1, got
    assert finals[0]["status"]["state"] == "input-required", got
    assert got[-1][2]["result"] == finals[0]


async def test_the_client_subscribe_follows_through_input_required() -> None:
    with live_agent(_interrupted_agent()) as url:
        async with Client(url) as client:
            task = await client.send("start")
            assert task.status.state is TaskState.INPUT_REQUIRED
            seen: list[TaskState | None] = []

            async def follow() -> None:
                async for event in client.subscribe(task.id):
                    seen.append(event.state)

            follower = asyncio.create_task(follow())
            await asyncio.sleep(0.3)
            assert not follower.done()
            await client.send("answer", task_id=task.id)
            await asyncio.wait_for(follower, 10)
    assert seen[0] is TaskState.INPUT_REQUIRED and seen[-1] is TaskState.COMPLETED, seen


def test_an_unknown_message_id_mode_is_refused_by_name() -> None:
    from interlingua import create_app
    from interlingua.server.engine import EngineConfig

    with pytest.raises(ValueError, match="use one of content, strict"):
        create_app(_counting_agent(Counter()), message_ids="loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="use one of content, strict"):
        create_app(_counting_agent(Counter()),
                   engine_config=EngineConfig(message_ids="loose"))  # type: ignore[arg-type]
    # the keyword wins over the config's field, which the config keeps
    config = EngineConfig(lease_timeout=5.0)
    app = create_app(_counting_agent(Counter()), engine_config=config, message_ids="strict")
    assert app.state.engine.sends.strict and app.state.engine.writer.strict_ids
    assert app.state.engine.config.lease_timeout == 5.0 and config.message_ids == "content"


async def test_an_agent_that_raises_cancelled_error_itself_fails_its_task(
        any_store: str) -> None:
    # (the turn re-raised it as if it had been canceled: the task stayed unfinished and
    # every stream of it open, with nothing logged)
    async def gives_up(ctx: Context) -> None:
        await ctx.artifact("started", name="w.txt")
        helper = asyncio.ensure_future(asyncio.sleep(10))
        asyncio.get_running_loop().call_later(0.05, helper.cancel)
        await helper  # what a library's own timeout does to what an agent awaits
        await ctx.complete("never reached")

    agent = Agent("Gives up", "Awaits what is canceled under it.", gives_up, streaming=True)
    with live_agent(agent, store=any_store) as url:
        async with Client(url, timeout=20) as client:
            sent = await client.send("go")
            assert sent.status.state is TaskState.FAILED
            events = [e async for e in client.stream("go again")]
    last = events[-1].item
    assert getattr(last, "status", None) is not None
    assert last.status.state is TaskState.FAILED
    assert "CancelledError" in get_text(last.status.message)
