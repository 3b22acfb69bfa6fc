"""The benchmark harness's modules import each other as top-level modules (run.py runs
with ``benchmarks/`` on its path, a server with ``benchmarks/servers/``): so do these tests."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
for folder in (BENCH, BENCH / "servers"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
