"""The official Python SDK 1.x client over gRPC against an agent; prints JSON.

    python grpc_client_v1.py AGENT_URL [--dialect 1.0|0.3]

Runs with the interpreter of an ``a2a-sdk[grpc]`` 1.x venv. The card is read
with ``A2ACardResolver`` and the client made by ``ClientFactory`` preferring
gRPC; with ``--dialect 0.3`` only the card's v0.3 interfaces are kept, so the
factory picks the SDK's v0.3 gRPC transport (service ``a2a.v1.A2AService``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)


def message(text: str) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])


def event_kind(ev: object) -> str:
    return ev.WhichOneof("payload")  # type: ignore[attr-defined]


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--dialect", default="1.0")
    opts = ap.parse_args()
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, opts.url).get_agent_card()
    keep = [i for i in card.supported_interfaces
            if i.protocol_binding == "GRPC" and i.protocol_version.startswith(opts.dialect)]
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(keep)

    def config(streaming: bool) -> ClientConfig:
        return ClientConfig(streaming=streaming, supported_protocol_bindings=["GRPC"],
                            grpc_channel_factory=grpc.aio.insecure_channel)

    unary = ClientFactory(config(False)).create(card)
    streaming = ClientFactory(config(True)).create(card)
    out: dict[str, object] = {"transport": type(unary._transport).__name__}
    try:
        sent = [ev async for ev in unary.send_message(SendMessageRequest(
            message=message("hello"), configuration=SendMessageConfiguration()))]
        task = sent[-1].task
        out["send"] = {"state": TaskState.Name(task.status.state),
                       "text": task.artifacts[0].parts[0].text}
        got = await unary.get_task(GetTaskRequest(id=task.id))
        out["get"] = {"id": got.id == task.id, "state": TaskState.Name(got.status.state)}
        events = [ev async for ev in streaming.send_message(SendMessageRequest(
            message=message("steps")))]
        out["stream"] = [event_kind(ev) for ev in events]
        last = events[-1]
        out["streamEnd"] = TaskState.Name(last.status_update.status.state) \
            if event_kind(last) == "status_update" else event_kind(last)
        waiting = [ev async for ev in unary.send_message(SendMessageRequest(
            message=message("wait"),
            configuration=SendMessageConfiguration(return_immediately=True)))]
        wait_id = waiting[-1].task.id
        seen: list[str] = []
        async for ev in streaming.subscribe(SubscribeToTaskRequest(id=wait_id)):
            seen.append(event_kind(ev))
            if len(seen) == 1:
                canceled = await unary.cancel_task(CancelTaskRequest(id=wait_id))
                out["cancel"] = TaskState.Name(canceled.status.state)
        out["subscribe"] = seen
        asked = [ev async for ev in unary.send_message(SendMessageRequest(
            message=message("ask")))]
        ask_id = asked[-1].task.id
        made = await unary.create_task_push_notification_config(TaskPushNotificationConfig(
            task_id=ask_id, id="c1", url="http://127.0.0.1:9/hook", token="tok"))
        again = await unary.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=ask_id, id="c1"))
        out["push"] = {"made": [made.id, made.url], "got": [again.id, again.url, again.token]}
        try:
            await unary.get_task(GetTaskRequest(id="no-such-task"))
            out["missing"] = "found"
        except Exception as exc:  # the SDK's own error type for a missing task
            out["missing"] = type(exc).__name__
    finally:
        await unary.close()
        await streaming.close()
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
