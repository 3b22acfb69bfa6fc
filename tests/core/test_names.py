"""One rule for an agent's name in a topic level and in a path segment."""

from __future__ import annotations

import pytest

from interlingua.core.names import safe_name
from interlingua.host.agents import path_name
from interlingua.mesh.topics import mesh_name


@pytest.mark.parametrize(("name", "safe"), [
    ("Flight booker", "Flight_booker"),
    ("a/b+#", "a_b__"),
    ("  ok-1.2_x  ", "ok-1.2_x"),
    ("", "agent"),
    ("..", "agent"),  # never a path segment that climbs
    (".", "agent"),
    ("x" * 200, "x" * 128),
])
def test_a_name_is_made_safe_alike_for_topics_and_paths(name: str, safe: str) -> None:
    assert safe_name(name) == mesh_name(name) == path_name(name) == safe
