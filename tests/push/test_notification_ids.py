"""A notification's id names that notification alone: two agents (or two servers) whose
tasks a v0.1 client gave one id, pushing to one receiver, are two notifications each
time, not one and a duplicate; and a notification tried again keeps its id."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest

from interlingua import Agent
from interlingua.client import Receiver
from interlingua.host import create_app
from tests.live import bind_loopback, live_server, url_of

from .helpers import Hook, dev_settings, serve_hook, until


async def _upper(text: str) -> str:
    return text.upper()


UPPER = Agent("Upper", "Writes in capitals.", _upper, push_notifications=True)
SHOUT = Agent("Shout", "Writes in capitals too.", _upper, push_notifications=True)


@contextmanager
def two_agents_on_one_server() -> Iterator[list[str]]:
    sock = bind_loopback()
    base = url_of(sock)
    app = create_app([UPPER, SHOUT], store="memory://", public_url=base,
                     push=dev_settings(network_backend=None))
    with live_server(app, sock=sock) as url:
        yield [f"{url}/agents/Upper/", f"{url}/agents/Shout/"]


@contextmanager
def one_agent_on_two_servers() -> Iterator[list[str]]:
    with ExitStack() as stack:
        urls = []
        for _ in range(2):
            sock = bind_loopback()
            app = create_app(UPPER, store="memory://", public_url=url_of(sock),
                             push=dev_settings(network_backend=None))
            urls.append(stack.enter_context(live_server(app, sock=sock)) + "/")
        yield urls


def v01_send(http: httpx.Client, agent_url: str, task_id: str, text: str, hook: str) -> None:
    """``tasks/send`` of v0.1 with the client's task id and a push config (whose id is
    then the task's)."""
    answer = http.post(agent_url, json={
        "jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {
            "id": task_id, "message": {"role": "user", "parts": [{"type": "text", "text": text}]},
            "pushNotification": {"url": hook, "token": "tok"}}})
    assert answer.json()["result"]["status"]["state"] == "completed", answer.text


@pytest.mark.parametrize("where", [two_agents_on_one_server, one_agent_on_two_servers],
                         ids=["two-agents-one-server", "one-agent-two-servers"])
async def test_tasks_of_one_v01_id_on_two_agents_both_reach_one_receiver(where: object) -> None:
    receiver = Receiver(token="tok")
    with live_server(receiver) as hook, where() as agents, \
            httpx.Client(timeout=30) as http:  # type: ignore[operator]
        for agent_url, text in zip(agents, ("first", "second"), strict=True):
            v01_send(http, agent_url, "job-1", text, hook + "/")

        def completed() -> list[str]:
            return sorted(e.body["task"]["artifacts"][0]["parts"][0]["text"]
                          for e in list(receiver.events) if e.state == "completed")

        await until(lambda: len(completed()) == 2)
    assert completed() == ["FIRST", "SECOND"]
    assert receiver.duplicates == 0
    ids = [e.notification_id for e in receiver.events]
    assert len(set(ids)) == len(ids)
    assert all(i is not None and i.startswith("job-1:job-1:") for i in ids)


async def test_a_notification_tried_again_keeps_its_id() -> None:
    """Its id and its signature's nid are the same on every attempt."""
    import base64

    import msgspec

    def respond(hook: Hook, headers: dict[str, str], body: bytes, path: str) -> int:
        return 503 if hook.count(headers["x-a2a-notification-id"]) < 2 else 200

    hook = Hook(respond)
    with serve_hook(hook) as url:
        sock = bind_loopback()
        app = create_app(UPPER, store="memory://", public_url=url_of(sock),
                         push=dev_settings(network_backend=None, max_attempts=5))
        with live_server(app, sock=sock) as agent, httpx.Client(timeout=30) as http:
            v01_send(http, agent + "/", "job-1", "x", url + "/")
            await until(lambda: len(hook.delivered()) >= 1)
    by_id: dict[str, list[str]] = {}
    for r in hook.requests:
        head = r.headers["x-a2a-signature"].split(".")[0]
        nid = msgspec.json.decode(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["nid"]
        by_id.setdefault(r.nid, []).append(nid)
    assert all(nids == [nid] * 3 for nid, nids in by_id.items()), by_id
    assert [r.status for r in hook.requests if r.nid == hook.delivered()[0].nid] == [503, 503, 200]
