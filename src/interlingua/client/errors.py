"""Errors raised on the client side of the wire.

    ClientError                 something went wrong before a valid A2A answer arrived
    ├── AgentUnreachable        no HTTP answer: refused, DNS, TLS, network
    │   ├── NotConnected        no connection could be made: nothing was sent
    │   ├── AgentTimeout        the agent did not answer in time
    │   │   └── TaskNotSettled  a blocking send's task was still running at the timeout
    │   └── CardNotFound        the URL answers, but serves no agent card
    ├── InvalidCard             the card is not an agent card we can read
    │   └── InsecureInterface   a card read over HTTPS names interfaces only in clear text
    ├── BadResponse             the answer is not JSON, not JSON-RPC, or not the dialect's shape
    └── DialectMismatch         the call does not exist in the dialect spoken to this agent

Errors the agent answers (task not found, invalid params, ...) are not here:
they arrive as the ``interlingua.core.errors.A2AError`` subclass the dialect's
codec decodes them into, so the same class means the same thing on both sides.
"""

from __future__ import annotations

__all__ = [
    "AgentTimeout",
    "AgentUnreachable",
    "BadResponse",
    "CardNotFound",
    "CardNotOffered",
    "ClientError",
    "DialectMismatch",
    "InsecureInterface",
    "InvalidCard",
    "NotConnected",
    "TaskNotSettled",
]


class ClientError(Exception):
    """A failure seen by the client; ``str(err)`` is a one-line explanation."""


class AgentUnreachable(ClientError):
    """The agent could not be reached at all."""


class NotConnected(AgentUnreachable):
    """No connection could be made (refused, no route, no such host): nothing was
    sent, so the call may safely go to another of the agent's interfaces."""


class AgentTimeout(AgentUnreachable):
    """The agent took longer than the client's timeout to answer."""


class TaskNotSettled(AgentTimeout):
    """A blocking send whose agent answered early (the task not yet finished nor
    waiting for input) and whose task did not settle within the timeout;
    ``task`` is the task as last read."""

    def __init__(self, message: str, task: object) -> None:
        super().__init__(message)
        self.task = task


class CardNotFound(AgentUnreachable):
    """Neither well-known path serves an agent card: there is no agent at this URL."""


class CardNotOffered(ClientError):
    """The agent answered, but gives no card the way it was asked for (a gRPC address
    whose agent refuses both card calls): read the card at its HTTP URL."""


class InvalidCard(ClientError):
    """The document found is not an agent card this client can read."""


class InsecureInterface(InvalidCard):
    """A card read over HTTPS whose every interface this client could use is on plain
    HTTP (or gRPC without TLS) on a host other than this machine: the credentials sent
    there would cross the network in clear text (``allow_insecure_interfaces``)."""


class BadResponse(ClientError):
    """The agent answered something that is not a valid answer in its dialect."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def too_deep(url: str) -> BadResponse:
    """What a peer's JSON nested deeper than the decoder goes (``RecursionError``
    from msgspec) is raised as."""
    return BadResponse(f"{url} answered with JSON nested too deeply to read")


def too_large(url: str, limit: int) -> BadResponse:
    """An answer (or a stream event) past the client's ``max_answer_bytes``."""
    return BadResponse(f"{url} answered more than {limit} bytes at once, the client's "
                       "max_answer_bytes")


class DialectMismatch(ClientError):
    """The call has no counterpart in the dialect used with this agent."""
