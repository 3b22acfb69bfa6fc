"""Serve an interlingua agent for the official clients: ``serve`` plus test push settings.

    python tests/interop/serve_agent.py tests/interop/agent.py:agent --port PORT

What ``interlingua.cli.serve.serve`` does (memory store, the card naming
``http://127.0.0.1:PORT``, JSON-RPC and HTTP+JSON there, gRPC on a port of
its own that the card names too; ``--no-grpc`` leaves it out, as ADK's
``RemoteA2aAgent`` needs: see docs/grpc.md), except that webhook URLs on loopback over
plain http are accepted: the official clients register push configs that
point at the test session's own receiver.
"""

from __future__ import annotations

import argparse

import uvicorn

from interlingua.bindings.grpc import add_grpc
from interlingua.cli.serve import load_agent, public_url_for
from interlingua.host.app import create_app
from interlingua.server.push.settings import PushSettings


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--offer-1.1", dest="offer_1_1", action="store_true",
                    help="name protocol version 1.1 (draft) on the card's v1.0 interfaces")
    ap.add_argument("--no-grpc", dest="grpc", action="store_false",
                    help="serve JSON-RPC and HTTP+JSON only (no gRPC interface on the card)")
    opts = ap.parse_args()
    app = create_app(
        load_agent(opts.spec),
        store="memory://",
        public_url=public_url_for("127.0.0.1", opts.port),
        push=PushSettings(allow_http=True, allow_private_networks=True, backoff_base=0.2,
                          max_attempts=2),
        offer_1_1=opts.offer_1_1,
    )
    if opts.grpc:
        add_grpc(app, "127.0.0.1:0")
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning", access_log=False,
                timeout_graceful_shutdown=2)


if __name__ == "__main__":
    main()
