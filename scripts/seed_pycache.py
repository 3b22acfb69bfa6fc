"""Put the bytecode that Python's and pip's installs wrote beside their modules into the
folder PYTHONPYCACHEPREFIX names (the first argument), where a process under it looks
for bytecode instead: the first processes of a new checkout's test run then do not
compile the standard library and the dependencies again. Hard links where the two lie
on one file system, else copies; a file already there is left alone. Python checks
each file against its source as ever (a stale one is compiled again, and replaced, not
written through, so the installs' own files are never changed).

    .venv/bin/python scripts/seed_pycache.py .venv/pycache
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

#: folders of the standard library and of the venv that the suite does not import from
_SKIPPED = frozenset({"site-packages", "test", "idlelib", "tkinter", "turtledemo",
                      "lib2to3", "ensurepip", "pip", "setuptools", "pkg_resources"})


def seed(prefix: str) -> int:
    """How many files were placed under ``prefix``."""
    suffix = f".{sys.implementation.cache_tag}.pyc"
    paths = sysconfig.get_paths()
    placed = 0
    for root in dict.fromkeys((paths["stdlib"], paths["purelib"], paths["platlib"])):
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [name for name in subfolders if name not in _SKIPPED]
            if os.path.basename(folder) != "__pycache__":
                continue
            target = os.path.join(prefix, os.path.dirname(folder).lstrip(os.sep))
            for name in files:
                if name.endswith(suffix) and _place(os.path.join(folder, name),
                                                    os.path.join(target, name)):
                    placed += 1
    return placed


def _place(source: str, target: str) -> bool:
    if os.path.exists(target):
        return False
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
    return True


if __name__ == "__main__":
    seed(sys.argv[1])
