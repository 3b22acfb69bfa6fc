"""The interlingua agent the official SDK clients talk to.

Every agent of the interoperability tests (this one and the SDK agents under
``peers/``) behaves the same, chosen by the first word of the message text:

``echo ...``    completes with one artifact, ``echo``, holding the message's
                parts as they arrived (text, data, files);
``stream N``    says ``working`` ("streaming"), sends the artifact
                ``stream.txt`` in N chunks ("chunk 0;" ...; appended, the last
                one marked last) and completes with the message "done";
``slow``        says ``working`` ("waiting") and waits 30 s: a task to cancel;
``book ...``    asks for input ("Where to?"); the answer, sent to the same task,
                completes it with a text artifact ``booking``:
                "<first message> -> <answer>";
``reply ...``   answers with a bare message (no task): "re: <the message text>".

Served with push notifications enabled, so push-config calls reach the engine.

``card_agent`` is only read, never called: its card carries every kind of
metadata a card can (skills, provider, extensions, four kinds of security
scheme and requirements), for the SDKs' card parsers.
"""

from __future__ import annotations

import asyncio

from interlingua import Agent, Context
from interlingua.core.model import (
    AgentExtension,
    AgentProvider,
    AgentSkill,
    APIKeyScheme,
    HTTPAuthScheme,
    OAuth2Scheme,
    OAuthFlow,
    OpenIdConnectScheme,
    Role,
)
from interlingua.core.parts import get_text


async def run(ctx: Context) -> None:
    words = ctx.text.split()
    verb = words[0] if words else ""
    if verb == "stream":
        n = int(words[1]) if len(words) > 1 else 3
        await ctx.update("streaming")
        aid = None
        for i in range(n):
            aid = await ctx.artifact(f"chunk {i};", artifact_id=aid, append=aid is not None,
                                     last_chunk=i == n - 1, name="stream.txt")
        await ctx.complete("done")
    elif verb == "slow":
        await ctx.update("waiting")
        await asyncio.sleep(30)
        await ctx.complete("woke up")
    elif verb == "book":
        await ctx.require_input("Where to?")
    elif verb == "reply":
        await ctx.reply(f"re: {ctx.text}")
    elif ctx.task.history and len(ctx.task.history) > 1:
        # The answer to "Where to?": the task's first user message is the request.
        first = next(m for m in ctx.task.history if m.role is Role.USER)
        await ctx.complete(artifact=f"{get_text(first)} -> {ctx.text}", name="booking")
    else:
        await ctx.complete(artifact=list(ctx.message.parts), name="echo")


agent = Agent(
    "Interop",
    "Echoes, streams, waits and asks, for the interoperability tests.",
    run,
    input_modes=["text/plain", "application/json", "application/octet-stream"],
    output_modes=["text/plain", "application/json", "application/octet-stream"],
    streaming=True,
    push_notifications=True,
)


card_agent = Agent(
    "Interop card",
    "A card with every kind of metadata, for the SDKs' card parsers.",
    run,
    version="2.5.1",
    skills=[
        AgentSkill(id="echo", name="Echo", description="Echoes the parts it is sent.",
                   tags=["echo", "test"], examples=["echo hello"],
                   input_modes=["text/plain", "application/json"],
                   output_modes=["text/plain"], security=[{"bearer": []}]),
        AgentSkill(id="book", name="Book", description="Asks where to, then books.",
                   tags=["multi-turn"]),
    ],
    provider=AgentProvider(organization="Interop Tests", url="https://example.org/interop"),
    input_modes=["text/plain", "application/json"],
    output_modes=["text/plain", "application/json"],
    streaming=True,
    push_notifications=True,
    documentation_url="https://example.org/interop/docs",
    icon_url="https://example.org/interop/icon.png",
    extensions=[AgentExtension(uri="https://example.org/ext/trace/v1",
                               description="Carries a trace id.", required=False,
                               params={"header": "X-Trace"})],
    security_schemes={
        "apiKey": APIKeyScheme(name="X-API-Key", location="header",
                               description="An API key in a header."),
        "bearer": HTTPAuthScheme(scheme="bearer", bearer_format="JWT"),
        "oauth": OAuth2Scheme(flows={"client_credentials": OAuthFlow(
            token_url="https://example.org/oauth/token", scopes={"tasks": "Use tasks"})}),
        "oidc": OpenIdConnectScheme(url="https://example.org/.well-known/openid-configuration"),
    },
    security=[{"bearer": []}, {"oauth": ["tasks"]}],
)
