"""Bindings: the transports in front of the server's front door (framing only)."""
