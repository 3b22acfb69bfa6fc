"""The message texts every echo agent of the benchmark reads as a mode.

Shared by the servers under test (interlingua's, the official SDKs' and the raw ceiling),
each of which runs in its own venv with this directory on its path; pure Python, no
imports, so any of them can load it.
"""

from __future__ import annotations

from typing import Any

#: the text of an idle request, and the text of its one progress update
IDLE_TEXT = "idle"
#: artifact chunks of one streamed answer when the text asks for no number
STREAM_CHUNKS = 1000
#: ``stream N`` asks for N artifact chunks
STREAM_PREFIX = "stream "
MAX_CHUNKS = 1_000_000


def chunks_asked(text: str) -> int | None:
    """The chunk count ``stream N`` asks for; None for any other text."""
    if text.startswith(STREAM_PREFIX):
        count = text[len(STREAM_PREFIX) :].strip()
        if count.isdigit() and 0 < int(count) <= MAX_CHUNKS:
            return int(count)
    return None



def wait_forever() -> Any:
    """What every echo agent awaits to idle: a bare future, done only by cancellation.

    The same wait in every server, and the cheapest one (an ``asyncio.Event`` would add
    a ~760-byte waiter deque, a coroutine of its own another frame), so the idle-stream
    figure is the framework's.
    """
    import asyncio

    return asyncio.get_running_loop().create_future()
