"""``--data JSON`` sends a data part holding that JSON value, whatever the value: an
object, a list, a string, a number, a boolean, and ``null`` too (a v1.0 data part is any
JSON value, ``google.protobuf.Value``; v0.x peers get it wrapped as ``{"value": X}``), on
every binding and dialect, from ``send`` and ``stream`` alike. ``null`` was taken for
"no --data" and sent no data part at all."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tests.cli.ways import address, run

WAYS = ["jsonrpc-1.0", "jsonrpc-0.3", "jsonrpc-0.1", "rest-1.0", "rest-0.3", "grpc-1.0",
        "grpc-0.3"]


def task_id_of(line: str) -> str:
    answer = msgspec.json.decode(line)
    return str(answer["task"]["id"] if "task" in answer else answer["id"])


def parts_sent(where: tuple[str, str], command: str, way: str, data: str) -> list[Any]:
    """The parts of the message ``command`` sent with ``--data data``, as the agent keeps
    them (read back in v1.0 JSON-RPC, whatever the way it was sent)."""
    sent = run(command, *address(where, way), "echo hi", "--data", data, "--json")
    assert sent.exit_code == 0, (sent.output, sent.stderr)
    # (send prints its answer whole, stream an event a line)
    task_id = task_id_of(sent.stdout if command == "send" else sent.stdout.splitlines()[0])
    got = run("get", where[0], task_id, "--history", "5", "--json")
    assert got.exit_code == 0, (got.output, got.stderr)
    return list(msgspec.json.decode(got.stdout)["history"][0]["parts"])


@pytest.mark.parametrize("command", ["send", "stream"])
@pytest.mark.parametrize("way", WAYS)
def test_data_null_is_sent_as_a_data_part(where: tuple[str, str], way: str,
                                          command: str) -> None:
    assert parts_sent(where, command, way, "null") == [{"text": "echo hi"}, {"data": None}]


@pytest.mark.parametrize("value", ["false", "0", '""', "[]", "{}", '{"k": [1, null]}'])
def test_every_json_value_is_sent_as_given(where: tuple[str, str], value: str) -> None:
    assert parts_sent(where, "send", "jsonrpc-1.0", value) \
        == [{"text": "echo hi"}, {"data": msgspec.json.decode(value)}]
