"""The host: the ASGI app that puts an agent's server behind its HTTP bindings
(JSON-RPC, HTTP+JSON), with the card, the inspector and the metrics routes.

It sits above ``server``, ``bindings``, ``observability`` and ``inspector``
and wires them together; none of them imports it.
"""

from __future__ import annotations

from .app import create_app, lifespans

__all__ = ["create_app", "lifespans"]
