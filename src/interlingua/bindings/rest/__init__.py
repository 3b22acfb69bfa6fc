"""The HTTP+JSON (REST) binding: v1.0 routes at the root and under ``/{tenant}``,
v0.3 routes under ``/v1`` (DIALECTS.md §g)."""

from __future__ import annotations

from .binding import RESTBinding
from .endpoint import RESTEndpoint
from .routes import RESERVED, Match, NoRoute, match

__all__ = ["RESERVED", "Match", "NoRoute", "RESTBinding", "RESTEndpoint", "match"]
