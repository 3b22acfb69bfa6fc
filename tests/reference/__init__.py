"""Where the reference documents of ``README.md`` in this folder are."""

from __future__ import annotations

from pathlib import Path

REFERENCE = Path(__file__).resolve().parent
#: the specification's files, by version: ``SPEC / "v0.3.0" / "a2a.json"``
SPEC = REFERENCE / "spec"
#: published descriptions of A2A the tests take examples from
SEEDS = REFERENCE / "seeds"
