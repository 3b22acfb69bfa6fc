"""Shared pieces of the security tests: certificates, tokens, TLS servers, requests per dialect."""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from joserfc import jwt
from joserfc.jwk import ECKey

from interlingua.server.auth import uvicorn_tls_options
from tests.live import bind_loopback, live_server

# ---------------------------------------------------------------- certificates


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write(path: Path, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()))


@dataclass
class Authority:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @classmethod
    def make(cls, cn: str) -> Authority:
        key = _key()
        now = dt.datetime.now(dt.UTC)
        cert = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn))
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(days=1))
                .not_valid_after(now + dt.timedelta(days=30))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(
                    digital_signature=True, key_cert_sign=True, crl_sign=True,
                    content_commitment=False, key_encipherment=False, data_encipherment=False,
                    key_agreement=False, encipher_only=False, decipher_only=False),
                    critical=True)
                .sign(key, hashes.SHA256()))
        return cls(cert, key)

    def issue(self, path: Path, cn: str, *, server: bool = False,
              expired: bool = False) -> Path:
        key = _key()
        now = dt.datetime.now(dt.UTC)
        start, end = ((now - dt.timedelta(days=10), now - dt.timedelta(days=1)) if expired
                      else (now - dt.timedelta(days=1), now + dt.timedelta(days=30)))
        builder = (x509.CertificateBuilder().subject_name(_name(cn))
                   .issuer_name(self.cert.subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(start).not_valid_after(end)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                                  critical=True))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False).add_extension(
                x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        else:
            builder = builder.add_extension(
                x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        _write(path, builder.sign(self.key, hashes.SHA256()), key)
        return path

    def write(self, path: Path) -> Path:
        path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        return path


@dataclass
class PKI:
    ca: Path
    server: Path
    alice: Path
    bob: Path
    eve: Path
    expired: Path
    stranger: Path

    @classmethod
    def make(cls, root: Path) -> PKI:
        ca = Authority.make("Test CA")
        other = Authority.make("Other CA")
        return cls(
            ca=ca.write(root / "ca.pem"),
            server=ca.issue(root / "server.pem", "localhost", server=True),
            alice=ca.issue(root / "alice.pem", "alice"),
            bob=ca.issue(root / "bob.pem", "bob"),
            eve=ca.issue(root / "eve.pem", "eve"),
            expired=ca.issue(root / "expired.pem", "alice", expired=True),
            stranger=other.issue(root / "stranger.pem", "alice"),
        )


# ---------------------------------------------------------------------- tokens


class Issuer:
    """A JWT issuer with an ES256 key (its JWKS is ``jwks``)."""

    def __init__(self, iss: str = "https://id.example", kid: str = "k1") -> None:
        self.iss = iss
        self.key = ECKey.generate_key("P-256", private=True, parameters={"kid": kid})
        self.kid = kid

    @property
    def jwks(self) -> dict[str, Any]:
        return {"keys": [dict(self.key.as_dict(private=False), kid=self.kid, alg="ES256")]}

    def token(self, sub: str, *, aud: str = "a2a-test", ttl: int = 300, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": self.iss, "aud": aud, "sub": sub, "iat": now, "exp": now + ttl, **claims}
        return jwt.encode({"alg": "ES256", "kid": self.kid}, body, self.key)


# --------------------------------------------------------------------- servers


@contextlib.contextmanager
def serve_app(app: Any, sock: Any, *, certfile: str | None = None,
              client_ca: str | None = None, **options: Any) -> Iterator[str]:
    """Serve ``app`` on ``sock`` (HTTPS when ``certfile`` is given); yields its base URL.

    ``live_server`` underneath: errors after start-up and a server that does not
    stop fail the test.
    """
    tls = uvicorn_tls_options(certfile, None, client_ca)
    with live_server(app, sock=sock, **tls, **options) as base:
        yield base


@contextlib.contextmanager
def serve_agent(agent: Any, *, certfile: str | None = None, client_ca: str | None = None,
                **create_app_kwargs: Any) -> Iterator[str]:
    """``agent`` behind ``create_app(**kwargs)`` on a loopback port its card names."""
    from interlingua.host import create_app

    sock = bind_loopback()
    host, port = sock.getsockname()[:2]
    scheme = "https" if certfile else "http"
    create_app_kwargs.setdefault("store", "memory://")
    app = create_app(agent, public_url=f"{scheme}://{host}:{port}", **create_app_kwargs)
    with serve_app(app, sock, certfile=certfile, client_ca=client_ca) as url:
        yield url


# --------------------------------------------------------- requests per dialect


def send_request(dialect: str, text: str = "hi", **extra: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """(JSON-RPC body, headers) of a message send in ``dialect``."""
    mid = str(uuid.uuid4())
    if dialect == "1.0":
        msg = {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]}
        params: dict[str, Any] = {"message": msg, **extra}
        return _rpc("SendMessage", params), {"A2A-Version": "1.0"}
    if dialect == "0.3":
        msg = {"kind": "message", "messageId": mid, "role": "user",
               "parts": [{"kind": "text", "text": text}]}
        return _rpc("message/send", {"message": msg, **extra}), {}
    assert dialect == "0.1"
    msg = {"role": "user", "parts": [{"type": "text", "text": text}]}
    return _rpc("tasks/send", {"id": f"task-{mid}", "message": msg, **extra}), {}


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}


#: the JSON-RPC code each dialect answers a refusal with (errors.py, DIALECTS.md §f.1)
UNAUTHENTICATED = {"1.0": -32600, "0.3": -32600, "0.1": -32007}
FORBIDDEN = {"1.0": -32600, "0.3": -32600, "0.1": -32008}
RATE_LIMITED = {"1.0": -32603, "0.3": -32603, "0.1": -32010}
UNAVAILABLE = {"1.0": -32603, "0.3": -32603, "0.1": -32011}
