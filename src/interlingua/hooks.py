"""Hook points of a server: where tracing, metrics and log ids are put in.

One ``Hooks`` is made per app and handed to the parts that do the work: the
front door (each request, with the name of the binding it came in on), the
turn runner (each executor turn), the writer (each store commit and what it
committed), the streams (each opened), the lease keeper (each heartbeat) and
the push dispatcher (each delivery, its attempts, its webhook's headers).
Observers (``observability/``) append to its lists before the app serves.

Every list is empty unless something registered, and each part looks at its
list once per unit of work (an attribute read and a truth test): with nothing
registered, nothing is allocated and nothing else runs.

An *around* hook is called as the work begins and returns the function to call
as it ends, with the exception it ended with (None when it did not fail).
Both run in the work's own context (asyncio task and context variables), so a
hook may make a span current at the start and detach it at the end. A hook's
failure is not the work's: it is logged and the work goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, Protocol

from .core.calls import Call

__all__ = [
    "Attempted",
    "CommitHook",
    "Committed",
    "DeliveryHook",
    "End",
    "Hooks",
    "RequestHook",
    "Requested",
    "TurnHook",
    "ended",
    "started",
]

log = logging.getLogger("interlingua.hooks")


class Requested(Protocol):
    """A request as a hook sees it (the engine's ``RequestInfo``)."""

    @property
    def binding(self) -> str: ...

    @property
    def dialect(self) -> str: ...

    @property
    def headers(self) -> Mapping[str, str]: ...


#: called as the work ends: the exception it ended with (None: it did not fail),
#: and for a request its result (None for a failure)
End = Callable[[BaseException | None, Any], None]

#: ``hook(method, call, request)`` as a request is dispatched (a unary call, or the
#: opening of a stream, whose method is then ``SendStreamingMessage`` for a send)
RequestHook = Callable[[str, Call, Requested], End]
#: ``hook(run)`` as an executor turn starts, in the turn's own asyncio task
TurnHook = Callable[[Any], End]
#: ``hook(run, events)`` as a batch of a run's events is written to the store
CommitHook = Callable[[Any, Sequence[Any]], End]
#: ``hook(delivery)`` as a push delivery (one outbox entry's attempt) begins
DeliveryHook = Callable[[Any], End]
#: ``listener(run, stored_events)`` after each commit
Committed = Callable[[Any, Sequence[Any]], None]
#: ``listener(attempt)`` for each push attempt's outcome, within its delivery
Attempted = Callable[[Any], None]


class Hooks:
    """The hook lists of one app; see the module's text for when each runs."""

    __slots__ = ("attempts", "commits", "committed", "deliveries", "renewals", "requests",
                 "streams", "turns", "webhook_headers")

    def __init__(self) -> None:
        self.requests: list[RequestHook] = []
        self.turns: list[TurnHook] = []
        self.commits: list[CommitHook] = []
        #: after each commit (the engine's ``on_commit`` listeners)
        self.committed: list[Committed] = []
        #: ``listener(stream)`` for each stream opened (a streaming send, a subscription)
        self.streams: list[Callable[[Any], None]] = []
        #: ``listener(result)`` for each lease heartbeat: "ok", "revoked" or "failed"
        self.renewals: list[Callable[[str], None]] = []
        self.deliveries: list[DeliveryHook] = []
        self.attempts: list[Attempted] = []
        #: ``hook(headers)`` adds headers to a webhook's POST (within its delivery)
        self.webhook_headers: list[Callable[[MutableMapping[str, str]], None]] = []

    @property
    def empty(self) -> bool:
        return not any(getattr(self, name) for name in self.__slots__)


def started(hooks: Sequence[Callable[..., End]], *args: Any) -> list[End]:
    """Call the around ``hooks`` as their work begins: the ends to call after it."""
    ends = []
    for hook in hooks:
        try:
            ends.append(hook(*args))
        except Exception:
            log.exception("a hook failed as its work began")
    return ends


def ended(ends: Sequence[End], error: BaseException | None, result: Any = None) -> None:
    """Call the ends ``started`` gave, last first (as nested ``with`` blocks end)."""
    for end in reversed(ends):
        try:
            end(error, result)
        except Exception:
            log.exception("a hook failed as its work ended")


def notify(listeners: Sequence[Callable[..., None]], *args: Any) -> None:
    """Call each listener; one's failure is logged, and the rest are still called."""
    for listener in listeners:
        try:
            listener(*args)
        except Exception:
            log.exception("a hook listener failed")
