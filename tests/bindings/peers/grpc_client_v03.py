"""The official Python SDK 0.3.x client over gRPC against an agent; prints JSON.

    python grpc_client_v03.py AGENT_URL

Runs with the interpreter of an ``a2a-sdk[grpc]`` 0.3.x venv. The card is read
with ``A2ACardResolver``; ``ClientFactory``, told to prefer gRPC, finds the
gRPC interface in the card's ``additionalInterfaces`` and speaks the v0.3
service (``a2a.v1.A2AService``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
    TransportProtocol,
)


def message(text: str) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.user,
                   parts=[Part(root=TextPart(text=text))])


def kind(ev: Any) -> str:
    if isinstance(ev, tuple):
        _task, update = ev
        return "task" if update is None else update.kind
    return "message"


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    opts = ap.parse_args()
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, opts.url).get_agent_card()

    def config(streaming: bool) -> ClientConfig:
        return ClientConfig(streaming=streaming, supported_transports=[TransportProtocol.grpc],
                            use_client_preference=True,
                            grpc_channel_factory=grpc.aio.insecure_channel)

    unary = ClientFactory(config(False)).create(card)
    streaming = ClientFactory(config(True)).create(card)
    out: dict[str, Any] = {"transport": type(unary._transport).__name__}
    try:
        sent = [ev async for ev in unary.send_message(
            message("hello"), configuration=MessageSendConfiguration(blocking=True))]
        task: Task = sent[-1][0]
        out["send"] = {"state": task.status.state.value,
                       "text": task.artifacts[0].parts[0].root.text}
        got = await unary.get_task(TaskQueryParams(id=task.id))
        out["get"] = {"id": got.id == task.id, "state": got.status.state.value}
        events = [ev async for ev in streaming.send_message(message("steps"))]
        out["stream"] = [kind(ev) for ev in events]
        final = events[-1][1]
        out["streamEnd"] = [final.status.state.value, final.final]
        waiting = [ev async for ev in unary.send_message(
            message("wait"), configuration=MessageSendConfiguration(blocking=False))]
        wait_id = waiting[-1][0].id
        seen: list[str] = []
        async for ev in streaming.resubscribe(TaskIdParams(id=wait_id)):
            seen.append(kind(ev))
            if len(seen) == 1:
                canceled = await unary.cancel_task(TaskIdParams(id=wait_id))
                out["cancel"] = canceled.status.state.value
        out["subscribe"] = seen
        asked = [ev async for ev in unary.send_message(message("ask"))]
        ask_id = asked[-1][0].id
        made = await unary.set_task_callback(TaskPushNotificationConfig(
            task_id=ask_id, push_notification_config=PushNotificationConfig(
                id="c1", url="http://127.0.0.1:9/hook", token="tok")))
        again = await unary.get_task_callback(GetTaskPushNotificationConfigParams(
            id=ask_id, push_notification_config_id="c1"))
        out["push"] = {"made": [made.task_id, made.push_notification_config.id],
                       "got": [again.push_notification_config.url,
                               again.push_notification_config.token]}
        out["askId"] = ask_id
    finally:
        await unary.close()
        await streaming.close()
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
