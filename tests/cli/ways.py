"""The CLI run in process, and the options that reach the shared agent (``where``,
conftest.py) by one binding and dialect."""

from __future__ import annotations

from click.testing import CliRunner, Result

from interlingua.cli.main import main

__all__ = ["address", "run"]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="interlingua")


def address(where: tuple[str, str], way: str) -> list[str]:
    """The agent's address and options for ``way`` (``binding-dialect``)."""
    url, target = where
    binding, _, dialect = way.partition("-")
    at = f"grpc://{target}" if binding == "grpc" else url
    return [at, "--binding", binding, "--dialect", dialect]
