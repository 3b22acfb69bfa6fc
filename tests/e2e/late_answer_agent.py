"""The agent of ``asking_listener_agent.py``, served by a process that can hold the
write of a message for a turn another process runs: a message ``late PATH`` sent
while its task works is held just before that write (the file ``PATH.held`` says it
is), until the file PATH exists. A test lands the write that way right after the
turn asked for input, an order no timing makes certain."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from asking_listener_agent import agent  # (this folder's, as the server loads it)

from interlingua.core.model import Event, HistoryAppended
from interlingua.core.parts import get_text
from interlingua.server.run import Run, Writer

__all__ = ["agent"]

_write_as_stored = Writer.write_as_stored


async def _held(self: Writer, run: Run, events: Sequence[Event], **options: Any) -> None:
    for event in events:
        if type(event) is HistoryAppended:
            command, _, path = get_text(event.message).partition(" ")
            if command == "late":
                Path(path + ".held").touch()
                while not Path(path).exists():
                    await asyncio.sleep(0.02)
    await _write_as_stored(self, run, events, **options)


Writer.write_as_stored = _held  # type: ignore[method-assign]
