"""fasta2a's client, one call per run, its answer printed as JSON.

    .interop/py-fasta2a-2.1.1/bin/python tests/interop/peers/fasta2a_client.py URL send TEXT
    ... URL stream TEXT      (one JSON line per event)
    ... URL get TASK_ID
    ... fasta2a_client.py --serve      (many such runs in one process: ``pydriver.script``)

The message is built as fasta2a's own types spell it (``Message`` with a text
part); what goes on the wire is the client's choice, not ours. Each run makes a
client of its own.
"""

from __future__ import annotations

import uuid
from typing import Any

from fasta2a.client import A2AClient
from fasta2a.schema import Message, Part
from pydriver import script


async def run(argv: list[str]) -> list[Any]:
    url, command, arg = argv[:3]
    client = A2AClient(url)
    message = Message(role="user", parts=[Part(text=arg)], message_id=str(uuid.uuid4()))
    try:
        if command == "send":
            return [await client.send_message(message)]
        if command == "stream":
            return [event async for event in client.stream_message(message)]
        if command == "get":
            return [await client.get_task(arg)]
        raise SystemExit(f"unknown command {command}")
    finally:
        # the client's own connection pool, not left behind for the next run
        await client.http_client.aclose()


if __name__ == "__main__":
    script(run)
