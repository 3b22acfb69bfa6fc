"""A streaming agent: it writes a short story and sends it a piece at a time.

The scenario of the v0.1 spec's streaming example (§9.2): asked for a story
about a curious robot exploring Mars, the agent says it is starting, streams
the artifact ``MarsStory.txt`` in chunks (the first starts it, the others
are appended, the last is marked as the last), and completes with
"The story is complete!".

    interlingua serve examples/story.py
    interlingua stream http://localhost:8000 "Write a very short story about a curious robot exploring Mars."

or from Python::

    from interlingua import ArtifactAssembler, Client

    async with Client("http://localhost:8000") as client:
        assembler = ArtifactAssembler()
        async for event in client.stream("Write me a story"):
            assembler.feed(event)
        print(assembler.text("MarsStory.txt"))
"""

import asyncio

from interlingua import Agent, AgentSkill, Context

#: the story, in the chunks it is sent in
STORY = [
    "Pip was the smallest rover on Mars, and the most curious. ",
    "Every morning it rolled past the rusty dunes to look at things nobody had looked at. ",
    "One day a blue glint in a crater caught its camera: a pebble of ice, ",
    "shining like a tiny moon. ",
    "Pip beamed a photo home, then sat beside the pebble until the sun went down.",
]

#: seconds between chunks, so the story can be watched arriving
DELAY = 0.3


async def write_story(ctx: Context) -> None:
    await ctx.update("Okay, I'm starting to write that story for you...")
    artifact_id = None
    for i, chunk in enumerate(STORY):
        if DELAY and i:
            await asyncio.sleep(DELAY)
        artifact_id = await ctx.artifact(
            chunk,
            artifact_id=artifact_id,
            name="MarsStory.txt",
            append=i > 0,
            last_chunk=i == len(STORY) - 1,
        )
    await ctx.complete("The story is complete!")


agent = Agent(
    name="Storyteller",
    description="Writes very short stories and streams them as they are written.",
    executor=write_story,
    streaming=True,
    skills=[
        AgentSkill(
            id="short-story",
            name="Short story",
            description="Writes a very short story on the subject asked for.",
            tags=["writing", "streaming"],
            examples=["Write a very short story about a curious robot exploring Mars."],
        )
    ],
)
