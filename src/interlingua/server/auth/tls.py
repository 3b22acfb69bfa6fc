"""TLS for the server: uvicorn options and the verified client certificate.

uvicorn terminates TLS but does not pass the peer's certificate to the ASGI
app (its scope has no ``tls`` extension). The certificate is on the
connection's transport (``transport.get_extra_info("ssl_object")``), which
the HTTP protocol object sees and the app does not. So ``serve`` runs
uvicorn with a protocol class of ours (``tls_protocol_class()``: uvicorn's
own httptools or h11 protocol, subclassed) that, once per connection, reads
the verified certificate and hands every request of that connection to the
app with it: in ``scope["extensions"]["tls"]`` (the ASGI TLS extension's
shape: ``client_cert_chain`` as PEM, ``client_cert_name``, ``tls_version``
...) and, already parsed, in ``scope["interlingua.client_certificate"]``.

``client_certificate(scope)`` reads either, so a server that fills the
ASGI TLS extension itself (Hypercorn, say) works as well.

The handshake asks for a certificate without requiring one
(``CERT_OPTIONAL``): a client without one still reads the public card and
is answered 401 by the app, not cut off mid-handshake. A certificate that
the client CA did not sign, or that expired, fails the handshake.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = [
    "CLIENT_CERT_SCOPE_KEY",
    "ClientCertificate",
    "client_certificate",
    "tls_protocol_class",
    "uvicorn_tls_options",
]

CLIENT_CERT_SCOPE_KEY = "interlingua.client_certificate"


class ClientCertificate(msgspec.Struct, frozen=True):
    """A verified client certificate: subject and issuer as ``{attribute: value}``."""

    subject: dict[str, str]
    issuer: dict[str, str]
    serial: str = ""
    not_after: str = ""
    der: bytes = b""


def _names(rdns: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for rdn in rdns or ():
        for attr, value in rdn:
            out.setdefault(str(attr), str(value))
    return out


def certificate_of(ssl_object: ssl.SSLObject | ssl.SSLSocket | None) -> ClientCertificate | None:
    """The verified peer certificate of a TLS connection, if it presented one."""
    if ssl_object is None:
        return None
    info = ssl_object.getpeercert()
    if not info:
        return None
    der = ssl_object.getpeercert(binary_form=True) or b""
    return ClientCertificate(
        subject=_names(info.get("subject")),
        issuer=_names(info.get("issuer")),
        serial=str(info.get("serialNumber", "")),
        not_after=str(info.get("notAfter", "")),
        der=der,
    )


def _tls_extension(ssl_object: ssl.SSLObject, cert: ClientCertificate | None) -> dict[str, Any]:
    chain: list[str] = []
    name = None
    if cert is not None and cert.der:
        chain.append(ssl.DER_cert_to_PEM_cert(cert.der))
        name = ",".join(f"{k}={v}" for k, v in cert.subject.items())
    version = {"TLSv1.2": 0x0303, "TLSv1.3": 0x0304}.get(ssl_object.version() or "")
    return {"server_cert": None, "client_cert_chain": chain, "client_cert_name": name,
            "client_cert_error": None, "tls_version": version, "cipher_suite": None}


def _from_pem(pem: str) -> ClientCertificate | None:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    try:
        cert = x509.load_pem_x509_certificate(pem.encode("ascii"))
    except ValueError:
        return None
    short = {NameOID.COMMON_NAME: "commonName", NameOID.ORGANIZATION_NAME: "organizationName",
             NameOID.ORGANIZATIONAL_UNIT_NAME: "organizationalUnitName",
             NameOID.COUNTRY_NAME: "countryName", NameOID.EMAIL_ADDRESS: "emailAddress"}

    def names(name: x509.Name) -> dict[str, str]:
        out: dict[str, str] = {}
        for attr in name:
            key = short.get(attr.oid, attr.oid.dotted_string)
            out.setdefault(key, str(attr.value))
        return out

    from cryptography.hazmat.primitives.serialization import Encoding

    return ClientCertificate(subject=names(cert.subject), issuer=names(cert.issuer),
                             serial=format(cert.serial_number, "X"),
                             not_after=cert.not_valid_after_utc.isoformat(),
                             der=cert.public_bytes(Encoding.DER))


def client_certificate(scope: Mapping[str, Any]) -> ClientCertificate | None:
    """The verified client certificate of the request's connection, if any."""
    cert = scope.get(CLIENT_CERT_SCOPE_KEY)
    if isinstance(cert, ClientCertificate):
        return cert
    tls = (scope.get("extensions") or {}).get("tls")
    if isinstance(tls, Mapping):
        chain = tls.get("client_cert_chain") or []
        if chain and tls.get("client_cert_error") is None:
            return _from_pem(chain[0])
    return None


class _WithCertificate:
    """The app, for one TLS connection: every request's scope gets its certificate."""

    __slots__ = ("app", "cert", "extension")

    def __init__(self, app: Any, cert: ClientCertificate | None, extension: dict[str, Any]) -> None:
        self.app = app
        self.cert = cert
        self.extension = extension

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") in ("http", "websocket"):
            extensions = scope.setdefault("extensions", {})
            extensions["tls"] = self.extension
            scope[CLIENT_CERT_SCOPE_KEY] = self.cert
        await self.app(scope, receive, send)


def tls_protocol_class() -> type:
    """uvicorn's HTTP protocol (httptools when installed, else h11), passing client certificates on."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:  # pragma: no cover - httptools comes with uvicorn[standard]
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base  # type: ignore[assignment]

    class CertificateProtocol(Base):
        def connection_made(self, transport: Any) -> None:
            ssl_object = transport.get_extra_info("ssl_object")
            if ssl_object is not None:
                cert = certificate_of(ssl_object)
                self.app = _WithCertificate(self.app, cert, _tls_extension(ssl_object, cert))
            super().connection_made(transport)

    return CertificateProtocol


def uvicorn_tls_options(certfile: str | None, keyfile: str | None = None,
                        client_ca: str | None = None, *,
                        keyfile_password: str | None = None) -> dict[str, Any]:
    """``uvicorn.Config`` keyword arguments for HTTPS, and for client certificates
    (checked against ``client_ca``) when it is given."""
    if not certfile:
        if keyfile or client_ca:
            raise ValueError("a key file or a client CA needs a certificate file (--certfile)")
        return {}
    options: dict[str, Any] = {"ssl_certfile": certfile, "ssl_keyfile": keyfile}
    if keyfile_password:
        options["ssl_keyfile_password"] = keyfile_password
    if client_ca:
        options.update(ssl_ca_certs=client_ca, ssl_cert_reqs=ssl.CERT_OPTIONAL,
                       http=tls_protocol_class())
    return options
