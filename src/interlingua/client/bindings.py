"""The bindings the client speaks, and how a binding is chosen.

A binding is a way of carrying A2A calls over the wire: JSON-RPC
(``"jsonrpc"``, card name ``JSONRPC``), HTTP+JSON (``"rest"``, card name
``HTTP+JSON``) or gRPC (``"grpc"``, card name ``GRPC``; needs the ``grpc`` extra). Each entry of ``BINDINGS`` names the binding, the card's
spelling of it, the dialects the client speaks over it and how to make its
``Binding`` (the object that sends one call or opens one stream). Adding a
binding is adding one entry here; card reading, choice and fallback work
from this table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ..core.calls import Call, Result, SendMessage, SubscribeToTask
from .card import Endpoint
from .errors import ClientError
from .generations import GENERATIONS_VERSION
from .stream import Connection
from .transport import Transport

__all__ = ["BINDINGS", "GRPC_MISSING", "Binding", "BindingSpec", "binding_spec", "check_binding"]


class Binding(Protocol):
    """One binding's framing: a call and its answer, or a stream's first request."""

    async def call(self, endpoint: Endpoint, call: Call) -> tuple[Result, bytes]:
        """The call's result, and its raw JSON as the agent sent it."""
        ...

    async def open_stream(
        self, endpoint: Endpoint, call: SendMessage | SubscribeToTask, last_event_id: int | None
    ) -> Connection: ...


@dataclass(frozen=True)
class BindingSpec:
    #: the name the client and the CLI take (``binding="rest"``)
    name: str
    #: how cards spell it (``AgentInterface.binding``)
    card_name: str
    #: the dialects spoken over it, best first
    dialects: tuple[str, ...]
    #: its framing over the client's HTTP transport and headers
    make: Callable[[Transport, Mapping[str, str]], Binding]
    #: whether what it needs is installed (gRPC: the ``grpc`` extra)
    available: Callable[[], bool] = lambda: True


def _jsonrpc(transport: Transport, headers: Mapping[str, str]) -> Binding:
    from .jsonrpc import JSONRPCBinding

    return JSONRPCBinding(transport, headers)


def _rest(transport: Transport, headers: Mapping[str, str]) -> Binding:
    from .rest import RESTBinding

    return RESTBinding(transport, headers)


def _grpc(transport: Transport, headers: Mapping[str, str]) -> Binding:
    if not _grpc_available():
        raise ClientError(GRPC_MISSING)
    from .grpc import GrpcClientBinding

    return GrpcClientBinding(transport, headers)


def _grpc_available() -> bool:
    from ..grpc_wire import available

    return available()


GRPC_MISSING = "the gRPC binding needs the grpc extra: pip install 'interlingua[grpc]'"

#: the bindings this client speaks, in its order of preference
BINDINGS: dict[str, BindingSpec] = {
    "jsonrpc": BindingSpec("jsonrpc", "JSONRPC", ("1.0", "0.3", "0.1"), _jsonrpc),
    "rest": BindingSpec("rest", "HTTP+JSON", ("1.0", "0.3"), _rest),
    "grpc": BindingSpec("grpc", "GRPC", ("1.0", "0.3"), _grpc, _grpc_available),
}


def binding_spec(name: str) -> BindingSpec:
    """The entry for ``name`` (the client's name or the card's); ``ValueError`` if none."""
    key = name.strip().lower()
    for spec in BINDINGS.values():
        if key in (spec.name, spec.card_name.lower()):
            return spec
    raise ValueError(f"unknown binding {name!r}; use one of {', '.join(BINDINGS)}")


def check_binding(binding: str | None, dialect: str | None) -> BindingSpec | None:
    """The entry for ``binding`` (None when not given), which must speak ``dialect``
    when one is given; ``ValueError`` otherwise."""
    if binding is None:
        return None
    spec = binding_spec(binding)
    if dialect == GENERATIONS_VERSION:
        dialect = "1.0"  # 1.1 is 1.0's wire plus task generations, on every binding of it
    if dialect is not None and dialect not in spec.dialects:
        raise ValueError(f"the {spec.name} binding is spoken in A2A "
                         f"{', '.join(spec.dialects)}, not {dialect}")
    return spec

