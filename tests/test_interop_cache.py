"""``scripts/interop-setup`` keeps the peer environments in a cache outside the checkout,
``.interop`` a link to it, so that every checkout of a machine shares what one built."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "interop-setup"


def _setup(tree: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    # the script works in the tree it lies in: a copy of it in a tree of its own
    (tree / "scripts").mkdir(parents=True, exist_ok=True)
    shutil.copy(SCRIPT, tree / "scripts" / "interop-setup")
    return subprocess.run(["bash", str(tree / "scripts" / "interop-setup"), *args],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def test_a_new_checkout_links_its_environments_to_the_shared_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for name in ("one", "two"):
        # an unknown environment: the link is made, then the script refuses the name
        done = _setup(tmp_path / name, {"INTEROP_CACHE": str(cache)}, "no-such-env")
        assert done.returncode == 1 and "unknown environment no-such-env" in done.stderr
        link = tmp_path / name / ".interop"
        assert link.is_symlink() and link.resolve() == cache.resolve()
    assert (cache / ".setup.lock").exists()  # one lock for every checkout


def test_a_cleared_cache_is_made_again_and_none_keeps_the_tree_s_own(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _setup(tmp_path / "a", {"INTEROP_CACHE": str(cache)}, "no-such-env")
    shutil.rmtree(cache)
    _setup(tmp_path / "a", {"INTEROP_CACHE": str(cache)}, "no-such-env")
    assert cache.is_dir() and (tmp_path / "a" / ".interop").is_symlink()
    _setup(tmp_path / "b", {"INTEROP_CACHE": "none"}, "no-such-env")
    own = tmp_path / "b" / ".interop"
    assert own.is_dir() and not own.is_symlink()
