"""Resuming a gRPC stream: where each event's sequence number travels, and how
the card says so. (No grpc import here: the card is rendered without the extra.)

An event a gRPC stream sends carries the task's sequence number of that event in
its own ``metadata``, under ``EVENT_ID_KEY``, as a decimal string (of a snapshot of
several events, the last alone: see below). A
client that lost the stream calls ``SubscribeToTask`` (v0.3:
``TaskSubscription``) with the request metadata ``last-event-id: N`` and gets
every event after N from the task's log, then the live ones: no gap, no
duplicate — what ``Last-Event-ID`` does for server-sent events. (A snapshot of
several events under one number names it on its last alone, as over SSE:
``Entry.id_follows``.)
"""

from __future__ import annotations

import msgspec

from ..core.model import AgentCard, AgentExtension, AgentInterface
from .address import card_url

__all__ = ["EVENT_ID_KEY", "LAST_EVENT_ID", "RESUME_EXTENSION_URI", "grpc_interfaces",
           "resume_extension"]

#: the key of an event's sequence number in the metadata of each streamed event
EVENT_ID_KEY = "interlingua.dev/eventId"
#: the request metadata that asks a subscription to resume after an event
LAST_EVENT_ID = "last-event-id"
RESUME_EXTENSION_URI = "https://interlingua.dev/ext/grpc-stream-resume/v1"


def grpc_interfaces(url: str, tenant: str | None = None) -> list[AgentInterface]:
    """The card's entries for the v1.0 and v0.3 services served at ``url`` (``host:port``,
    named ``dns:///host:port``; a URL is kept as it is).

    With ``tenant`` (one of several agents on that port, each known by the
    ``tenant`` its requests name) only v1.0's: v0.3's requests have no such field."""
    url = card_url(url)
    if tenant is not None:
        return [AgentInterface(url=url, binding="GRPC", protocol_version="1.0", tenant=tenant)]
    return [AgentInterface(url=url, binding="GRPC", protocol_version="1.0"),
            AgentInterface(url=url, binding="GRPC", protocol_version="0.3")]


def resume_extension(card: AgentCard) -> AgentCard:
    """``card`` declaring how gRPC streams resume."""
    if any(e.uri == RESUME_EXTENSION_URI for e in card.capabilities.extensions):
        return card
    ext = AgentExtension(
        uri=RESUME_EXTENSION_URI,
        description="gRPC streams resume: an event carries its sequence number in its "
                    f"metadata under {EVENT_ID_KEY!r} (a snapshot sent as several events, on "
                    "its last); subscribe with the request metadata "
                    f"'{LAST_EVENT_ID}: N' to receive the events after N.",
        required=False,
        params={"eventIdKey": EVENT_ID_KEY, "requestMetadata": LAST_EVENT_ID},
    )
    caps = msgspec.structs.replace(card.capabilities,
                                   extensions=[*card.capabilities.extensions, ext])
    return msgspec.structs.replace(card, capabilities=caps)
