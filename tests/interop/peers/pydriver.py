"""The command loop of the Python SDK client drivers (run inside an SDK venv).

A driver reads one JSON command per line on stdin, ``{"id": 1, "op": "send",
"args": {...}}``, carries it out with the official SDK's client, and answers
on stdout with one line ``@@interop {"id": 1, "ok": true, "result": ...}``
(or ``"ok": false, "error": {"type", "message", "code"}``). Lines without the
prefix are never answers, so whatever a library prints cannot be mistaken for
one. The first answer line, ``{"ready": true}``, says the driver is up.

Commands (every driver, Python and JavaScript, answers the same ones):

    card {url?}            the card at url (default: the agent's), read by the SDK
    info {}                the SDK transport the client was built with
    send {text, data?, file?, taskId?, contextId?, returnImmediately?}   a task or message
    stream {same as send}  {"events": [...]}
    subscribe {taskId, cancelAfterFirst?}   {"events": [...], "cancel": task|None}
    get {taskId, historyLength?} / cancel {taskId}   a task
    push_set {taskId, id, url, token} / push_get {taskId, id}   a push config

Results are normalized to one shape shared by every driver, so the tests
check what each SDK parsed with the same code:

    part      {"text": s} | {"data": v} | {"file": {"bytes": b64|None, "uri": s|None,
                                                    "mediaType": s, "name": s}}
    task      {"kind": "task", "id", "contextId", "state", "statusMessage": [part]|None,
               "artifacts": [{"artifactId", "name", "parts"}],
               "history": [{"role", "messageId", "parts"}]}
    message   {"kind": "message", "role", "messageId", "taskId", "contextId", "parts"}
    status    {"kind": "status", "taskId", "contextId", "state", "message": [part]|None}
    artifact  {"kind": "artifact", "taskId", "artifact": {...}, "append", "lastChunk"}
    push      {"id", "taskId", "url", "token"}

States are passed through as each SDK names them; the tests normalize them.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

PREFIX = "@@interop "

Handler = Callable[[dict[str, Any]], Awaitable[Any]]


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(PREFIX + json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def error_of(exc: BaseException) -> dict[str, Any]:
    code = None
    for holder in (exc, getattr(exc, "error", None), getattr(exc, "__cause__", None)):
        value = getattr(holder, "code", None)
        if isinstance(value, int):
            code = value
            break
    return {"type": type(exc).__name__, "message": str(exc)[:2000], "code": code}


async def serve(handlers: dict[str, Handler]) -> None:
    loop = asyncio.get_running_loop()
    emit({"ready": True})
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        if not line.strip():
            continue
        cmd = json.loads(line)
        handler = handlers.get(cmd["op"])
        if handler is None:
            emit({"id": cmd["id"], "ok": False,
                  "error": {"type": "UnknownOp", "message": cmd["op"], "code": None}})
            continue
        try:
            result = await asyncio.wait_for(handler(cmd.get("args") or {}), 60)
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            emit({"id": cmd["id"], "ok": False, "error": error_of(exc)})
        else:
            emit({"id": cmd["id"], "ok": True, "result": result})
