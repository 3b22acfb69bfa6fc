"""The client of ``report_agent.py``: a webhook, a task, a notification, the report.

1. starts a local webhook receiver that checks the notification token and
   the agent's signature (its JWKS is named in the agent's card);
2. sends the report request with the webhook in the send (returning at once);
3. waits for the notification that the task completed;
4. fetches the task and prints the report.

    python examples/report_client.py http://127.0.0.1:8000/ [--dialect 1.0|0.3|0.1]

Each dialect gets its own webhook body: v1.0 a ``StreamResponse`` per event,
v0.2/v0.3 the Task, v0.1 ``{"eventType": "taskUpdate", ...}``.
"""

import argparse
import asyncio
import itertools
import secrets
import socket
import sys

import httpx
import msgspec
import uvicorn

from interlingua import Task, get_text, user_message
from interlingua.client import PushEvent, Receiver
from interlingua.core.calls import GetTask, SendConfig, SendMessage
from interlingua.core.dialects import get_codec
from interlingua.core.model import PushConfig
from interlingua.core.push_wire import SIGNING_EXTENSION_URI

TERMINAL = {"completed", "failed", "canceled", "rejected"}
_ids = itertools.count(1)


class _Response(msgspec.Struct):
    result: msgspec.Raw = msgspec.Raw(b"null")
    error: dict | None = None


async def call(http: httpx.AsyncClient, url: str, dialect: str, request):
    """One JSON-RPC call in ``dialect``; the canonical result."""
    codec = get_codec(dialect)
    method, params = codec.encode_call(request)
    body = (b'{"jsonrpc":"2.0","id":' + str(next(_ids)).encode() + b',"method":"'
            + method.encode() + b'","params":' + params + b"}")
    headers = {"Content-Type": "application/json"}
    if dialect == "1.0":
        headers["A2A-Version"] = "1.0"
    answer = msgspec.json.decode((await http.post(url, content=body, headers=headers)).content,
                                 type=_Response)
    if answer.error is not None:
        raise codec.decode_error(answer.error)
    return codec.decode_result(request, bytes(answer.result))


def jwks_url_of(card: dict) -> str | None:
    for ext in card.get("capabilities", {}).get("extensions", []):
        if ext.get("uri") == SIGNING_EXTENSION_URI:
            return ext.get("params", {}).get("jwksUrl")
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(description="Ask for a report; be told by webhook.")
    parser.add_argument("agent", nargs="?", default="http://127.0.0.1:8000/")
    parser.add_argument("--dialect", default="1.0", choices=["1.0", "0.3", "0.1"])
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    base = args.agent.rstrip("/")

    async with httpx.AsyncClient(timeout=30) as http:
        card = (await http.get(base + "/.well-known/agent-card.json")).json()
        jwks_url = jwks_url_of(card)
        print(f"agent: {card['name']}; push notifications: "
              f"{card['capabilities'].get('pushNotifications')}; JWKS: {jwks_url}")

        # 1. the webhook: a free loopback port, its own secret token
        token = secrets.token_urlsafe(16)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        hook = f"http://127.0.0.1:{sock.getsockname()[1]}/webhook/a2a-notifications"

        def show(event: PushEvent) -> None:
            print(f"  push {event.notification_id}: {event.dialect} body, "
                  f"state {event.state}, signature {'ok' if event.verified else 'not checked'}")

        receiver = Receiver(show, token=token, jwks_url=jwks_url)
        server = uvicorn.Server(uvicorn.Config(receiver, log_level="warning", lifespan="on"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"webhook listening at {hook}")

        try:
            # 2. the task, with the webhook in the send
            send = SendMessage(
                message=user_message("Generate the Q1 sales report. This usually takes a "
                                     "while. Notify me when it's ready."),
                config=SendConfig(blocking=False, push_config=PushConfig(url=hook, token=token)),
                client_task_id="task-reportgen-" + secrets.token_hex(4),
            )
            task = await call(http, args.agent, args.dialect, send)
            assert isinstance(task, Task)
            print(f"task {task.id}: {task.status.state.value}")

            # 3. the notification that it is done
            done = await receiver.wait_for(
                lambda e: e.task_id == task.id and e.state in TERMINAL, timeout=args.timeout)
            print(f"notified: task {done.task_id} is {done.state}")

            # 4. the report itself
            final = await call(http, args.agent, args.dialect, GetTask(id=task.id))
            assert isinstance(final, Task)
            for artifact in final.artifacts:
                print(f"--- {artifact.name or artifact.artifact_id} ---")
                print(get_text(artifact))
        finally:
            server.should_exit = True
            await serving


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)
