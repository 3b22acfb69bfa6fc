"""A multi-turn agent: it asks for what it is missing, then books.

The scenario of the v0.1 spec's multi-turn example: the first message asks
for a flight; the agent answers ``input-required`` with a question; the
user's answer (sent to the same task) completes it with an itinerary.

    interlingua serve examples/flight_booking.py
    interlingua send http://localhost:8000 "I'd like to book a flight."
    interlingua send http://localhost:8000 "From JFK to LHR on October 10th" --task-id <id>
"""

import re

from interlingua import Agent, AgentSkill, Context

AIRPORT = re.compile(r"\b([A-Z]{3})\b")


def _route(text: str) -> tuple[str, str] | None:
    codes = AIRPORT.findall(text)
    if len(codes) >= 2:
        return codes[0], codes[1]
    return None


async def book(ctx: Context) -> None:
    route = _route(ctx.text)
    if route is None:
        await ctx.require_input(
            "Sure, I can help with that! Where would you like to fly to, and from where "
            "(three-letter airport codes, please)? Also, what are your preferred travel dates?"
        )
        return
    origin, destination = route
    await ctx.update("Looking for flights...")
    itinerary = {
        "confirmationId": "XYZ123",
        "from": origin,
        "to": destination,
        "request": ctx.text,
    }
    await ctx.complete(
        f"Okay, I've found a flight from {origin} to {destination}. "
        "Confirmation XYZ123. Details are in the artifact.",
        artifact=itinerary,
        name="FlightItinerary.json",
    )


agent = Agent(
    name="Flight booker",
    description="Books flights; asks for the route and dates when they are missing.",
    executor=book,
    skills=[
        AgentSkill(
            id="book-flight",
            name="Book a flight",
            description="Finds and books a flight between two airports.",
            tags=["travel", "multi-turn"],
            examples=["I'd like to book a flight from JFK to LHR on October 10th."],
        )
    ],
)
