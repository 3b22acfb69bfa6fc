"""The agent of ``py_agent_v03.py`` over the official Python SDK 0.3's gRPC server
(``a2a.v1.A2AService``), for interlingua's gRPC client.

    python py_grpc_agent_v03.py --port PORT --grpc-port GRPC_PORT

Runs with the interpreter of an ``a2a-sdk`` 0.3.x venv (with its grpc extra): the
same executor, task store and push-config store as ``py_agent_v03.py``, served by
the SDK's ``GrpcHandler`` on a ``grpc.aio`` server at 127.0.0.1:GRPC_PORT; the card
(``preferredTransport`` GRPC at that address) is served over HTTP on PORT with the
SDK's JSON-RPC application.
"""

from __future__ import annotations

import argparse
import asyncio

import grpc
import uvicorn
from a2a.grpc import a2a_pb2_grpc
from a2a.server.apps import A2AStarletteApplication
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore
from a2a.types import AgentInterface
from py_agent_v03 import InteropExecutor, agent_card


async def serve(port: int, grpc_port: int) -> None:
    address = f"127.0.0.1:{grpc_port}"
    card = agent_card(address).model_copy(update={
        "preferred_transport": "GRPC",
        "additional_interfaces": [AgentInterface(url=address, transport="GRPC")],
    })
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), server)
    server.add_insecure_port(address)
    await server.start()
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    try:
        await uvicorn.Server(config).serve()
    finally:
        await server.stop(1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--grpc-port", type=int, required=True)
    opts = ap.parse_args()
    asyncio.run(serve(opts.port, opts.grpc_port))


if __name__ == "__main__":
    main()
