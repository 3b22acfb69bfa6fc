"""An agent on the mesh: SAM's requests on its request topic, answers on the
topics the request names (real Mosquitto)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from interlingua import Agent, Context
from interlingua.core.errors import quoted
from interlingua.core.model import DataPart, TextPart

from .helpers import Peer, decoded, on_mesh

pytestmark = pytest.mark.timeout(30)

#: seed 002's "Gateway to Agent Request", as it is printed there
SEED_REQUEST = {
    "jsonrpc": "2.0",
    "id": "req_123",
    "method": "tasks/send",
    "params": {
        "message": {
            "role": "user",
            "parts": [
                {"text": "Validate this order"},
                {"data": {"order_id": "ORD-123"}},
            ],
            "message_id": "msg_abc",
            "context_id": "session_456",
            "kind": "message",
        }
    },
}


async def validate(ctx: Context) -> None:
    await ctx.complete([TextPart(text="Order validated successfully"),
                        DataPart(data={"valid": True, "order_id": "ORD-123"})])


VALIDATOR = Agent("OrderValidator", "Validates orders.", validate)


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


async def test_seed_request_is_answered_on_reply_to_in_the_seed_shape(ns: str) -> None:
    async with on_mesh(VALIDATOR, ns), Peer(ns) as peer:
        reply_to = peer.topics.gateway_response("gw_123", "req_123")
        await peer.listen(reply_to)
        await peer.request("OrderValidator", SEED_REQUEST, replyTo=reply_to, clientId="gw_123",
                           userId="alice", timestamp=1700000000000)
        got = decoded(await peer.next())
    assert got["jsonrpc"] == "2.0" and got["id"] == "req_123"
    task = got["result"]
    assert task["kind"] == "task"
    assert task["id"] == "req_123"  # the request id names the task
    assert task["context_id"] == "session_456"
    assert task["status"]["state"] == "completed"
    assert task["status"]["timestamp"]
    parts = task["status"]["message"]["parts"]
    assert parts[0] == {"text": "Order validated successfully"}
    assert parts[1] == {"data": {"valid": True, "order_id": "ORD-123"}}
    assert "interlingua_mesh_reply" not in _keys(task)  # the mesh's bookkeeping stays in
    camel = {k for k in _keys(task) if re.search(r"[a-z][A-Z]", k)}
    assert not camel, f"camelCase members in a SAM answer: {camel}"


async def story(ctx: Context) -> None:
    await ctx.update("starting")
    aid = None
    for i, chunk in enumerate(["a", "b", "c"]):
        aid = await ctx.artifact(chunk, artifact_id=aid, name="story.txt", append=i > 0,
                                 last_chunk=i == 2)
    await ctx.complete("done")


STORY = Agent("Story", "Streams a story.", story, streaming=True)


def _stream_request(rid: str, text: str = "go") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tasks/send-streaming", "params": {
        "message": {"role": "user", "parts": [{"text": text}], "message_id": rid + "-m"}}}


async def test_streaming_sends_updates_on_the_status_topic_and_the_task_on_reply_to(
        ns: str) -> None:
    async with on_mesh(STORY, ns), Peer(ns) as peer:
        reply_to = peer.topics.gateway_response("gw", "s1")
        status = peer.topics.gateway_status("gw", "s1")
        await peer.listen(reply_to, status)
        await peer.request("Story", _stream_request("s1"), replyTo=reply_to,
                           a2aStatusTopic=status, clientId="gw")
        final, before = await peer.until(reply_to)
    updates = [decoded(m) for m in before]
    assert all(m.topic == status for m in before)
    assert all(u["id"] == "s1" and u["jsonrpc"] == "2.0" for u in updates)
    events = [u["result"] for u in updates]
    kinds = [e["kind"] for e in events]
    assert kinds.count("artifact-update") == 3
    assert "".join(e["artifact"]["parts"][0]["text"] for e in events
                   if e["kind"] == "artifact-update") == "abc"
    states = [e["status"]["state"] for e in events if e["kind"] == "status-update"]
    assert states[0] in ("submitted", "working") and states[-1] == "completed"
    assert events[-1]["final"] is True
    assert all(e["task_id"] == "s1" for e in events)
    task = decoded(final)["result"]
    assert task["kind"] == "task" and task["id"] == "s1"
    assert task["status"]["state"] == "completed"
    assert not task.get("artifacts")  # they went out as updates


async def test_without_reply_to_the_client_topics_are_used(ns: str) -> None:
    async with on_mesh(STORY, ns), Peer(ns) as peer:
        await peer.listen(peer.topics.client_response("c9"), peer.topics.client_status("c9", "#"))
        await peer.request("Story", _stream_request("s2"), clientId="c9")
        final, before = await peer.until(peer.topics.client_response("c9"))
    assert before and {m.topic for m in before} == {peer.topics.client_status("c9", "s2")}
    assert decoded(final)["result"]["status"]["state"] == "completed"


async def test_mqtt5_response_topic_and_correlation_data_are_honoured(ns: str) -> None:
    async with on_mesh(VALIDATOR, ns), Peer(ns) as peer:
        await peer.listen("replies/" + ns)
        await peer.request("OrderValidator", {**SEED_REQUEST, "id": "r5"},
                           response_topic="replies/" + ns, correlation=b"\x01corr")
        msg = await peer.next()
    assert msg.topic == "replies/" + ns
    assert msg.correlation == b"\x01corr"
    assert decoded(msg)["result"]["status"]["state"] == "completed"


async def test_a_numeric_request_id_names_the_task_by_its_decimal_digits(ns: str) -> None:
    """As SAM's agents take it (``str(id)``): ``"id": 7`` makes task "7", answered with
    the id 7 as sent, and its updates go to the status topic that task names. Before, a
    number named no task: the agent made up an id, which the requester could not know."""
    async with on_mesh(STORY, ns), Peer(ns) as peer:
        reply_to = peer.topics.client_response("c7")
        await peer.listen(reply_to, peer.topics.client_status("c7", "#"))
        await peer.request("Story", {**_stream_request("x"), "id": 7}, clientId="c7")
        final, before = await peer.until(reply_to)
        await peer.request("Story", {**_stream_request("y"), "id": 0,
                                     "method": "tasks/send"}, clientId="c7")
        plain, _ = await peer.until(reply_to)
    assert before and {m.topic for m in before} == {peer.topics.client_status("c7", "7")}
    assert all(decoded(m)["id"] == 7 and decoded(m)["result"]["task_id"] == "7"
               for m in before)
    answer = decoded(final)
    assert answer["id"] == 7 and answer["result"]["id"] == "7"
    assert answer["result"]["status"]["state"] == "completed"
    answer = decoded(plain)
    assert answer["id"] == 0 and answer["result"]["id"] == "0"



async def slow(ctx: Context) -> None:
    await ctx.update("working on it")
    await asyncio.sleep(30)
    await ctx.complete("too late")


SLOW = Agent("Slow", "Takes its time.", slow, streaming=True)


def _send(rid: str, text: str = "go") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tasks/send", "params": {
        "message": {"role": "user", "parts": [{"text": text}], "message_id": rid + "-m"}}}


def _cancel(rid: str, task_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tasks/cancel", "params": {"id": task_id}}


async def _until_working(peer: Peer, agent: str, task_id: str) -> None:
    probe = peer.topics.client_response("probe")
    await peer.listen(probe)
    for i in range(100):
        await peer.request(agent, {"jsonrpc": "2.0", "id": f"p{i}", "method": "tasks/get",
                                   "params": {"id": task_id}}, replyTo=probe)
        msg, _ = await peer.until(probe)
        got = decoded(msg)
        if "result" in got and got["result"]["status"]["state"] == "working":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never worked")


async def test_cancel_on_the_request_topic_cancels_the_running_task(ns: str) -> None:
    async with on_mesh(SLOW, ns), Peer(ns) as peer:
        first, second = peer.topics.client_response("a"), peer.topics.client_response("b")
        await peer.listen(first, second)
        await peer.request("Slow", _send("k1"), replyTo=first)
        await _until_working(peer, "Slow", "k1")
        await peer.request("Slow", _cancel("c1", "k1"), replyTo=second)
        answered = {}
        while len(answered) < 2:
            msg = await peer.next()
            if msg.topic in (first, second):
                answered[msg.topic] = decoded(msg)
    assert answered[second]["id"] == "c1"
    assert answered[second]["result"]["status"]["state"] == "canceled"
    assert answered[first]["id"] == "k1"
    assert answered[first]["result"]["status"]["state"] == "canceled"


# ------------------------------------------------------------------ bad input


async def test_an_unknown_method_is_quoted_cut_in_the_refusal(ns: str) -> None:
    """As over HTTP: a 20,000-character method is named quoted and cut in the -32601
    (before: echoed whole)."""
    method = "x" * 20000
    async with on_mesh(VALIDATOR, ns), Peer(ns) as peer:
        reply = peer.topics.client_response("long")
        await peer.listen(reply)
        await peer.request("OrderValidator", {"jsonrpc": "2.0", "id": "x1", "method": method,
                                              "params": {}}, replyTo=reply)
        error = decoded(await peer.next())["error"]
    assert error["code"] == -32601
    assert error["message"] == f"Method not found: {quoted(method)}"
    assert len(error["message"]) < 100


async def test_bad_requests_are_answered_with_errors_and_the_consumer_lives_on(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    async with on_mesh(VALIDATOR, ns) as mesh, Peer(ns) as peer:
        reply = peer.topics.client_response("bad")
        await peer.listen(reply)
        await peer.request("OrderValidator", b'{"jsonrpc": "2.0", "id": "x1", "method": ',
                           replyTo=reply)
        parse_error = decoded(await peer.next())
        await peer.request("OrderValidator", {"jsonrpc": "2.0", "id": "x2",
                                              "method": "tasks/teleport", "params": {}},
                           replyTo=reply)
        unknown = decoded(await peer.next())
        await peer.request("OrderValidator", {"jsonrpc": "2.0", "id": "x3",
                                              "method": "tasks/send", "params": {"nope": 1}},
                           replyTo=reply)
        bad_params = decoded(await peer.next())
        await peer.request("OrderValidator", b"[]", replyTo=reply)
        empty_batch = decoded(await peer.next())
        await peer.request("OrderValidator", b"\xff\xfe not even text", clientId="bad")
        not_utf8 = decoded(await peer.next())
        # no replyTo, no response topic, no clientId: nowhere to answer
        with caplog.at_level("WARNING", logger="interlingua.mesh"):
            await peer.request("OrderValidator", {"jsonrpc": "2.0", "id": "x6",
                                                  "method": "tasks/teleport"})
            assert await peer.quiet(0.5) == []
        assert any("cannot be answered" in r.getMessage() for r in caplog.records)
        # the consumer still serves
        await peer.request("OrderValidator", {**SEED_REQUEST, "id": "x7"}, replyTo=reply)
        fine = decoded(await peer.next())
        # counted once its answer is published, which the peer may hear first
        deadline = asyncio.get_running_loop().time() + 5
        while mesh.handled < 1:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.01)
    assert parse_error["error"]["code"] == -32700 and parse_error["id"] is None
    assert unknown["error"]["code"] == -32601 and unknown["id"] == "x2"
    assert bad_params["error"]["code"] == -32602 and bad_params["id"] == "x3"
    assert empty_batch["error"]["code"] == -32600
    assert not_utf8["error"]["code"] in (-32700, -32600)
    assert fine["result"]["status"]["state"] == "completed"


# ----------------------------------------------------------- several instances


async def test_two_instances_share_the_requests_and_cancels_reach_the_runner(
        ns: str, tmp_path: Any) -> None:
    store = f"sqlite:///{tmp_path}/shared.db"
    async with on_mesh(SLOW, ns, store=store, instance="a") as a, \
            on_mesh(SLOW, ns, store=store, instance="b") as b, Peer(ns) as peer:
        sent, canceled = peer.topics.client_response("s"), peer.topics.client_response("c")
        await peer.listen(sent, canceled)
        ids = [f"job{i}" for i in range(6)]
        for rid in ids:
            await peer.request("Slow", _send(rid), replyTo=sent)
        for rid in ids:
            await _until_working(peer, "Slow", rid)
        running = {rid: (a if a.door.running_here(_anyone(), rid) else b) for rid in ids}
        assert {m.instance for m in running.values()} == {"a", "b"}  # both took some
        for rid in ids:
            await peer.request("Slow", _cancel("c-" + rid, rid), replyTo=canceled)
        answers: dict[str, dict[str, Any]] = {}
        while len(answers) < 2 * len(ids):
            msg = await peer.next()
            if msg.topic in (sent, canceled):
                got = decoded(msg)
                answers[got["id"]] = got
    for rid in ids:
        assert answers[rid]["result"]["status"]["state"] == "canceled"
        assert answers["c-" + rid]["result"]["status"]["state"] == "canceled"


def _anyone() -> Any:
    from interlingua.server.context import RequestInfo

    return RequestInfo(dialect="sam")


async def test_a_request_sent_while_an_instance_is_away_is_handled_when_it_returns(
        ns: str, tmp_path: Any) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    async with on_mesh(VALIDATOR, ns, store=store, instance="keeper"):
        pass  # the broker now keeps its session (and its subscription)
    async with Peer(ns) as peer:
        reply = peer.topics.client_response("late")
        await peer.listen(reply)
        await peer.request("OrderValidator", {**SEED_REQUEST, "id": "while-away"},
                           replyTo=reply)
        assert await peer.quiet(0.3) == []  # nobody is there
        async with on_mesh(VALIDATOR, ns, store=store, instance="keeper"):
            got = decoded(await peer.next())
    assert got["id"] == "while-away"
    assert got["result"]["status"]["state"] == "completed"


async def tell_headers(ctx: Context) -> None:
    h = ctx.headers
    await ctx.complete(DataPart(data={k: h.get(k) for k in (
        "userid", "a2auserconfig", "calldepth", "delegating_agent_name")}))


HEADERS = Agent("Headers", "Says what it was told.", tell_headers)


async def test_user_properties_reach_the_executor_as_headers(ns: str) -> None:
    async with on_mesh(HEADERS, ns), Peer(ns) as peer:
        reply = peer.topics.client_response("h")
        await peer.listen(reply)
        await peer.request("Headers", _send("h1"), replyTo=reply, userId="alice",
                           a2aUserConfig={"tier": "gold"}, callDepth=2,
                           delegating_agent_name="Orchestrator")
        got = decoded(await peer.next())
    told = got["result"]["status"]["message"]["parts"][0]["data"]
    # user properties are strings: a dict or a number went as JSON
    assert told == {"userid": "alice", "a2auserconfig": '{"tier":"gold"}', "calldepth": "2",
                    "delegating_agent_name": "Orchestrator"}


async def test_json_nested_too_deeply_on_any_topic_leaves_the_agent_serving(ns: str) -> None:
    """A payload deeper than the decoder goes (anyone on the broker may publish one):
    a request gets an error, a card or withdrawal is passed over, and the agent
    goes on reading."""
    deep = b'{"name": "x", "instance": "y", "junk": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    async with on_mesh(VALIDATOR, ns), Peer(ns) as peer:
        reply = peer.topics.client_response("deep")
        await peer.listen(reply)
        await peer.broker.publish(peer.topics.discovery(), deep, {"a2aInstance": "other"})
        await peer.broker.publish(peer.topics.withdrawals(), deep, {})
        await peer.request("OrderValidator", deep, replyTo=reply)
        refused = decoded(await peer.next())
        await peer.request("OrderValidator", {**SEED_REQUEST, "id": "after"}, replyTo=reply)
        fine = decoded(await peer.next())
    assert refused["error"]["code"] in (-32700, -32600)
    assert fine["id"] == "after" and fine["result"]["status"]["state"] == "completed"
