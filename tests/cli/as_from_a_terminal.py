"""The ``interlingua`` command as started from a terminal, for tests that press Ctrl-C.

A suite run in the background has SIGINT ignored, and a child inherits that; from a
terminal, Python turns SIGINT into ``KeyboardInterrupt``. The child's interpreter sets
that itself, first thing: a ``preexec_fn`` would make ``subprocess`` fork the test
process, and a fork of a process whose gRPC threads run (another test's, in the same
worker) can abort the child in gRPC's fork handlers before it runs the command.
"""

from __future__ import annotations

import sys

__all__ = ["from_a_terminal"]

_CODE = (
    "import runpy, signal, sys\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "sys.argv[0] = 'interlingua'\n"
    "runpy.run_module('interlingua.cli.main', run_name='__main__', alter_sys=True)\n"
)


def from_a_terminal(*args: str) -> list[str]:
    """The argv of ``interlingua ARGS`` with SIGINT as a terminal leaves it."""
    return [sys.executable, "-c", _CODE, *args]
