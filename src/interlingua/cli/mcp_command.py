"""``interlingua mcp URL``: an A2A agent's skills as the tools of an MCP server."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import click

from ..client.bindings import BINDINGS
from .errors import cannot_listen, fail
from .headers import parse_headers
from .seconds import Seconds
from .security_options import (
    client_kwargs,
    insecure_interfaces_option,
    tls_client_options,
    usable_binding,
)
from .urls import check_agent_url

__all__ = ["mcp_command"]


@click.command("mcp")
@click.argument("url", callback=check_agent_url)
@click.option("--http", "http", is_flag=True,
              help="Serve MCP over streamable HTTP (at /mcp) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --http: interface.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="With --http: port.")
@click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
              help="An HTTP header to send to the A2A agent (repeatable), e.g. credentials.")
@click.option("--dialect", type=click.Choice(["1.1", "1.0", "0.3", "0.1"]), default=None,
              help="Speak this A2A dialect to URL as an endpoint (JSON-RPC unless --binding "
                   "says otherwise), without reading the card for it.")
@click.option("--binding", type=click.Choice(list(BINDINGS)), default=None, is_eager=True,
              help="Use this binding only (default: the card's choice).")
@click.option("--timeout", type=Seconds(min=0, min_open=True), default=60.0,
              show_default=True, help="Seconds to wait for the agent's answer to a tool call.")
@click.option("--insecure", is_flag=True, help="Do not verify the agent's TLS certificate.")
@tls_client_options
@insecure_interfaces_option
def mcp_command(url: str, http: bool, host: str, port: int, headers: tuple[str, ...],
                dialect: str | None, binding: str | None, timeout: float,
                insecure: bool) -> None:
    """Serve the A2A agent at URL as an MCP server: one tool per skill.

    Over stdio by default (for MCP clients that launch it); nothing but MCP is
    written to stdout. The client options are those of the other client commands.
    """
    header_map = parse_headers(headers)
    usable_binding(binding, dialect)
    options: dict[str, Any] = {"headers": header_map, "timeout": timeout,
                               "dialect": dialect, "binding": binding,
                               **client_kwargs(insecure)}
    # The MCP server logs at INFO to stderr, where an MCP client shows it: not a
    # line for each request this bridge makes to the agent.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        from ..adapters.mcp import mcp_server
    except ImportError as exc:
        raise click.UsageError(str(exc)) from None
    from ..client import ClientError
    from ..client.errors import AgentUnreachable, CardNotOffered

    sock = _listening(host, port) if http else None

    async def main() -> Any:
        try:
            server = await mcp_server(url, **options)
        except ValueError as exc:  # what the address allows (a gRPC one, gRPC alone)
            raise click.UsageError(str(exc)) from None
        except ClientError as exc:
            # as ``card`` says it: 3 when nothing answered, 1 when something did
            hint = (", or with --dialect 1.0 call it without one"
                    if isinstance(exc, CardNotOffered) and dialect is None else "")
            fail(f"cannot read the agent's card at {url}: {exc}{hint}",
                 3 if isinstance(exc, AgentUnreachable) else 1)
        if sock is None:
            serving.append(True)
            await server.run_stdio_async()
        return server

    serving: list[bool] = []
    try:
        server = asyncio.run(main())
    except KeyboardInterrupt:
        if serving:  # a server stopped, as serve stops
            return
        # while the card was read: a client command interrupted, as the others say it
        fail("interrupted", 130)
    if sock is not None:
        _serve_http(server, sock, url, host)


def _listening(host: str, port: int) -> socket.socket:
    """The port, held before anything else: a taken one is one line (exit 2), as for
    ``serve``, ``gateway``, ``listen`` and ``inspect``."""
    from .serve import bind

    try:
        return bind(host, port)
    except OSError as exc:
        fail(cannot_listen(host, port, exc), 2)


def _serve_http(server: Any, sock: socket.socket, url: str, host: str) -> None:
    """MCP over streamable HTTP at /mcp, on ``sock``, with serve's bounds on a connection."""
    import uvicorn

    from ..server.connections import uvicorn_connection_options
    from .prompt_server import PromptServer

    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"MCP (streamable HTTP) for {url} on http://{shown}:{bound}/mcp", err=True)
    config = uvicorn.Config(server.streamable_http_app(host=host), log_level="warning",
                            lifespan="on", **uvicorn_connection_options())
    try:
        PromptServer(config).run(sockets=[sock])
    finally:
        sock.close()
