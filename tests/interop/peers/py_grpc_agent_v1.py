"""The agent of ``py_agent_v1.py`` over the official Python SDK 1.x's gRPC server
(``lf.a2a.v1.A2AService``), for interlingua's gRPC client.

    python py_grpc_agent_v1.py --port PORT --grpc-port GRPC_PORT

Runs with the interpreter of an ``a2a-sdk`` 1.x venv (with its grpc extra): the
same executor, task store and push-config store as ``py_agent_v1.py``, served by
the SDK's ``GrpcHandler`` on a ``grpc.aio`` server at 127.0.0.1:GRPC_PORT; the card
(naming the gRPC interface first) is served over HTTP on PORT.
"""

from __future__ import annotations

import argparse
import asyncio

import grpc
import uvicorn
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import AgentInterface
from py_agent_v1 import InteropExecutor, agent_card
from starlette.applications import Starlette


async def serve(port: int, grpc_port: int) -> None:
    card = agent_card(f"http://127.0.0.1:{port}/")
    del card.supported_interfaces[:]
    card.supported_interfaces.append(AgentInterface(
        url=f"127.0.0.1:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"))
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    config = uvicorn.Config(Starlette(routes=create_agent_card_routes(card)), host="127.0.0.1",
                            port=port, log_level="warning")
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
