"""``scripts/seed_pycache.py``: a process under the suite's bytecode folder finds the
bytecode the installs wrote there, and compiles nothing it imports from them again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "seed_pycache.py"

# a module of the standard library and one of a dependency, each with its install's bytecode
_PROBE = ("import json.decoder, httpx._api, sys; "
          "print(json.decoder.__cached__); print(httpx._api.__cached__)")


def _cached_under(prefix: Path) -> list[Path]:
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout
    return [Path(line) for line in out.splitlines()]


def test_the_installs_bytecode_is_where_a_process_under_the_prefix_looks(tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    assert not any(path.exists() for path in _cached_under(prefix))
    subprocess.run([sys.executable, str(SCRIPT), str(prefix)], check=True, timeout=120)
    for cached in _cached_under(prefix):
        assert cached.is_relative_to(prefix) and cached.exists(), cached
        # the install's own file, beside its source
        source_dir = Path("/", *cached.parent.relative_to(prefix).parts)
        beside = source_dir / "__pycache__" / cached.name
        assert cached.read_bytes() == beside.read_bytes()


def test_a_file_already_there_is_left_alone(tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    subprocess.run([sys.executable, str(SCRIPT), str(prefix)], check=True, timeout=120)
    cached = _cached_under(prefix)[0]
    cached.unlink()
    cached.write_bytes(b"ours")
    subprocess.run([sys.executable, str(SCRIPT), str(prefix)], check=True, timeout=120)
    assert cached.read_bytes() == b"ours"
