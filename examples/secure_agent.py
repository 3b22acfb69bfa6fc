"""An agent behind an API key that, mid-task, asks for a second credential.

Callers authenticate with an API key (``X-API-Key``); the card declares it,
and the same ``auth`` object enforces it. Reading the calendar needs the
caller's own calendar token as well: the task goes to ``auth-required``
(v0.1 clients see ``input-required``) with a data part saying what is
needed, and the caller continues the task with a data part carrying it:

    {"credential": {"type": "calendar-token", "token": "..."}}

The token is checked and used, never echoed into the task.

    SECURE_AGENT_API_KEY=... interlingua serve examples/secure_agent.py \\
        --auth examples/secure_agent.py:auth --sign-card
    interlingua send http://localhost:8000 "show my calendar" -H "X-API-Key: ..."
"""

from __future__ import annotations

import hmac
import os

from interlingua import Agent, Context
from interlingua.core.model import DataPart
from interlingua.core.parts import data_parts
from interlingua.server.auth import APIKeyAuth, AuthConfig

#: what the agent asks for, as a data part of its auth-required status
NEEDED = {
    "authenticationRequired": {
        "type": "calendar-token",
        "description": "A token for your calendar service",
        "reply": {"credential": {"type": "calendar-token", "token": "<your token>"}},
    }
}

# Demo data: one token per principal. A real agent would hand the token to the
# calendar service and read the calendar with it.
CALENDAR_TOKENS = {"alice": os.environ.get("ALICE_CALENDAR_TOKEN", "cal-alice-demo-token")}
CALENDARS = {"alice": ["09:00 stand-up", "14:00 design review"]}


def _credential(ctx: Context) -> str | None:
    for part in data_parts(ctx.message):
        data = part.data
        if isinstance(data, dict):
            cred = data.get("credential")
            if isinstance(cred, dict) and cred.get("type") == "calendar-token":
                token = cred.get("token")
                if isinstance(token, str):
                    return token
    return None


async def calendar(ctx: Context) -> None:
    token = _credential(ctx)
    if token is None:
        await ctx.require_auth(["I need your calendar token to read your calendar.",
                                DataPart(data=NEEDED)])
        return
    expected = CALENDAR_TOKENS.get(ctx.principal)
    if expected is None or not hmac.compare_digest(token, expected):
        await ctx.require_auth(["That calendar token was not accepted; send a valid one.",
                                DataPart(data={**NEEDED, "error": "invalid_token"})])
        return
    await ctx.complete("Here is your calendar.",
                       artifact={"events": CALENDARS.get(ctx.principal, [])},
                       name="calendar.json")


agent = Agent("Secure calendar", "Reads your calendar, with your permission.", calendar)


def auth() -> AuthConfig:
    """The callers this agent accepts (the key comes from the environment)."""
    key = os.environ.get("SECURE_AGENT_API_KEY", "dev-only-key-change-me-0123456789")
    return AuthConfig(schemes={"apiKey": APIKeyAuth({"alice": key}, name="X-API-Key")})


if __name__ == "__main__":
    from interlingua.cli.serve import serve
    from interlingua.server.auth import CardSigning

    serve(agent, store="memory://", auth=auth(), card_signing=CardSigning())
