"""The ports tests give the servers they start: below the kernel's ephemeral range, a
block of their own for each xdist worker, never the same one twice in a row."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ports

ROOT = Path(__file__).resolve().parents[1]


def test_ports_are_below_the_ephemeral_range_and_not_repeated() -> None:
    got = [ports.free_port() for _ in range(20)]
    assert len(set(got)) == 20
    assert all(ports._FIRST <= p < ports._ephemeral_low() for p in got), got


def test_two_workers_get_ports_of_two_blocks() -> None:
    def first_port(worker: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", "from tests.ports import free_port; print(free_port())"],
            env={**os.environ, "PYTEST_XDIST_WORKER": worker}, cwd=ROOT, capture_output=True,
            text=True, timeout=30, check=True)
        return int(done.stdout)

    a, b = first_port("gw0"), first_port("gw1")
    assert abs(a - b) >= ports._BLOCK - 1, (a, b)


def test_no_port_a_fetch_client_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    # the first worker's block holds 10080, which Node's fetch and browsers refuse
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert ports._FIRST <= 10080 < ports._FIRST + ports._BLOCK
    monkeypatch.setattr(ports, "_NEXT", itertools.count(10080 - ports._FIRST))
    # 10081 may be held by a server this worker started: only the refusal is asked here
    monkeypatch.setattr(ports, "_bindable", lambda port: True)
    assert ports.free_port() == 10081
