"""The timeout every client takes (HTTP, gRPC, the meshes' clients): checked here, once."""

from __future__ import annotations

__all__ = ["checked_timeout"]


def checked_timeout(timeout: float | None) -> float | None:
    """``timeout`` (seconds, or None: no limit); ``ValueError`` for one that no call
    could meet (0, negative, NaN)."""
    if timeout is not None and not timeout > 0:  # (NaN too)
        raise ValueError(f"timeout must be above 0 seconds (or None: no limit), got {timeout!r}")
    return timeout
