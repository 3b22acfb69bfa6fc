"""Every option that takes a number of seconds refuses ``nan``: ``click.FloatRange``
compares its bounds with ``<``, which NaN never fails."""

from __future__ import annotations

from collections.abc import Iterator

import click
from click.testing import CliRunner

from interlingua.cli.main import main
from interlingua.cli.seconds import Seconds


def _options(command: click.Command, path: str = "") -> Iterator[tuple[str, click.Parameter]]:
    for param in command.params:
        yield f"{path} {param.name}".strip(), param
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _options(sub, f"{path} {name}".strip())


def test_every_float_range_option_is_seconds_and_refuses_nan() -> None:
    ranges = [(where, p) for where, p in _options(main) if isinstance(p.type, click.FloatRange)]
    assert len(ranges) >= 10
    assert [where for where, p in ranges if not isinstance(p.type, Seconds)] == []
    for where, param in ranges:
        try:
            param.type.convert("nan", param, None)
        except click.BadParameter as exc:
            assert "not a number of seconds" in str(exc), where
        else:
            raise AssertionError(f"{where} took nan")


def test_a_command_given_nan_seconds_says_so_and_exits_2() -> None:
    done = CliRunner().invoke(main, ["send", "http://127.0.0.1:1/", "hi", "--timeout", "nan"],
                              prog_name="interlingua")
    assert done.exit_code == 2, done.output
    assert "'nan' is not a number of seconds" in done.output
    # the range still holds
    done = CliRunner().invoke(main, ["send", "http://127.0.0.1:1/", "hi", "--timeout", "0"],
                              prog_name="interlingua")
    assert done.exit_code == 2 and "not in the range" in done.output
