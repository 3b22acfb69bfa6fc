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

The other frameworks' client scripts (``*_client.py``, through ``script``) answer
one command instead: ``run {argv}``, ``{"lines": [...]}``, one run as by hand.

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
import inspect
import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

PREFIX = "@@interop "

Handler = Callable[[dict[str, Any]], Awaitable[Any]]

#: a peer client script's work: its command line's arguments -> the JSON lines it prints
Run = Callable[[list[str]], Any]


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


async def _run_once(run: Run, argv: list[str]) -> list[Any]:
    try:
        if inspect.iscoroutinefunction(run):
            return list(await run(argv))
        # a synchronous client may start event loops of its own: not on the loop's thread
        return list(await asyncio.to_thread(run, argv))
    except SystemExit as exc:
        # argparse's refusal ends this call, not the command loop
        raise ValueError(f"bad arguments {argv}: exit {exc.code}") from None


def script(run: Run) -> None:
    """The entry point of a peer client script (``*_client.py``).

    By hand, ``run`` is called once on the command line's arguments and each line it
    gives is printed as JSON. With ``--serve`` alone it serves the command loop above:
    ``run {"argv": [...]}`` calls it with those arguments, as a run by hand would, and
    answers ``{"lines": [...]}``; the peer's imports are paid once for many calls, and
    each call builds its client objects anew.
    """
    argv = sys.argv[1:]
    if argv == ["--serve"]:
        async def handle(args: dict[str, Any]) -> dict[str, Any]:
            return {"lines": await _run_once(run, [str(a) for a in args["argv"]])}

        asyncio.run(serve({"run": handle}))
        return
    lines = asyncio.run(run(argv)) if inspect.iscoroutinefunction(run) else run(argv)
    for line in lines:
        print(json.dumps(line), flush=True)
