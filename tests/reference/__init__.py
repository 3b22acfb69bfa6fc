"""Where the reference documents the tests read are.

The JSON schemas of each version are kept here (``SPEC``, see README.md in this
folder), and so are the examples the golden tests take from the published texts
(the v1.0 proto and specification, and the seed documents): ``extracted/``, written
by ``python -m tests.reference.extract``. The texts themselves are in the project's
shared folder beside the repository (or where ``INTERLINGUA_SHARED`` says); only the
tests marked ``needs_shared`` read them, the checks that each fixture is still what
its text says. Without the folder those are deselected (``tests/conftest.py``), and
under CI they fail instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parent
#: the specification's JSON schemas, by version: ``SPEC / "v0.3.0" / "a2a.json"``
SPEC = REFERENCE / "spec"
#: the project's shared folder beside the repository (specification texts, seed documents)
SHARED = REFERENCE.parents[2] / "shared"


def shared_dir() -> Path:
    """The shared folder: ``INTERLINGUA_SHARED`` when set, else the one beside the repository."""
    return Path(os.environ.get("INTERLINGUA_SHARED") or SHARED)


def shared(*parts: str) -> Path:
    """A path in the shared folder; fails the running test when absent (only tests
    marked ``needs_shared`` read it, and they run only where it exists, or under CI)."""
    path = shared_dir().joinpath(*parts)
    if not path.exists():
        pytest.fail(f"{path} is missing: the shared folder beside the repository holds it",
                    pytrace=False)
    return path
