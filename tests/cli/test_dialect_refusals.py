"""A call the dialect (or binding) spoken cannot carry, refused by the client before
anything is sent: bad usage (exit 2), as a binding and dialect that do not go together
are, on every binding; never an agent's error (exit 1). With ``--json``, the error is
said as a usage error's: a message and no code, since no agent answered."""

from __future__ import annotations

import msgspec
import pytest

from tests.cli.ways import address, run

WAYS = ["jsonrpc-0.3", "jsonrpc-0.1", "rest-0.3", "grpc-0.3"]


@pytest.mark.parametrize("way", WAYS)
def test_listing_tasks_in_a_dialect_without_it_is_bad_usage(where: tuple[str, str],
                                                           way: str) -> None:
    dialect = way.partition("-")[2]
    said = f"listing tasks needs A2A 1.0, and this agent is spoken to in A2A {dialect}"
    plain = run("tasks", *address(where, way))
    assert plain.exit_code == 2, (plain.output, plain.stderr)
    assert plain.stderr == f"error: {said}\n"
    assert plain.stdout == ""
    as_json = run("tasks", *address(where, way), "--json")
    assert as_json.exit_code == 2, (as_json.output, as_json.stderr)
    assert msgspec.json.decode(as_json.stdout) == {"error": {"message": said}}


def test_a_binding_without_the_dialect_is_bad_usage_alike(where: tuple[str, str]) -> None:
    # the refusal the one above is consistent with
    result = run("get", where[0], "some-task", "--dialect", "0.1", "--binding", "rest",
                 "--json")
    assert result.exit_code == 2, (result.output, result.stderr)
    assert set(msgspec.json.decode(result.stdout)["error"]) == {"message"}
