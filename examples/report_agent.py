"""A long-running agent that tells its client by webhook when it is done.

The scenario of the v0.1 spec's push notification example:
a client asks for the Q1 sales report, which "usually takes a while", and
gives a webhook; the agent accepts the task at once, works, and POSTs a
notification to the webhook when the report is ready. The client then
fetches the task with its artifact.

Webhooks must be public HTTPS by default (the SSRF guard). Run as a script,
this agent allows plain-http webhooks on the loopback interface, for a
receiver on the same machine::

    python examples/report_agent.py --port 8000
    python examples/report_client.py http://127.0.0.1:8000/

``REPORT_SECONDS`` sets how long the report takes (default 3).
"""

import argparse
import asyncio
import os

from interlingua import Agent, AgentSkill, Context

SECONDS = float(os.environ.get("REPORT_SECONDS", "3"))


async def report(ctx: Context) -> None:
    quarter = "Q1" if "q1" in ctx.text.lower() or not ctx.text else ctx.text.split()[0]
    await ctx.update(f"Gathering the {quarter} sales figures...")
    await asyncio.sleep(SECONDS / 2)
    await ctx.update("Writing the report...")
    await asyncio.sleep(SECONDS / 2)
    report = (
        f"# {quarter} sales report\n\n"
        "| region | revenue |\n|---|---|\n| North | 1.2M |\n| South | 0.9M |\n"
    )
    await ctx.complete(f"{quarter} sales report generated successfully.",
                       artifact=report, name="sales-report.md")


agent = Agent(
    name="Report generator",
    description="Generates sales reports; they take a while, so it notifies by webhook.",
    executor=report,
    push_notifications=True,
    skills=[
        AgentSkill(
            id="sales-report",
            name="Sales report",
            description="A quarterly sales report as Markdown.",
            tags=["reports", "long-running", "push"],
            examples=["Generate the Q1 sales report. Notify me when it's ready."],
        )
    ],
)


def main() -> None:
    import uvicorn

    from interlingua import create_app
    from interlingua.server.push import PushSettings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--store", default="sqlite:///.interlingua/report.db")
    args = parser.parse_args()
    url = f"http://{args.host}:{args.port}"
    # Development settings: webhooks on this machine over plain http.
    push = PushSettings(allow_http=True, allow_hosts=["127.0.0.1", "::1", "localhost"])
    app = create_app(agent, store=args.store, public_url=url, push=push)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
