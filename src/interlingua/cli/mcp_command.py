"""``interlingua mcp URL``: an A2A agent's skills as the tools of an MCP server."""

from __future__ import annotations

import asyncio
import logging
import sys

import click

from .headers import parse_headers
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
def mcp_command(url: str, http: bool, host: str, port: int, headers: tuple[str, ...]) -> None:
    """Serve the A2A agent at URL as an MCP server: one tool per skill.

    Over stdio by default (for MCP clients that launch it); nothing but MCP is
    written to stdout.
    """
    header_map = parse_headers(headers)
    # The MCP server logs at INFO to stderr, where an MCP client shows it: not a
    # line for each request this bridge makes to the agent.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        from ..adapters.mcp import mcp_server
    except ImportError as exc:
        raise click.UsageError(str(exc)) from None
    from ..client import ClientError

    async def main() -> None:
        try:
            server = await mcp_server(url, headers=header_map)
        except ClientError as exc:
            click.echo(f"error: cannot read the agent's card at {url}: {exc}", err=True)
            sys.exit(3)
        if http:
            click.echo(f"MCP (streamable HTTP) for {url} on http://{host}:{port}/mcp", err=True)
            await server.run_streamable_http_async(host=host, port=port)
        else:
            await server.run_stdio_async()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
