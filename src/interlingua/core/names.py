"""An agent's name where only a safe set of characters may stand."""

from __future__ import annotations

import re

__all__ = ["safe_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def safe_name(name: str) -> str:
    """``name`` as one topic level or one path segment (the mesh's topics, the paths
    ``/agents/{name}/`` of the gateway and of several agents on one server):
    characters other than letters, digits, ``_``, ``-`` and ``.`` become ``_``, at
    most 128 of them; a name that is empty or only dots (``..`` in a path) is
    ``agent``."""
    slug = _UNSAFE.sub("_", name.strip())[:128]
    return slug if slug.strip(".") else "agent"
