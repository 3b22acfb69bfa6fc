"""An agent with push notifications served in its own process, for the restart tests.

    python -m tests.push.push_server --store sqlite:///path.db --port 8123

Webhooks on 127.0.0.1 over http are allowed; retries come quickly and never
give up during a test.
"""

from __future__ import annotations

import argparse
import asyncio

import uvicorn

from interlingua import Agent, Context, create_app
from interlingua.server.push import PushSettings


async def _work(ctx: Context) -> None:
    if ctx.text == "slow":
        await ctx.update("working slowly")
        await asyncio.sleep(60)
    await ctx.complete(ctx.text.upper(), artifact=f"report for {ctx.text}")


agent = Agent("Pusher", "Pushes its progress.", _work, push_notifications=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    push = PushSettings(allow_http=True, allow_hosts=["127.0.0.1"], backoff_base=0.1,
                        backoff_max=0.3, poll_interval=0.2, max_attempts=100_000, timeout=2.0)
    url = f"http://127.0.0.1:{args.port}"
    app = create_app(agent, store=args.store, public_url=url, push=push)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning",
                timeout_graceful_shutdown=2)


if __name__ == "__main__":
    main()
