"""python-a2a's client, one call per run, what it got printed as JSON.

    .interop/py-python-a2a-0.5.10/bin/python tests/interop/peers/python_a2a_client.py URL ask TEXT
    ... URL get TASK_ID
    ... python_a2a_client.py --serve      (many such runs in one process: ``pydriver.script``)

``ask`` is the library's own one-call helper (``A2AClient.ask``): it prints
``{"text": <the answer's text>}``. Each run makes a client of its own.
"""

from __future__ import annotations

from typing import Any

from pydriver import script
from python_a2a import A2AClient


def run(argv: list[str]) -> list[Any]:
    url, command, arg = argv[:3]
    client = A2AClient(url)
    if command == "ask":
        return [{"text": client.ask(arg)}]
    if command == "get":
        return [client.get_task(arg).to_dict()]
    raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    script(run)
