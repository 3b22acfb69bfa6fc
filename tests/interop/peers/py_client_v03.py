"""Driver: the official Python SDK 0.3 client (``a2a-sdk`` 0.3.x) against an agent.

    python py_client_v03.py AGENT_URL [--binding JSONRPC|HTTP+JSON|GRPC]

Runs with the interpreter of an ``a2a-sdk`` 0.3.x venv (gRPC: with its
``grpc`` extra), which speaks only the v0.2/v0.3 dialect. The card is read
with ``A2ACardResolver`` (which validates it against the SDK's pydantic
model) and the client made by ``ClientFactory``, told to prefer the binding.
Commands and result shapes: ``pydriver.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskStatusUpdateEvent,
    TextPart,
    TransportProtocol,
)
from pydriver import serve


def norm_parts(parts: list[Part] | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in parts or []:
        r = p.root
        if isinstance(r, TextPart):
            out.append({"text": r.text})
        elif isinstance(r, DataPart):
            out.append({"data": r.data})
        elif isinstance(r, FilePart):
            f = r.file
            if isinstance(f, FileWithBytes):
                out.append({"file": {"bytes": f.bytes, "uri": None, "mediaType": f.mime_type,
                                     "name": f.name}})
            elif isinstance(f, FileWithUri):
                out.append({"file": {"bytes": None, "uri": f.uri, "mediaType": f.mime_type,
                                     "name": f.name}})
        else:
            out.append({"unknown": type(r).__name__})
    return out


def norm_artifact(a: Artifact) -> dict[str, Any]:
    return {"artifactId": a.artifact_id, "name": a.name, "parts": norm_parts(a.parts)}


def norm_message(m: Message) -> dict[str, Any]:
    return {"kind": "message", "role": m.role.value, "messageId": m.message_id,
            "taskId": m.task_id, "contextId": m.context_id, "parts": norm_parts(m.parts)}


def norm_task(t: Task) -> dict[str, Any]:
    return {
        "kind": "task",
        "id": t.id,
        "contextId": t.context_id,
        "state": t.status.state.value,
        "statusMessage": norm_parts(t.status.message.parts) if t.status.message else None,
        "artifacts": [norm_artifact(a) for a in t.artifacts or []],
        "history": [{"role": m.role.value, "messageId": m.message_id,
                     "parts": norm_parts(m.parts)} for m in t.history or []],
    }


def norm_update(task: Task, update: Any) -> dict[str, Any]:
    if isinstance(update, TaskStatusUpdateEvent):
        s = update.status
        return {"kind": "status", "taskId": update.task_id, "contextId": update.context_id,
                "state": s.state.value, "final": update.final,
                "message": norm_parts(s.message.parts) if s.message else None}
    if isinstance(update, TaskArtifactUpdateEvent):
        return {"kind": "artifact", "taskId": update.task_id,
                "artifact": norm_artifact(update.artifact), "append": bool(update.append),
                "lastChunk": bool(update.last_chunk)}
    return norm_task(task)


def norm_push(c: TaskPushNotificationConfig) -> dict[str, Any]:
    p = c.push_notification_config
    return {"id": p.id, "taskId": c.task_id, "url": p.url, "token": p.token}


def norm_card(card: AgentCard) -> dict[str, Any]:
    interfaces = [{"url": card.url, "binding": str(card.preferred_transport),
                   "version": card.protocol_version}]
    interfaces += [{"url": i.url, "binding": str(i.transport), "version": card.protocol_version}
                   for i in card.additional_interfaces or []]
    return {
        "name": card.name,
        "version": card.version,
        "interfaces": interfaces,
        "streaming": bool(card.capabilities.streaming),
        "pushNotifications": bool(card.capabilities.push_notifications),
        "inputModes": card.default_input_modes,
        "outputModes": card.default_output_modes,
        "skills": [{"id": s.id, "name": s.name, "tags": s.tags} for s in card.skills],
        "provider": card.provider.organization if card.provider else None,
        "documentationUrl": card.documentation_url,
        "iconUrl": card.icon_url,
        "extensions": [e.uri for e in card.capabilities.extensions or []],
        "securitySchemes": {name: s.root.type for name, s in (card.security_schemes or {}).items()},
        "security": [sorted(r) for r in card.security or []],
    }


def user_message(args: dict[str, Any]) -> Message:
    parts = [Part(root=TextPart(text=args["text"]))]
    if args.get("data") is not None:
        parts.append(Part(root=DataPart(data=args["data"])))
    if args.get("file"):
        f = args["file"]
        parts.append(Part(root=FilePart(file=FileWithBytes(
            bytes=f["bytes"], mime_type=f["mediaType"], name=f["name"]))))
    return Message(message_id=str(uuid.uuid4()), role=Role.user, parts=parts,
                   task_id=args.get("taskId"), context_id=args.get("contextId"))


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--binding", default="JSONRPC", help="JSONRPC, HTTP+JSON or GRPC")
    opts = ap.parse_args()

    http = httpx.AsyncClient(timeout=30)
    card = await A2ACardResolver(http, opts.url).get_agent_card()

    def config(streaming: bool) -> ClientConfig:
        extra: dict[str, Any] = {}
        if opts.binding == "GRPC":
            import grpc  # the grpc extra; only gRPC drivers need it

            extra["grpc_channel_factory"] = grpc.aio.insecure_channel
        return ClientConfig(streaming=streaming, httpx_client=http,
                            supported_transports=[TransportProtocol(opts.binding)],
                            use_client_preference=True, **extra)

    unary = ClientFactory(config(False)).create(card)
    streaming = ClientFactory(config(True)).create(card)

    async def op_card(args: dict[str, Any]) -> Any:
        return norm_card(await A2ACardResolver(http, args.get("url") or opts.url).get_agent_card())

    async def op_info(args: dict[str, Any]) -> Any:
        return {"transport": type(unary._transport).__name__}

    async def op_send(args: dict[str, Any]) -> Any:
        config = MessageSendConfiguration(blocking=not args.get("returnImmediately"))
        last: Any = None
        async for ev in unary.send_message(user_message(args), configuration=config):
            last = ev
        if isinstance(last, Message):
            return norm_message(last)
        return norm_task(last[0])

    async def op_stream(args: dict[str, Any]) -> Any:
        events = []
        async for ev in streaming.send_message(user_message(args)):
            events.append(norm_message(ev) if isinstance(ev, Message) else norm_update(*ev))
        return {"events": events}

    async def op_subscribe(args: dict[str, Any]) -> Any:
        # With cancelAfterFirst the task is canceled (another call) once the
        # subscription has its first event; the subscription then sees it end.
        events: list[dict[str, Any]] = []
        cancelled = None
        async for task, update in streaming.resubscribe(TaskIdParams(id=args["taskId"])):
            events.append(norm_update(task, update))
            if len(events) == 1 and args.get("cancelAfterFirst"):
                cancelled = norm_task(await unary.cancel_task(TaskIdParams(id=args["taskId"])))
        return {"events": events, "cancel": cancelled}

    async def op_get(args: dict[str, Any]) -> Any:
        params = TaskQueryParams(id=args["taskId"], history_length=args.get("historyLength"))
        return norm_task(await unary.get_task(params))

    async def op_cancel(args: dict[str, Any]) -> Any:
        return norm_task(await unary.cancel_task(TaskIdParams(id=args["taskId"])))

    async def op_push_set(args: dict[str, Any]) -> Any:
        cfg = TaskPushNotificationConfig(
            task_id=args["taskId"],
            push_notification_config=PushNotificationConfig(
                id=args.get("id"), url=args["url"], token=args.get("token")),
        )
        return norm_push(await unary.set_task_callback(cfg))

    async def op_push_get(args: dict[str, Any]) -> Any:
        params = GetTaskPushNotificationConfigParams(id=args["taskId"],
                                                     push_notification_config_id=args["id"])
        return norm_push(await unary.get_task_callback(params))

    try:
        await serve({
            "card": op_card, "info": op_info, "send": op_send, "stream": op_stream,
            "subscribe": op_subscribe, "get": op_get, "cancel": op_cancel,
            "push_set": op_push_set, "push_get": op_push_get,
        })
    finally:
        await http.aclose()


if __name__ == "__main__":
    asyncio.run(main())
