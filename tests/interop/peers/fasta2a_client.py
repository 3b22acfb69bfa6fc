"""fasta2a's client, one call per run, its answer printed as JSON.

    .interop/py-fasta2a-2.1.1/bin/python tests/interop/peers/fasta2a_client.py URL send TEXT
    ... URL stream TEXT      (one JSON line per event)
    ... URL get TASK_ID

The message is built as fasta2a's own types spell it (``Message`` with a text
part); what goes on the wire is the client's choice, not ours.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

from fasta2a.client import A2AClient
from fasta2a.schema import Message, Part


async def main(url: str, command: str, arg: str) -> None:
    client = A2AClient(url)
    message = Message(role="user", parts=[Part(text=arg)], message_id=str(uuid.uuid4()))
    if command == "send":
        print(json.dumps(await client.send_message(message)))
    elif command == "stream":
        async for event in client.stream_message(message):
            print(json.dumps(event), flush=True)
    elif command == "get":
        print(json.dumps(await client.get_task(arg)))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
