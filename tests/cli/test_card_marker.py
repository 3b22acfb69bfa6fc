"""``interlingua card`` marks "(used by default)" the interface the other commands use
with the same ``--dialect`` and ``--binding``, on every binding: with ``--dialect``
that is URL itself, marked where the card lists it in that binding and dialect, and
said on a line of its own where it does not. A command given those options then works
where the card marks an interface."""

from __future__ import annotations

import pytest
from click.testing import Result

from tests.cli.ways import run

MARK = "  (used by default)"


def marked(result: Result) -> list[str]:
    """The interface lines marked, as (binding, version) words."""
    assert result.exit_code == 0, (result.output, result.stderr)
    return [" ".join(line.split()[:2]) for line in result.stdout.splitlines()
            if line.endswith(MARK)]


# (options, the interface marked); the card lists JSONRPC, HTTP+JSON and GRPC in 1.0, 0.3
CHOSEN = [
    ([], "JSONRPC 1.0"),
    (["--binding", "jsonrpc"], "JSONRPC 1.0"),
    (["--binding", "rest"], "HTTP+JSON 1.0"),
    (["--binding", "grpc"], "GRPC 1.0"),
    (["--dialect", "1.0"], "JSONRPC 1.0"),
    (["--dialect", "0.3"], "JSONRPC 0.3"),
    (["--dialect", "0.3", "--binding", "jsonrpc"], "JSONRPC 0.3"),
    (["--dialect", "0.3", "--binding", "rest"], "HTTP+JSON 0.3"),
]


@pytest.mark.parametrize(("options", "interface"), CHOSEN,
                         ids=[" ".join(o) or "card" for o, _ in CHOSEN])
def test_the_interface_marked_is_the_one_the_options_choose(
        where: tuple[str, str], options: list[str], interface: str) -> None:
    url = where[0]
    assert marked(run("card", url, *options)) == [interface]
    sent = run("send", url, "hello", *options)
    assert sent.exit_code == 0, (sent.output, sent.stderr)


@pytest.mark.parametrize("slash", ["", "/"])
def test_a_url_given_with_or_without_its_slash_is_the_card_interface(
        where: tuple[str, str], slash: str) -> None:
    url = where[0].rstrip("/") + slash
    assert marked(run("card", url, "--dialect", "0.3", "--binding", "rest")) \
        == ["HTTP+JSON 0.3"]


@pytest.mark.parametrize(("options", "used"), [
    (["--dialect", "0.1"], "JSON-RPC v0.1"),
    (["--dialect", "0.3", "--binding", "grpc"], "gRPC v0.3"),
    # its card's interfaces are 1.0's: 1.1 is spoken at the URL, not at one of them
    (["--dialect", "1.1"], "JSON-RPC v1.1"),
])
def test_an_endpoint_the_card_does_not_list_is_said_not_marked(
        where: tuple[str, str], options: list[str], used: str) -> None:
    url = where[0]
    result = run("card", url, *options)
    assert marked(result) == []
    assert f"Used by default: {used} at {url} (the URL given, not an interface of " \
        "this card)" in result.stdout, result.stdout


def test_a_grpc_address_with_a_dialect_marks_its_interface(where: tuple[str, str]) -> None:
    assert marked(run("card", f"grpc://{where[1]}", "--dialect", "0.3")) == ["GRPC 0.3"]
