"""Structured data out: the agent answers with JSON in a data part.

The scenario of the v0.1 spec's structured-data example: a request for the
open support tickets returns them as a data artifact.
"""

from interlingua import Agent, Context, data_part

TICKETS = [
    {"ticketId": "IT00123", "summary": "Cannot connect to VPN", "status": "Open",
     "createdDate": "2024-03-14T09:30:00Z"},
    {"ticketId": "IT00125", "summary": "Printer not working on 3rd floor",
     "status": "In Progress", "createdDate": "2024-03-13T15:00:00Z"},
]


async def tickets(ctx: Context) -> None:
    await ctx.artifact(
        data_part(TICKETS, metadata={"mimeType": "application/json"}),
        name="open_support_tickets.json",
        last_chunk=True,
    )
    await ctx.complete()


agent = Agent(
    name="Support tickets",
    description="Lists your open IT support tickets as JSON.",
    executor=tickets,
    output_modes=["application/json"],
)
