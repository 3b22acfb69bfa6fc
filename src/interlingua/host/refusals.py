"""Starlette's refusals on a host's own routes (cards, health, the agents' listing),
answered as the bindings answer theirs: JSON error bodies, not Starlette's plain text."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse

from ..bindings.rest.endpoint import refuse_verb
from ..core.errors import quoted
from .hosts import HostNotAllowed

__all__ = ["host_refusal", "http_refusal", "is_jsonrpc_call"]


async def http_refusal(request: Request, exc: Exception) -> Any:
    """A wrong verb: the 405 every route of the app answers (a JSON error body,
    ``Allow``); any other refusal, Starlette's own answer."""
    assert isinstance(exc, HTTPException)
    headers = exc.headers or {}
    if exc.status_code == 405:
        named = (m.strip() for m in headers.get("Allow", "").split(","))
        allowed = tuple(sorted(m for m in named if m))
        method, path = request.method, request.scope["path"]

        async def refuse(scope: Any, receive: Any, send: Any) -> None:
            await refuse_verb(send, method, path, allowed)

        return refuse
    return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=headers)


def is_jsonrpc_call(method: str, below: str, rpc_paths: Collection[str]) -> bool:
    """Whether a request that no agent takes is a JSON-RPC call, as an agent's app
    tells one: a POST to its JSON-RPC URL, one of ``rpc_paths`` below a base URL (the
    server's, an agent's); ``below`` is the rest of the path, "" the base URL itself."""
    return method == "POST" and (below or "/") in rpc_paths


def these(names: Sequence[str]) -> str:
    """The agents a 404 names: those any caller may know of (none, when every card is
    private)."""
    return f"; these are: {', '.join(names)}" if names else ""


def host_refusal(listing: str) -> Callable[[Request, Exception], Any]:
    """``http_refusal`` for a host of several agents (``AgentsApp``), whose 404 (a path
    no agent is under) names where they are listed and the agents the listing shows
    the caller (400 for a Host it refuses, as the listing answers it)."""
    async def refusal(request: Request, exc: Exception) -> Any:
        assert isinstance(exc, HTTPException)
        if exc.status_code != 404:
            return await http_refusal(request, exc)
        try:
            names = await request.app.named(request.scope)
        except HostNotAllowed as bad_host:
            return JSONResponse({"error": {"code": 400, "message": str(bad_host)}},
                                status_code=400)
        return JSONResponse({"error": {"code": 404, "message": (
            f"Not found: {quoted(request.scope['path'])}: this server hosts several agents,"
            f" each under {listing}{{name}}/{these(names)} (GET {listing})")}},
            status_code=404)

    return refusal
