"""Where the reference documents the tests read are.

The JSON schemas of each version are kept here (``SPEC``, see README.md in this
folder). The published texts the golden tests take their examples from (the
v1.0 proto and specification, and the seed documents) are read from the
project's shared folder beside the repository; when it is missing, those tests
skip with the reason, and under CI they fail instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parent
#: the specification's JSON schemas, by version: ``SPEC / "v0.3.0" / "a2a.json"``
SPEC = REFERENCE / "spec"
#: the project's shared folder (specification texts, seed documents)
SHARED = REFERENCE.parents[2] / "shared"


def shared(*parts: str) -> Path:
    """A path in the shared folder; skips (fails under CI) the module when absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        reason = f"{path} is missing: the shared folder beside the repository holds it"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason, allow_module_level=True)
    return path
