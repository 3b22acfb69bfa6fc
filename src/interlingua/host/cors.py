"""CORS for the pages of the origins a server allows (``allowed_origins``), in front of
a whole app: the preflight answered, and the headers that let such a page read each
answer. Starlette's middleware does the work; a request it has seen is marked, so the
apps nested inside (an agent's under ``/agents/NAME/``) do not answer it twice. Pages of
other origins are refused by the bindings (core/origins.py).
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any

from starlette.middleware.cors import CORSMiddleware

__all__ = ["SEEN", "cors_layer", "first_sight"]

#: the scope key of a request a CORS layer has seen
SEEN = "interlingua.cors"


def cors_layer(app: Any, origins: Sequence[str]) -> CORSMiddleware:
    """The CORS layer in front of ``app`` for the pages of ``origins`` (``"*"``: any)."""
    return CORSMiddleware(
        app, allow_origins=list(origins), allow_methods=["GET", "POST", "DELETE"],
        allow_headers=["*"],
        expose_headers=["A2A-Version", "A2A-Extensions", "WWW-Authenticate", "Retry-After"],
        max_age=600)


def first_sight(scope: MutableMapping[str, Any]) -> bool:
    """Whether ``scope`` is an HTTP request no CORS layer has seen yet; marks it seen.
    (Asked only of an app that has a layer: one that allows no other origin pays
    nothing.)"""
    if scope["type"] != "http" or SEEN in scope:
        return False
    scope[SEEN] = True
    return True

