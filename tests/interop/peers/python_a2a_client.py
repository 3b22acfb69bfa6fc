"""python-a2a's client, one call per run, what it got printed as JSON.

    .interop/py-python-a2a-0.5.10/bin/python tests/interop/peers/python_a2a_client.py URL ask TEXT
    ... URL get TASK_ID

``ask`` is the library's own one-call helper (``A2AClient.ask``): it prints
``{"text": <the answer's text>}``.
"""

from __future__ import annotations

import json
import sys

from python_a2a import A2AClient


def main(url: str, command: str, arg: str) -> None:
    client = A2AClient(url)
    if command == "ask":
        print(json.dumps({"text": client.ask(arg)}))
    elif command == "get":
        print(json.dumps(client.get_task(arg).to_dict()))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
