"""How an agent joins a mesh (kept apart from the binding: the CLI reads it
without loading the server)."""

from __future__ import annotations

import dataclasses
import ssl
from dataclasses import dataclass

from .topics import MeshURL, parse_mesh_url

__all__ = ["MeshSettings"]

#: the largest Session Expiry Interval MQTT 5 carries (a four-byte integer)
_MAX_EXPIRY = 2**32 - 1


@dataclass(frozen=True)
class MeshSettings:
    """How an agent joins a mesh.

    ``instance`` names this process among the agent's instances (its MQTT
    client id is ``{namespace}-{agent}-{instance}``): give the same name on
    a restart to pick up the session the broker kept, with the requests
    queued for it meanwhile. ``session_expiry``: seconds the broker keeps the
    session of an instance that is away (0: none). ``group``: the shared
    subscription group (default: the agent's name). ``http``: whether the
    agent also has an HTTP listener; without one its published card names its
    mesh address instead (mesh/card.py).

    ``profile`` is the topic layout: ``sam`` (Solace Agent Mesh, under
    ``namespace``) or ``emqx`` (A2A over MQTT, ``$a2a/v1/…/{org}/{unit}/{agent}``,
    mesh/emqx/); ``org`` and ``unit`` are the latter's.

    An ``mqtts://`` broker is checked against the system's CAs, or ``ca_bundle`` (a
    PEM file); ``insecure`` checks nothing. ``client_cert`` (a PEM, with its key or
    with ``client_key``) is presented to a broker that asks for one.
    """

    url: str
    namespace: str
    instance: str | None = None
    group: str | None = None
    session_expiry: int = 3600
    card_interval: float = 10.0
    reconnect_delay: float = 1.0
    #: how long a cancel handed to the other instances waits for one of them
    cancel_grace: float = 2.0
    http: bool = True
    profile: str = "sam"
    org: str | None = None
    unit: str | None = None
    ca_bundle: str | None = None
    client_cert: str | None = None
    client_key: str | None = None
    insecure: bool = False

    def __post_init__(self) -> None:
        # (names are checked where the profile lays out its topics: mesh/profiles.py)
        if not 0 <= self.session_expiry <= _MAX_EXPIRY:
            raise ValueError(f"session_expiry must be 0 to {_MAX_EXPIRY} seconds (MQTT 5's "
                             f"range), got {self.session_expiry!r}")
        for name in ("card_interval", "reconnect_delay"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be above 0 seconds, got {getattr(self, name)!r}")
        if not self.cancel_grace >= 0:
            raise ValueError(f"cancel_grace must not be negative, got {self.cancel_grace!r}")
        if self.client_key is not None and self.client_cert is None:
            raise ValueError("client_key needs client_cert")
        if self.ca_bundle is not None and self.insecure:
            raise ValueError("ca_bundle and insecure: choose one (insecure checks nothing)")
        self.tls_context()  # files that cannot be read are said now, not at connect

    def tls_context(self) -> ssl.SSLContext | None:
        """How the broker is reached: None for ``mqtt://``, else a context as the
        TLS settings say."""
        if not parse_mesh_url(self.url).tls:
            return None
        from ..client.errors import ClientError
        from ..client.tls import ssl_context

        cert = None if self.client_cert is None else (
            (self.client_cert, self.client_key) if self.client_key else self.client_cert)
        try:
            return ssl_context(False if self.insecure else (self.ca_bundle or True), cert)
        except ClientError as exc:
            raise ValueError(str(exc)) from None

    def broker_url(self) -> MeshURL:
        """The broker, with the TLS context its connections use (``mqtts://``)."""
        url = parse_mesh_url(self.url)
        return dataclasses.replace(url, tls_context=self.tls_context()) if url.tls else url
