"""What the command line sends an agent is checked before anything is sent: text that
is not UTF-8 (a byte the shell passed that UTF-8 cannot read) and headers that HTTP
cannot carry are usage errors naming the argument, never a traceback. Before, a byte
0xff in the text of ``send`` raised ``UnicodeEncodeError`` out of the codec, and a
header value ``café`` or a name with a space raised from httpx (the first as a
traceback, the second as "cannot reach" the agent). The client takes headers on the
same terms (``checked_headers``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from interlingua import Client
from interlingua.cli.main import main

NOWHERE = "http://127.0.0.1:9/"


@pytest.mark.parametrize(("args", "named", "says"), [
    (["send", NOWHERE, "bad \udcff byte"], "'TEXT'", "byte 0xff at position 4"),
    (["stream", NOWHERE, "\udce9t\udce9"], "'TEXT'", "byte 0xe9 at position 0"),
    (["send", NOWHERE, "hi", "--task-id", "t\udcff"], "'--task-id'", "byte 0xff at position 1"),
    (["send", NOWHERE, "hi", "--context-id", "c\udcfe"], "'--context-id'",
     "byte 0xfe at position 1"),
    (["send", NOWHERE, "hi", "--data", '"\udcff"'], "'--data'", "byte 0xff at position 1"),
    (["get", NOWHERE, "a\udcff"], "'TASK_ID'", "byte 0xff at position 1"),
    (["cancel", NOWHERE, "a\udcff"], "'TASK_ID'", "byte 0xff at position 1"),
    (["subscribe", NOWHERE, "a\udcff"], "'TASK_ID'", "byte 0xff at position 1"),
    (["tasks", NOWHERE, "--context-id", "\udcff"], "'--context-id'", "byte 0xff at position 0"),
])
def test_text_that_is_not_utf8_is_a_usage_error(args: list[str], named: str, says: str) -> None:
    done = CliRunner().invoke(main, args, prog_name="interlingua")
    assert done.exit_code == 2, (done.output, done.exception)
    assert f"Invalid value for {named}: is not UTF-8 text ({says})" in done.output, done.output


@pytest.mark.parametrize(("header", "says"), [
    ("X-Key: café", "the value of header X-Key must be printable ASCII text, not 'café'"),
    ("X-Key: a\x01b", "the value of header X-Key must be printable ASCII text"),
    ("Bad Name: x", "header name 'Bad Name' is not an HTTP field name"),
    ("X-Käy: x", "header name 'X-Käy' is not an HTTP field name"),
])
@pytest.mark.parametrize("command", [["send", NOWHERE, "hi"], ["card", NOWHERE],
                                     ["mcp", NOWHERE]])
def test_a_header_http_cannot_carry_is_a_usage_error(
        command: list[str], header: str, says: str) -> None:
    done = CliRunner().invoke(main, [*command, "-H", header], prog_name="interlingua")
    assert done.exit_code == 2, (done.output, done.exception)
    assert says in done.output, done.output


def test_a_byte_from_the_shell_is_named_by_the_real_command() -> None:
    # the command line as a shell hands it over: bytes, the 0xff not UTF-8
    done = subprocess.run([os.fsencode(sys.executable), b"-m", b"interlingua.cli.main", b"send",
                           NOWHERE.encode(), b"caf\xff"], capture_output=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert b"is not UTF-8 text (byte 0xff at position 3)" in done.stderr, done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(("headers", "says"), [
    ({"X-Key": "café"}, "the value of header X-Key must be printable ASCII text"),
    ({"X-Key": "a\r\nX-Forged: 1"}, "the value of header X-Key must be printable ASCII text"),
    ({"": "x"}, "header name '' is not an HTTP field name"),
    ({"X-Key": 3}, "the value of header X-Key must be printable ASCII text, not 3"),
])
def test_the_client_refuses_a_header_http_cannot_carry(headers: dict[str, object],
                                                       says: str) -> None:
    with pytest.raises(ValueError, match="^" + says.replace("(", r"\(")):
        Client(NOWHERE, headers=headers)  # type: ignore[arg-type]


def test_the_client_takes_headers_http_carries() -> None:
    headers = {"Authorization": "Bearer abc.def", "X-Api-Key": "k e y ~!"}
    assert Client(NOWHERE, headers=headers).headers == headers
