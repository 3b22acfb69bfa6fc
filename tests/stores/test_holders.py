"""Whether a lease's holder lives, told on its own machine (``stores/holders.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from interlingua.stores.holders import holder_name, is_dead_here


def test_this_process_lives_and_one_before_it_with_its_number_does_not() -> None:
    """A container started again is process 1 again: the lease of the one before
    names the same number, and a start of its own tells it apart (it was taken for
    this process, alive, until its heartbeats lapsed)."""
    mine = holder_name()
    assert not is_dead_here(mine)
    machine, pid, start = mine.rsplit(":", 2)
    assert int(pid) == os.getpid() and start
    assert is_dead_here(f"{machine}:{pid}:{int(start) - 1}")
    # a name without a start (an older release's) is judged by the number alone
    assert not is_dead_here(f"{machine}:{pid}")


def test_a_process_is_dead_once_it_exits_even_before_it_is_reaped() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        name = holder_name(child.pid)
        assert not is_dead_here(name)
        child.kill()
        deadline = time.monotonic() + 10
        while not is_dead_here(name) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert is_dead_here(name)  # a zombie: its parent has not waited for it yet
    finally:
        child.kill()
        child.wait(10)
    assert is_dead_here(name)
    # another process given the number later is not the holder
    machine, _, start = name.rsplit(":", 2)
    assert is_dead_here(f"{machine}:{os.getpid()}:{start}")
