"""The echo agents of the benchmarks, served over gRPC only (``lf.a2a.v1.A2AService``).

    python grpc_echo.py interlingua     # in the project venv
    python grpc_echo.py a2a-sdk         # in a venv with a2a-sdk[grpc] 1.x
    python grpc_echo.py floor           # in the project venv

Each listens on a free loopback port, prints ``PORT <n>`` once it does, and
serves until it is terminated. The agents are the ones of the HTTP benchmarks
(``interlingua_echo.py``, ``a2a_sdk_echo.py``: same executors, in-memory
stores); interlingua runs ``add_grpc`` in its app's lifespan, the SDK its own
``GrpcHandler`` on a ``grpc.aio`` server. ``floor`` is the ceiling of the
comparison, as ``raw.py`` is for HTTP: a bare ``grpc.aio`` server that answers
``SendMessage`` with a canned completed task echoing ``hello`` and a streaming
send with a canned stream (the task, 200 artifact chunks, completed), all
serialized once at start-up: what gRPC itself costs. All on the default
asyncio loop.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any


async def _interlingua() -> None:
    from interlingua_echo import build_app

    from interlingua.bindings.grpc import add_grpc

    # BENCH_SUBMIT_GRACE: stretched under valgrind (grpc_instructions.py), as there
    grace = os.environ.get("BENCH_SUBMIT_GRACE")
    app = build_app("memory://", "http://127.0.0.1:1/", float(grace) if grace else None)
    server = add_grpc(app, "127.0.0.1:0")
    async with app.router.lifespan_context(app):
        print(f"PORT {server.port}", flush=True)
        await _until_terminated()


async def _a2a_sdk() -> None:
    import grpc
    from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import a2a_pb2_grpc
    from a2a_sdk_echo import EchoExecutor, agent_card

    card = agent_card("http://127.0.0.1:1/")
    handler = DefaultRequestHandler(agent_executor=EchoExecutor(),
                                    task_store=InMemoryTaskStore(), agent_card=card)
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"PORT {port}", flush=True)
    try:
        await _until_terminated()
    finally:
        await server.stop(1)


async def _floor() -> None:
    import grpc

    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb

    def status(state: int) -> pb.TaskStatus:
        return pb.TaskStatus(state=state)

    answer = pb.SendMessageResponse(task=pb.Task(
        id="t", context_id="c", status=status(pb.TASK_STATE_COMPLETED),
        artifacts=[pb.Artifact(artifact_id="a", parts=[pb.Part(text="hello")])],
    )).SerializeToString()
    events = [pb.StreamResponse(task=pb.Task(id="t", context_id="c",
                                             status=status(pb.TASK_STATE_SUBMITTED)))]
    events += [pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
        task_id="t", context_id="c", append=n > 0,
        artifact=pb.Artifact(artifact_id="a", parts=[pb.Part(text=f"chunk {n:04d} ")])))
        for n in range(200)]
    events.append(pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=status(pb.TASK_STATE_COMPLETED))))
    stream = [e.SerializeToString() for e in events]

    async def unary(request: bytes, context: Any) -> bytes:
        return answer

    async def streaming(request: bytes, context: Any) -> Any:
        for event in stream:
            yield event

    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "lf.a2a.v1.A2AService", {
            "SendMessage": grpc.unary_unary_rpc_method_handler(unary),
            "SendStreamingMessage": grpc.unary_stream_rpc_method_handler(streaming)})])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"PORT {port}", flush=True)
    try:
        await _until_terminated()
    finally:
        await server.stop(1)


async def _until_terminated() -> None:
    stop: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
    await stop


if __name__ == "__main__":
    asyncio.run({"interlingua": _interlingua, "a2a-sdk": _a2a_sdk, "floor": _floor}[sys.argv[1]]())
