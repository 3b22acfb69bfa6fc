"""Tests whose peers or tools are missing: skipped on a developer's machine, failed in CI.

CI (``CI=true``) is where everything the suite needs is installed, so a test
that cannot run there is a failure to see, not a skip that leaves a green run
that proved nothing. Elsewhere it skips, saying why in one line.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

#: True under CI (``CI`` set to anything but empty, 0, false or no)
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> NoReturn:
    """Skip the running test with ``reason``, or fail it under CI."""
    line = " ".join(reason.split())
    if IN_CI:
        pytest.fail(f"{line} (under CI a test that cannot run fails)", pytrace=False)
    pytest.skip(line)
