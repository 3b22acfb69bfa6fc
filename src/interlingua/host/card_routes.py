"""HTTP routes that need a caller: the card when it is not public, and the v0.2 extended card.

v0.2.1-v0.2.6 clients fetch the extended card with ``GET
{card url}/../agent/authenticatedExtendedCard`` (DIALECTS.md §e); it is
answered with the same hybrid document as the public card, built for the
caller. Refusals are JSON bodies with the HTTP status of the refusal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from ..bindings.http.request_headers import RequestHeaders
from ..core.calls import GetExtendedCard
from ..core.dialects import get_codec
from ..core.errors import A2AError, ExtendedCardNotConfigured, InternalError
from ..core.model import AgentCard
from ..server.auth.runtime import Security, refusal
from ..server.dispatch import FrontDoor, Inbound
from .hosts import HostNotAllowed

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..server.cards.serving import A2AServer, CardVariant

__all__ = ["EXTENDED_CARD_PATH", "card_gate", "extended_card_endpoint"]

EXTENDED_CARD_PATH = "/agent/authenticatedExtendedCard"

log = logging.getLogger("interlingua.server")


def _refused(exc: A2AError, status: int, headers: list[tuple[bytes, bytes]]) -> Response:
    from starlette.responses import Response

    body = msgspec.json.encode({"error": {"code": status, "message": exc.message}})
    response = Response(body, status_code=status, media_type="application/json")
    response.raw_headers.extend(headers)  # (one WWW-Authenticate per scheme: not a dict)
    return response


async def card_gate(security: Security, request: Request) -> Response | None:
    """None when the card may be served to this caller, else the refusal to send
    (``Security.card_refusal``)."""
    if security.auth is None or security.auth.public_card:
        return None
    headers = {k.lower(): v for k, v in request.headers.items()}
    exc = await security.card_refusal(request.scope, headers)
    if exc is None:
        return None
    return _refused(exc, *(refusal(exc) or (400, [])))


async def _no_task(request: Any, task_id: str) -> None:
    raise AssertionError("the extended card names no task")  # (describe() gives none)


def extended_card_endpoint(server: A2AServer, security: Security, door: FrontDoor,
                           variant_of: Callable[[Any, Any], CardVariant]) -> Any:
    """``GET /agent/authenticatedExtendedCard`` (v0.2): the caller's extended card,
    through the front door as every other binding's extended-card call (admitted,
    the tenant header checked, the policy asked, told to the request hooks as a
    JSON-RPC call of v0.3's codec), built for the host it was asked at."""

    async def endpoint(request: Request) -> Response:
        from starlette.responses import Response

        from ..server.cards.document import card_document

        try:
            variant = variant_of(request.scope, request.headers)
        except HostNotAllowed as exc:
            body = msgspec.json.encode({"error": {"code": 400, "message": str(exc)}})
            return Response(body, status_code=400, media_type="application/json")

        async def answer(call: Any, info: Any) -> AgentCard:
            await security.authorize(call, info, _no_task)
            card: AgentCard = security.extended_card(server.agent.extended_card,
                                                     variant.card, info)
            return card

        inbound = Inbound(binding="jsonrpc", scope=request.scope,
                          headers=RequestHeaders(request.scope["headers"]),
                          codec=get_codec("0.3"), call=GetExtendedCard())
        try:
            card = await door.answer_beside(inbound, answer)
        except ExtendedCardNotConfigured as exc:
            return _refused(exc, 404, [])
        except A2AError as exc:
            return _refused(exc, *(refusal(exc) or (400, [])))
        except Exception:  # the agent's extended_card hook failed: 500, in JSON as any refusal
            log.exception("internal error handling GET %s", EXTENDED_CARD_PATH)
            return _refused(InternalError("Internal error"), 500, [])
        body = card_document(card)
        return Response(body, media_type="application/json",
                        headers={"Cache-Control": "private, no-store"})

    return endpoint
