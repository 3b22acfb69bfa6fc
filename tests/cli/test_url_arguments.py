"""A URL that urllib cannot split (a bracket left open) is a usage error of the option or
argument that gave it, in every command that takes one: never a traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from interlingua.cli.main import main


@pytest.mark.parametrize("args", [
    ["send", "http://[::1/", "hi"],
    ["send", "grpc://[::1", "hi"],
    ["send", "mqtt://[::1/demo/Echo", "hi"],
    ["card", "http://[::1/"],
    ["mcp", "http://[::1/"],
    ["serve", "examples/echo.py", "--port", "0", "--public-url", "http://[::1/"],
])
def test_an_unsplittable_url_is_a_usage_error(args: list[str]) -> None:
    done = CliRunner().invoke(main, args, prog_name="interlingua")
    assert done.exit_code == 2, (done.output, done.exception)
    assert "is not a URL: Invalid IPv6 URL" in done.output, done.output


def test_a_port_out_of_range_is_a_usage_error_of_mcp_too() -> None:
    done = CliRunner().invoke(main, ["mcp", "http://127.0.0.1:99999/"], prog_name="interlingua")
    assert done.exit_code == 2 and "has no valid port (0-65535)" in done.output, done.output
