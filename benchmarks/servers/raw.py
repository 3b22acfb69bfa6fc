"""The raw ceiling: the least work an HTTP JSON-RPC A2A endpoint can do on this stack.

Served by uvicorn exactly like the servers under test (uvloop, httptools, one worker, no
access log), so the gap between this app and a real server is the cost of the A2A layer.

``POST /`` (unary ceiling)
    Decodes the body with msgspec into a minimal typed request (``id``, ``method`` and the
    text of the first message part; nothing else is validated), then returns a v1.0
    ``SendMessage`` result: a completed task (fixed ids, status ``TASK_STATE_COMPLETED``)
    holding one artifact whose single text part echoes the request text. The response is
    encoded with msgspec from a small Struct per request; no store, no events, no locking.

``POST /stream`` (SSE ceiling)
    Decodes the body the same way, then sends ``text/event-stream`` with
    ``STREAM_CHUNKS + 2`` events: the submitted task, ``STREAM_CHUNKS`` artifact-update
    chunks, and the final completed status update, each a v1.0 ``SendStreamingMessage``
    JSON-RPC response. Every event is encoded once, apart from the request id: per event
    the app only joins the id into the pre-encoded bytes and writes the result, one ASGI
    send per event, as a real server emitting events one by one would. The message text
    ``stream N`` asks for N chunks instead (their events are encoded on the first such
    request and kept); the text ``idle`` gets the submitted task and one ``working``
    status update, then the stream stays open, sending nothing, until the client leaves.

``POST /stream-coalescing`` (coalescing SSE ceiling)
    The same events for the same texts, passed through an ``asyncio.Queue``: a producer
    task joins the id into each pre-encoded event and awaits ``put`` for it, one by one;
    the writer, after each ``await get()``, also takes everything ``get_nowait()``
    returns and writes it all in one ASGI send. That is the least a server that writes
    what is ready together (as interlingua does) can do, where ``/stream`` is the least a
    server writing each event on its own can do. The queue is unbounded, so ``put``
    never suspends: the producer has put the whole stream before the writer wakes, and
    a stream of pre-encoded events leaves in one send.

``GET /healthz``
    ``{"status": "ok", "server": "raw"}``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgspec
from echo_modes import IDLE_TEXT, STREAM_CHUNKS, chunks_asked, wait_forever
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

TASK_ID = "raw-task"
CONTEXT_ID = "raw-context"


class _Part(msgspec.Struct):
    text: str = ""


class _Message(msgspec.Struct):
    parts: list[_Part] = []


class _Params(msgspec.Struct):
    message: _Message = msgspec.field(default_factory=_Message)


class _Request(msgspec.Struct):
    id: int | str | None = None
    method: str = ""
    params: _Params = msgspec.field(default_factory=_Params)


class _OutPart(msgspec.Struct):
    text: str


class _Artifact(msgspec.Struct, rename="camel"):
    artifact_id: str
    parts: list[_OutPart]


class _Status(msgspec.Struct):
    state: str


class _Task(msgspec.Struct, rename="camel"):
    id: str
    context_id: str
    status: _Status
    artifacts: list[_Artifact]


class _TaskResult(msgspec.Struct):
    task: _Task


class _Response(msgspec.Struct, kw_only=True):
    jsonrpc: str = "2.0"
    id: int | str | None
    result: _TaskResult


_decoder = msgspec.json.Decoder(_Request)
_encoder = msgspec.json.Encoder()
_COMPLETED = _Status(state="TASK_STATE_COMPLETED")


def _request_text(req: _Request) -> str:
    parts = req.params.message.parts
    return parts[0].text if parts else ""


async def unary(request: Request) -> Response:
    req = _decoder.decode(await request.body())
    task = _Task(
        id=TASK_ID,
        context_id=CONTEXT_ID,
        status=_COMPLETED,
        artifacts=[_Artifact(artifact_id="a-0", parts=[_OutPart(text=_request_text(req))])],
    )
    body = _encoder.encode(_Response(id=req.id, result=_TaskResult(task=task)))
    return Response(body, media_type="application/json")


def _event_tail(result: object) -> bytes:
    # Everything after the request id, so an event is `head + id + tail`.
    return b',"result":' + _encoder.encode(result) + b"}\n\n"


_IDS = {"taskId": TASK_ID, "contextId": CONTEXT_ID}
_SUBMITTED_TAIL = _event_tail(
    {"task": {"id": TASK_ID, "contextId": CONTEXT_ID, "status": {"state": "TASK_STATE_SUBMITTED"}}}
)


def _stream_tails(chunks: int) -> list[bytes]:
    tails = [_SUBMITTED_TAIL]
    for n in range(chunks):
        artifact = {"artifactId": "a-0", "parts": [{"text": f"chunk {n:04d} "}]}
        update = {**_IDS, "artifact": artifact, "append": n > 0, "lastChunk": n == chunks - 1}
        tails.append(_event_tail({"artifactUpdate": update}))
    tails.append(
        _event_tail({"statusUpdate": {**_IDS, "status": {"state": "TASK_STATE_COMPLETED"}}})
    )
    return tails


_EVENT_HEAD = b'data: {"jsonrpc":"2.0","id":'
_STREAM_TAILS: dict[int, list[bytes]] = {STREAM_CHUNKS: _stream_tails(STREAM_CHUNKS)}
_IDLE_TAILS = [
    _SUBMITTED_TAIL,
    _event_tail(
        {
            "statusUpdate": {
                **_IDS,
                "status": {
                    "state": "TASK_STATE_WORKING",
                    "message": {
                        "messageId": "raw-idle",
                        "role": "ROLE_AGENT",
                        "parts": [{"text": IDLE_TEXT}],
                    },
                },
            }
        }
    ),
]


def _tails_for(text: str) -> list[bytes]:
    """The events a streaming request with this text gets (``stream N``: N chunks)."""
    chunks = chunks_asked(text) or STREAM_CHUNKS
    tails = _STREAM_TAILS.get(chunks)
    if tails is None:
        tails = _STREAM_TAILS[chunks] = _stream_tails(chunks)
    return tails


async def stream(request: Request) -> Response:
    req = _decoder.decode(await request.body())
    head = _EVENT_HEAD + _encoder.encode(req.id)
    text = _request_text(req)
    idle = text == IDLE_TEXT
    tails = _IDLE_TAILS if idle else _tails_for(text)

    async def events() -> AsyncIterator[bytes]:
        for tail in tails:
            yield head + tail
        if idle:
            # Starlette cancels this when the client disconnects.
            await wait_forever()

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )


async def stream_coalescing(request: Request) -> Response:
    req = _decoder.decode(await request.body())
    head = _EVENT_HEAD + _encoder.encode(req.id)
    text = _request_text(req)
    idle = text == IDLE_TEXT
    tails = _IDLE_TAILS if idle else _tails_for(text)
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def produce() -> None:
        for tail in tails:
            await queue.put(head + tail)
        if idle:
            await wait_forever()
        await queue.put(None)  # the end of the stream

    async def events() -> AsyncIterator[bytes]:
        producer = asyncio.create_task(produce())
        try:
            while True:
                item = await queue.get()
                batch: list[bytes] = []
                while item is not None:
                    batch.append(item)
                    if queue.empty():
                        break
                    item = queue.get_nowait()
                if batch:
                    yield b"".join(batch)
                if item is None:
                    return
        finally:
            # Starlette closes this generator when the client leaves mid-stream.
            producer.cancel()

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )


async def healthz(request: Request) -> Response:
    return Response(b'{"status":"ok","server":"raw"}', media_type="application/json")


app = Starlette(
    routes=[
        Route("/", unary, methods=["POST"]),
        Route("/stream", stream, methods=["POST"]),
        Route("/stream-coalescing", stream_coalescing, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]
)
