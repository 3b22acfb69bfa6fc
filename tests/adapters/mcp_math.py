"""A small MCP server for the tests: over stdio when run, in process when imported."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer(name="Math")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Says it louder."""
    return text.upper()


@server.tool()
def divide(a: float, b: float) -> float:
    """Divides a by b."""
    if b == 0:
        raise ToolError("cannot divide by zero")
    return a / b


if __name__ == "__main__":
    server.run()
