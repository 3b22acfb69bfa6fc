"""An address a command cannot listen on names the option at fault: ``--host`` for an
address that is not this machine's or does not resolve (it named ``--port``), ``--port``
for a port that is taken. One line, exit 2, as every listening command says it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from interlingua.cli.main import main

#: not an address of this machine (TEST-NET-1), and a name that resolves to nothing
NOT_MINE = "192.0.2.1"
NO_SUCH = "999.1.1.1"


COMMANDS = {
    "serve": ["serve", "examples/echo.py"],
    "serve several": ["serve", "examples/echo.py", "examples/flight_booking.py"],
    "listen": ["listen"],
    "inspect": ["inspect"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_option_at_fault_is_named(command: str, taken: int) -> None:
    runner = CliRunner()
    args = COMMANDS[command]
    for host, port, named in ((NOT_MINE, 28211, f"--host {NOT_MINE}: cannot listen on "),
                              (NO_SUCH, 28211, f"--host {NO_SUCH}: cannot listen on "),
                              ("127.0.0.1", taken, f"--port {taken}: cannot listen on ")):
        done = runner.invoke(main, [*args, "--host", host, "--port", str(port)],
                             prog_name="interlingua")
        assert done.exit_code == 2, (host, done.stderr)
        [line] = done.stderr.splitlines()
        assert line.startswith(f"error: {named}"), line
