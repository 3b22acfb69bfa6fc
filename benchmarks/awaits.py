"""Instructions per ``await`` of a finished awaitable: ``signals.DONE`` against the same
awaitable with ``__await__`` as a Python method, and against reading a flag instead.

Run each kind under callgrind and subtract ``none`` (the loop alone)::

    for k in none flag method done; do
      valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python benchmarks/awaits.py $k 2>&1 | grep Collected
    done

(Collected - none's) / 100,000 is one step's cost. Results: benchmarks/results/instructions.md.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Generator

from interlingua.signals import DONE

N = 100_000


class _MethodDone:
    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        return iter(())  # type: ignore[return-value]


METHOD_DONE = _MethodDone()


class _Port:
    checks = False

    def method(self) -> _MethodDone:
        return METHOD_DONE

    def done(self) -> Awaitable[None]:
        return DONE


async def main(kind: str) -> None:
    port = _Port()
    if kind == "none":
        for _ in range(N):
            pass
    elif kind == "flag":  # what a caller reading a flag first pays when there is nothing to do
        for _ in range(N):
            if port.checks:
                await port.method()
    elif kind == "method":
        for _ in range(N):
            await port.method()
    elif kind == "done":
        for _ in range(N):
            await port.done()
    else:
        raise SystemExit(f"unknown kind {kind!r}: none, flag, method or done")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "done"))
