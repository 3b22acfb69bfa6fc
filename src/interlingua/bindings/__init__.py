"""Bindings: the transports in front of the server's front door (``server/dispatch.py``), framing
only."""
