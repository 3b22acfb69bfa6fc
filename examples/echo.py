"""The smallest agent: it answers with the text it was sent.

    interlingua serve examples/echo.py
    interlingua send http://localhost:8000 "hello"
"""

from interlingua import Agent, AgentSkill


async def echo(text: str) -> str:
    return text


agent = Agent(
    name="Echo",
    description="Answers with the text it was sent.",
    executor=echo,
    skills=[
        AgentSkill(
            id="echo",
            name="Echo",
            description="Sends back the text it receives, unchanged.",
            tags=["echo", "test"],
            examples=["hello"],
        )
    ],
)
