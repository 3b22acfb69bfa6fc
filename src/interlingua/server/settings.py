"""The settings a service is built from (``ServiceSettings``): the CLI,
``create_app`` and the tests all fill this one object."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from ..bus.base import Bus
from ..core.origins import origin_of
from ..core.urls import http_url
from ..stores.base import Store
from .auth.config import AuthConfig
from .auth.limits import Limits
from .cards.signer import CardSigning
from .engine import EngineConfig
from .idempotency import MessageIds
from .push.settings import PushSettings

__all__ = ["YOUNG_GC_THRESHOLD", "ServiceOptions", "ServiceSettings"]

#: the cycle collector's first threshold while serving, unless the process's is higher:
#: above the young objects that 64 requests in flight hold (docs/architecture.md)
YOUNG_GC_THRESHOLD = 10_000


@dataclass(frozen=True, kw_only=True, slots=True)
class ServiceSettings:
    """Everything a service is built from. ``create_app``'s keywords are its fields
    (``create_app(agent, settings, **overrides)``); so are the CLI's options."""

    #: a URL (``memory://``, ``sqlite:///path.db``, ``postgresql://…``) or a Store
    store: str | Store = "memory://"
    #: ``local://`` (one process) or ``redis://…`` (replicas), or a Bus
    bus: str | Bus = "local://"
    #: the base URL clients reach the server at, for the card (never ``0.0.0.0``);
    #: None: each request's own (scheme, ``Host``, mount path)
    public_url: str | None = None
    #: without ``public_url``: the hosts answered (names, ``*.example.com``); others 400
    allowed_hosts: Sequence[str] | None = None
    #: without ``public_url``: read the ``X-Forwarded-*`` headers for the card's URLs
    trust_forwarded: bool = False
    #: the web pages (origins, ``https://app.example``) whose browsers may call the
    #: agent, beside its own; ``"*"``: any. A browser's request from another page is
    #: refused (HTTP 403; core/origins.py)
    allowed_origins: Sequence[str] = ()
    #: where JSON-RPC is served under the base URL (the v0.3 card's main ``url``)
    rpc_path: str = "/"
    #: bodies larger than this are refused before they are parsed (HTTP 413)
    max_body_bytes: int = 10 * 1024 * 1024
    #: requests one JSON-RPC batch may hold; a larger batch is one -32600 and runs nothing
    max_batch_items: int = 100
    #: bytes of one answer (a whole JSON-RPC batch's together): what would pass it is
    #: refused with an error naming the limit (JSON-RPC -32603, HTTP 500, gRPC
    #: RESOURCE_EXHAUSTED)
    max_answer_bytes: int = 16 * 1024 * 1024
    #: True: apply the spec's rule that a missing A2A-Version header means 0.3,
    #: and refuse a header that contradicts the method's dialect
    strict_versions: bool = False
    #: True: refuse payloads that mix dialects instead of reading them by their
    #: strongest marker
    strict_dialects: bool = False
    #: the engine's limits and timings
    engine_config: EngineConfig | None = None
    #: ``"content"`` or ``"strict"``: what a message id names (overrides
    #: ``engine_config.message_ids``; docs/lifecycle.md)
    message_ids: MessageIds | None = None
    #: webhook delivery (docs/push.md)
    push: PushSettings | None = None
    #: which credentials are accepted (the card declares the same; docs/security.md)
    auth: AuthConfig | None = None
    #: what callers may ask for
    limits: Limits | None = None
    #: sign the card
    card_signing: CardSigning | None = None
    #: once started, move the objects held so far out of the cycle collector's view
    #: (``gc.freeze``) until stopped (docs/architecture.md, "Performance")
    freeze_gc: bool = True
    #: while serving, the cycle collector's first threshold (when it is higher than the
    #: process's; None leaves it as it is), ibid.
    young_gc_threshold: int | None = YOUNG_GC_THRESHOLD
    #: count requests, turns and deliveries for Prometheus (docs/observability.md)
    metrics: bool = False
    #: OpenTelemetry spans: None when an SDK is set up when the service is built; or
    #: a ``TracerProvider`` to take them from
    tracing: bool | Any | None = None
    #: seconds a GetTask with ``currentGeneration`` (A2A 1.1, draft) is held at most
    #: before it is answered with the task as it is (overrides
    #: ``engine_config.long_poll_max_wait``; server/long_poll.py); 0: never held
    long_poll_max_wait: float | None = None
    #: the card's interfaces name protocol version 1.1 (draft), not 1.0: off by
    #: default, see docs/versions.md "1.1 (draft)". Requests asking for 1.1 are
    #: served 1.1 either way.
    offer_1_1: bool = False

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_batch_items", "max_answer_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)!r}")
        if self.young_gc_threshold is not None and self.young_gc_threshold < 1:
            raise ValueError("young_gc_threshold must be at least 1 (or None: as it is), "
                             f"got {self.young_gc_threshold!r}")
        if self.long_poll_max_wait is not None and not self.long_poll_max_wait >= 0:  # NaN
            raise ValueError("long_poll_max_wait must not be negative")
        if not isinstance(self.store, str) and not hasattr(self.store, "open"):
            raise ValueError(f"store must be a store URL or a Store, not "
                            f"{type(self.store).__name__}")
        if self.public_url is not None:
            _check_public_url(self.public_url)
        if isinstance(self.allowed_hosts, str):
            raise ValueError("allowed_hosts is a list of host names, not one string")
        if isinstance(self.allowed_origins, str):
            raise ValueError("allowed_origins is a list of origins, not one string")
        for origin in self.allowed_origins:
            if origin != "*":
                origin_of(origin)  # a ValueError naming it

    def replace(self, **overrides: Any) -> ServiceSettings:
        """These settings with ``overrides`` (field names); ``TypeError`` naming an
        unknown one."""
        unknown = sorted(overrides.keys() - _FIELDS)
        if unknown:
            raise TypeError(f"unexpected keyword argument {unknown[0]!r} (not a setting of "
                            "ServiceSettings)")
        return dataclasses.replace(self, **overrides) if overrides else self


_FIELDS = frozenset(f.name for f in dataclasses.fields(ServiceSettings))


def _check_public_url(url: str) -> None:
    """A ValueError unless ``url`` is an http(s) URL with a host (the card names it)."""
    try:
        http_url(url)
    except ValueError as exc:
        raise ValueError(f"public_url {url!r} {exc}") from None


class ServiceOptions(TypedDict, total=False):
    """``ServiceSettings``' fields as keywords (``create_app(agent, **options)``)."""

    store: str | Store
    bus: str | Bus
    public_url: str | None
    allowed_hosts: Sequence[str] | None
    trust_forwarded: bool
    allowed_origins: Sequence[str]
    rpc_path: str
    max_body_bytes: int
    max_batch_items: int
    max_answer_bytes: int
    strict_versions: bool
    strict_dialects: bool
    engine_config: EngineConfig | None
    message_ids: MessageIds | None
    push: PushSettings | None
    auth: AuthConfig | None
    limits: Limits | None
    card_signing: CardSigning | None
    freeze_gc: bool
    young_gc_threshold: int | None
    metrics: bool
    tracing: bool | Any | None
    long_poll_max_wait: float | None
    offer_1_1: bool
