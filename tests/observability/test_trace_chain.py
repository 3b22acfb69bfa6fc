"""A chain of agents over loopback HTTP is one trace.

A's executor calls B with interlingua's client, B's calls C. Each client puts the
current span's ``traceparent`` on its request, each server reads it, so the
request, turn and commit spans of all three agents hang from the test's root span.
"""

from __future__ import annotations

import contextlib

import pytest

from interlingua import Agent, Client, create_app
from interlingua.core.errors import TaskNotFound
from tests.live import bind_loopback, live_server, url_of
from tests.observability.spans import memory_provider, named, parent_of

pytestmark = pytest.mark.timeout(30)


def _forwarder(name: str, next_url: str | None, binding: str | None = None):
    async def run(text: str) -> str:
        if next_url is None:
            return f"{name}({text})"
        async with Client(next_url, binding=binding) as client:
            task = await client.send(text)
        answer = task.artifacts[0].parts[0].text  # type: ignore[union-attr]
        return f"{name}({answer})"

    return Agent(name, f"agent {name}", run)


@contextlib.contextmanager
def _chain(provider, binding: str | None = None):
    socks = [bind_loopback() for _ in range(3)]
    urls = [url_of(s) for s in socks]
    agents = [_forwarder("A", urls[1], binding), _forwarder("B", urls[2], binding),
              _forwarder("C", None)]
    with contextlib.ExitStack() as stack:
        for sock, url, agent in zip(socks, urls, agents, strict=True):
            app = create_app(agent, public_url=url, tracing=provider)
            if binding == "grpc":
                from interlingua.bindings.grpc import add_grpc

                add_grpc(app, "127.0.0.1:0")
            stack.enter_context(live_server(app, sock=sock))
        yield urls


@pytest.mark.parametrize("binding", ["jsonrpc", "http+json", "grpc"])
async def test_three_agents_make_one_trace(binding):
    provider, exporter = memory_provider()
    tracer = provider.get_tracer("test")
    with _chain(provider, binding) as urls:
        with tracer.start_as_current_span("root") as root:
            async with Client(urls[0], binding=binding) as client:
                task = await client.send("hi")
    assert task.artifacts[0].parts[0].text == "A(B(C(hi)))"  # type: ignore[union-attr]

    spans = exporter.get_finished_spans()
    trace_id = root.get_span_context().trace_id
    assert {s.context.trace_id for s in spans} == {trace_id}

    sends = named(spans, "A2A SendMessage")
    turns = named(spans, "A2A executor turn")
    assert len(sends) == 3 and len(turns) == 3
    wire = {"http+json": "rest"}.get(binding, binding)
    assert {s.attributes["a2a.binding"] for s in sends} == {wire}
    assert {s.attributes["a2a.outcome"] for s in sends} == {"ok"}
    assert {s.attributes["a2a.dialect"] for s in sends} == {"1.0"}

    # A's request hangs from the root; each agent's turn from its request; the next
    # agent's request from the turn whose executor called it.
    by_task = {s.attributes["a2a.task_id"]: s for s in turns}
    request_a = next(s for s in sends if parent_of(s, spans) is None
                     or parent_of(s, spans).name == "root")
    assert request_a.parent.span_id == root.get_span_context().span_id
    chain = [request_a]
    for _ in range(2):
        turn = by_task[chain[-1].attributes["a2a.task_id"]]
        assert turn.parent.span_id == chain[-1].context.span_id
        nxt = next(s for s in sends if s.parent is not None
                   and s.parent.span_id == turn.context.span_id)
        chain.append(nxt)
    assert by_task[chain[-1].attributes["a2a.task_id"]].parent.span_id == \
        chain[-1].context.span_id
    assert len({s.attributes["a2a.task_id"] for s in chain}) == 3

    # every store commit belongs to a turn or a request of the same task
    commits = named(spans, "A2A store commit")
    assert commits
    for commit in commits:
        parent = parent_of(commit, spans)
        assert parent is not None and parent.name in ("A2A executor turn", "A2A SendMessage")
        assert parent.attributes["a2a.task_id"] == commit.attributes["a2a.task_id"]


async def test_without_a_caller_span_each_request_starts_its_trace_and_failures_say_so():
    provider, exporter = memory_provider()
    with _chain(provider) as urls:
        async with Client(urls[2]) as client:
            await client.send("x")
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")
    spans = exporter.get_finished_spans()
    send = named(spans, "A2A SendMessage")[0]
    assert send.parent is None
    get = named(spans, "A2A GetTask")[0]
    assert get.attributes["a2a.outcome"] == "TaskNotFound"
    assert get.attributes["a2a.task_id"] == "no-such-task"
    assert get.status.status_code.name == "ERROR"
    assert get.context.trace_id != send.context.trace_id


async def test_a_failed_turn_says_so_on_its_span():
    async def broken(text: str) -> str:
        raise ValueError("no")

    provider, exporter = memory_provider()
    sock = bind_loopback()
    app = create_app(Agent("Broken", "Fails.", broken), public_url=url_of(sock),
                     tracing=provider)
    with live_server(app, sock=sock, allow_errors=True) as url:
        async with Client(url) as client:
            task = await client.send("x")
    assert task.status.state.value == "failed"
    (turn,) = named(exporter.get_finished_spans(), "A2A executor turn")
    assert turn.attributes["a2a.state"] == "failed"
    assert turn.status.status_code.name == "ERROR"
    (send,) = named(exporter.get_finished_spans(), "A2A SendMessage")
    assert send.attributes["a2a.outcome"] == "ok"  # the request itself was answered
