"""Suite-wide: the peer environments of the interop tests are set up before any test runs.

Setting one up (an install from a package registry) can take minutes; inside a
test it would count against that test's time limit. Tests that need one are
marked ``interop``, with ``envs=[...]`` when they need only some of them.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "interop(envs=None): talks to the official A2A SDKs, whose environments "
        "scripts/interop-setup makes (all of them, or the ones named)")


def pytest_collection_finish(session: pytest.Session) -> None:
    needed: dict[str, None] = {}
    for item in session.items:
        marker = item.get_closest_marker("interop")
        if marker is None:
            continue
        from tests.interop.matrix import ROWS

        for env in marker.kwargs.get("envs") or [row.env for row in ROWS]:
            needed[env] = None
    if needed:
        from tests.interop.harness import prepare_envs

        prepare_envs(needed)
