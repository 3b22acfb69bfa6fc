"""Peers the bridge and ``RemoteAgent`` are tested against: agents that answer
with files or slowly, an MCP server's image, and agents of other makes (ASGI apps
for ``tests.live.live_server``)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

from interlingua import Agent, Context, file_part

__all__ = ["PNG", "filer", "pictures"]

#: a 1x1 PNG
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8cf0000000301010018dd8db000"
                    "00000049454e44ae426082")


def filer() -> Agent:
    """An agent whose answer is files: a picture inline and a report by URL."""
    async def draw(ctx: Context) -> None:
        await ctx.artifact(file_part(raw=PNG, media_type="image/png", filename="chart.png"),
                           name="chart.png")
        await ctx.complete(artifact=file_part(uri="https://files.example/report.pdf",
                                              media_type="application/pdf",
                                              filename="report.pdf"), name="report")

    return Agent("Filer", "Answers with files.", draw)


def pictures() -> MCPServer:
    """An MCP server whose tool answers with an image."""
    server = MCPServer(name="pictures")

    @server.tool()
    def picture() -> Image:
        """Draws a picture."""
        return Image(data=PNG, format="png")

    return server

