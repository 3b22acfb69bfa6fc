"""Driver: the official Python SDK 1.x client (``a2a-sdk`` 1.x) against an agent.

    python py_client_v1.py AGENT_URL [--dialect 1.0|0.3] [--binding JSONRPC|HTTP+JSON|GRPC]

Runs with the interpreter of an ``a2a-sdk`` 1.x venv (gRPC: with its ``grpc``
extra). The client is built the way the SDK documents it: the card is read
with ``A2ACardResolver`` and the client made by ``ClientFactory``, told to use
the binding. With ``--dialect 0.3`` the card's v1.0 interfaces are dropped
first, so the factory picks the SDK's own v0.3 compatibility transport.
Commands and result shapes: ``pydriver.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import uuid
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf import json_format, struct_pb2
from pydriver import serve


def norm_parts(parts: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in parts:
        kind = p.WhichOneof("content")
        if kind == "text":
            out.append({"text": p.text})
        elif kind == "data":
            out.append({"data": json_format.MessageToDict(p.data)})
        elif kind == "raw":
            out.append({"file": {"bytes": base64.b64encode(p.raw).decode(), "uri": None,
                                 "mediaType": p.media_type, "name": p.filename}})
        elif kind == "url":
            out.append({"file": {"bytes": None, "uri": p.url,
                                 "mediaType": p.media_type, "name": p.filename}})
        else:
            out.append({"unknown": str(kind)})
    return out


def norm_message(m: Message) -> dict[str, Any]:
    return {"kind": "message", "role": Role.Name(m.role), "messageId": m.message_id,
            "taskId": m.task_id, "contextId": m.context_id, "parts": norm_parts(m.parts)}


def norm_artifact(a: Any) -> dict[str, Any]:
    return {"artifactId": a.artifact_id, "name": a.name, "parts": norm_parts(a.parts)}


def norm_task(t: Any) -> dict[str, Any]:
    return {
        "kind": "task",
        "id": t.id,
        "contextId": t.context_id,
        "state": TaskState.Name(t.status.state),
        "statusMessage": norm_parts(t.status.message.parts) if t.status.HasField("message")
        else None,
        "artifacts": [norm_artifact(a) for a in t.artifacts],
        "history": [{"role": Role.Name(m.role), "messageId": m.message_id,
                     "parts": norm_parts(m.parts)} for m in t.history],
    }


def norm_event(ev: StreamResponse) -> dict[str, Any]:
    kind = ev.WhichOneof("payload")
    if kind == "task":
        return norm_task(ev.task)
    if kind == "message":
        return norm_message(ev.message)
    if kind == "status_update":
        s = ev.status_update
        return {"kind": "status", "taskId": s.task_id, "contextId": s.context_id,
                "state": TaskState.Name(s.status.state),
                "message": norm_parts(s.status.message.parts)
                if s.status.HasField("message") else None}
    if kind == "artifact_update":
        a = ev.artifact_update
        return {"kind": "artifact", "taskId": a.task_id, "artifact": norm_artifact(a.artifact),
                "append": a.append, "lastChunk": a.last_chunk}
    return {"kind": str(kind)}


def norm_push(c: TaskPushNotificationConfig) -> dict[str, Any]:
    return {"id": c.id, "taskId": c.task_id, "url": c.url, "token": c.token}


def norm_card(card: AgentCard) -> dict[str, Any]:
    return {
        "name": card.name,
        "version": card.version,
        "interfaces": [{"url": i.url, "binding": i.protocol_binding,
                        "version": i.protocol_version} for i in card.supported_interfaces],
        "streaming": card.capabilities.streaming,
        "pushNotifications": card.capabilities.push_notifications,
        "inputModes": list(card.default_input_modes),
        "outputModes": list(card.default_output_modes),
        "skills": [{"id": s.id, "name": s.name, "tags": list(s.tags)} for s in card.skills],
        "provider": card.provider.organization if card.HasField("provider") else None,
        "documentationUrl": card.documentation_url,
        "iconUrl": card.icon_url,
        "extensions": [e.uri for e in card.capabilities.extensions],
        "securitySchemes": {name: s.WhichOneof("scheme")
                            for name, s in card.security_schemes.items()},
        "security": [sorted(r.schemes.keys()) for r in card.security_requirements],
    }


def user_message(args: dict[str, Any]) -> Message:
    parts = [Part(text=args["text"])]
    if args.get("data") is not None:
        value = struct_pb2.Value()
        json_format.ParseDict(args["data"], value)
        parts.append(Part(data=value))
    if args.get("file"):
        f = args["file"]
        parts.append(Part(raw=base64.b64decode(f["bytes"]), media_type=f["mediaType"],
                          filename=f["name"]))
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=parts,
                   task_id=args.get("taskId") or "", context_id=args.get("contextId") or "")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--dialect", default="1.0")
    ap.add_argument("--binding", default="JSONRPC", help="JSONRPC, HTTP+JSON or GRPC")
    opts = ap.parse_args()

    http = httpx.AsyncClient(timeout=30)
    card = await A2ACardResolver(http, opts.url).get_agent_card()
    if opts.dialect == "0.3":
        keep = [i for i in card.supported_interfaces if i.protocol_version.startswith("0.3")]
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)
    def config(streaming: bool) -> ClientConfig:
        extra: dict[str, Any] = {}
        if opts.binding == "GRPC":
            import grpc  # the grpc extra; only gRPC drivers need it

            extra["grpc_channel_factory"] = grpc.aio.insecure_channel
        return ClientConfig(streaming=streaming, supported_protocol_bindings=[opts.binding],
                            **extra)

    unary = ClientFactory(config(False)).create(card)
    streaming = ClientFactory(config(True)).create(card)

    async def op_card(args: dict[str, Any]) -> Any:
        fresh = await A2ACardResolver(http, args.get("url") or opts.url).get_agent_card()
        return norm_card(fresh)

    async def op_info(args: dict[str, Any]) -> Any:
        return {"transport": type(unary._transport).__name__}

    async def op_send(args: dict[str, Any]) -> Any:
        req = SendMessageRequest(
            message=user_message(args),
            configuration=SendMessageConfiguration(
                return_immediately=bool(args.get("returnImmediately"))),
        )
        results = [ev async for ev in unary.send_message(req)]
        return norm_event(results[-1])

    async def op_stream(args: dict[str, Any]) -> Any:
        req = SendMessageRequest(message=user_message(args))
        return {"events": [norm_event(ev) async for ev in streaming.send_message(req)]}

    async def op_subscribe(args: dict[str, Any]) -> Any:
        # With cancelAfterFirst the task is canceled (another call) once the
        # subscription has its first event; the subscription then sees it end.
        events: list[dict[str, Any]] = []
        cancelled = None
        async for ev in streaming.subscribe(SubscribeToTaskRequest(id=args["taskId"])):
            events.append(norm_event(ev))
            if len(events) == 1 and args.get("cancelAfterFirst"):
                cancelled = norm_task(await unary.cancel_task(CancelTaskRequest(id=args["taskId"])))
        return {"events": events, "cancel": cancelled}

    async def op_get(args: dict[str, Any]) -> Any:
        req = GetTaskRequest(id=args["taskId"])
        if args.get("historyLength") is not None:
            req.history_length = args["historyLength"]
        return norm_task(await unary.get_task(req))

    async def op_cancel(args: dict[str, Any]) -> Any:
        return norm_task(await unary.cancel_task(CancelTaskRequest(id=args["taskId"])))

    async def op_push_set(args: dict[str, Any]) -> Any:
        cfg = TaskPushNotificationConfig(task_id=args["taskId"], id=args.get("id") or "",
                                         url=args["url"], token=args.get("token") or "")
        return norm_push(await unary.create_task_push_notification_config(cfg))

    async def op_push_get(args: dict[str, Any]) -> Any:
        req = GetTaskPushNotificationConfigRequest(task_id=args["taskId"], id=args["id"])
        return norm_push(await unary.get_task_push_notification_config(req))

    try:
        await serve({
            "card": op_card, "info": op_info, "send": op_send, "stream": op_stream,
            "subscribe": op_subscribe, "get": op_get, "cancel": op_cancel,
            "push_set": op_push_set, "push_get": op_push_get,
        })
    finally:
        await unary.close()
        await streaming.close()
        await http.aclose()


if __name__ == "__main__":
    asyncio.run(main())
