"""Signing webhook bodies: a key ring of server keys and its public JWKS.

Every notification carries a detached-payload compact JWS (RFC 7515
Appendix F) of its body in the ``X-A2A-Signature`` header:
``BASE64URL(protected) + ".." + BASE64URL(signature)``. A receiver puts
``BASE64URL(body)`` between the dots and verifies the result with the key
named by ``kid`` from the agent's JWKS (``/.well-known/jwks.json``). The
protected header holds ``alg``, ``kid``, ``typ`` (``a2a-push+jws``), ``iat``
(seconds since the epoch, for a replay window) and ``nid`` (the notification
id, also sent as ``X-A2A-Notification-Id``, so that it cannot be swapped).

Keys are generated at first start (ES256 on P-256 by default, RS256 on
RSA 2048 as an option) and kept in a key file (mode 0600) or only in memory;
a configured PEM can be used instead. A rotation makes a new key the signing
key; the old one stays in the JWKS while deliveries signed with it are in
flight and for a grace period after, so receivers that cached the old set
still verify. Private keys are never logged or shown in a repr.
"""

from __future__ import annotations

import base64
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
from joserfc import jws
from joserfc.jwk import ECKey, RSAKey

from ..core.push_wire import ALGORITHMS, JWS_REGISTRY, SIGNATURE_HEADER, SIGNATURE_TYPE

__all__ = [
    "ALGORITHMS",
    "JWS_REGISTRY",
    "SIGNATURE_HEADER",
    "SIGNATURE_TYPE",
    "KeyRing",
    "SigningKey",
    "attach_payload",
    "check_signing_pem",
]


Key = ECKey | RSAKey


class _KeyFileEntry(msgspec.Struct, omit_defaults=True):
    kid: str
    alg: str
    created_at: float
    pem: str
    retired_at: float | None = None


class _KeyFile(msgspec.Struct):
    keys: list[_KeyFileEntry]


class SigningKey:
    """One key of the ring; ``retired_at`` is set once another key signs."""

    __slots__ = ("alg", "created_at", "key", "kid", "retired_at")

    def __init__(self, key: Key, alg: str, created_at: float,
                 retired_at: float | None = None) -> None:
        self.key = key
        self.alg = alg
        self.kid = key.thumbprint()
        self.created_at = created_at
        self.retired_at = retired_at

    def public_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = dict(self.key.as_dict(private=False))
        jwk.update(kid=self.kid, alg=self.alg, use="sig")
        return jwk

    def __repr__(self) -> str:
        return f"SigningKey(kid={self.kid!r}, alg={self.alg!r})"


def _generate(alg: str) -> Key:
    if alg == "ES256":
        return ECKey.generate_key("P-256", private=True)
    if alg == "RS256":
        return RSAKey.generate_key(2048, private=True)
    raise ValueError(f"signing_alg must be one of {', '.join(ALGORITHMS)}, not {alg!r}")


def _import_pem(pem: str | bytes) -> tuple[Key, str]:
    data = pem.encode() if isinstance(pem, str) else pem
    try:
        ec = ECKey.import_key(data)
    except Exception:
        ec = None
    if ec is not None:
        if not ec.is_private:
            raise ValueError("the signing key PEM holds a public key; a private key is needed")
        if ec.curve_name != "P-256":
            raise ValueError(f"an EC signing key must be on P-256 (ES256), not {ec.curve_name}")
        return ec, "ES256"
    try:
        rsa = RSAKey.import_key(data)
    except Exception:
        raise ValueError("the signing key PEM is neither an EC P-256 nor an RSA key") from None
    if not rsa.is_private:
        raise ValueError("the signing key PEM holds a public key; a private key is needed")
    return rsa, "RS256"


def check_signing_pem(pem: str | bytes) -> str:
    """The algorithm of a signing key given as PEM; ``ValueError`` saying what is wrong."""
    return _import_pem(pem)[1]


def attach_payload(signature: str, body: bytes) -> str:
    """The full compact JWS of a detached signature and its body."""
    protected, _, sig = signature.partition("..")
    return f"{protected}.{_b64url(body)}.{sig}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class KeyRing:
    """The server's signing keys: one that signs, retired ones still published."""

    def __init__(
        self,
        *,
        alg: str = "ES256",
        path: str | Path | None = None,
        pem: str | None = None,
        grace: float = 7 * 24 * 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if alg not in ALGORITHMS:
            raise ValueError(f"signing_alg must be one of {', '.join(ALGORITHMS)}, not {alg!r}")
        self.alg = alg
        self.path = Path(path) if path is not None else None
        self._pem = pem
        self.grace = grace
        self._clock = clock
        self._keys: list[SigningKey] = []  # the signing key last
        self._in_flight: dict[str, int] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ keys

    @property
    def loaded(self) -> bool:
        return bool(self._keys)

    def load(self) -> None:
        """Read the keys (or make and save the first one). Blocking: file I/O
        and key generation; call it from a thread in async code."""
        with self._lock:
            if self._keys:
                return
            if self._pem is not None:
                key, alg = _import_pem(self._pem)
                self._keys = [SigningKey(key, alg, self._clock())]
                return
            if self.path is None:
                self._keys = [SigningKey(_generate(self.alg), self.alg, self._clock())]
                return
            if not self.path.exists():
                first = SigningKey(_generate(self.alg), self.alg, self._clock())
                if self._create_file([first]):
                    self._keys = [first]
                    return
            self._keys = self._read_file()
            if not self._keys:
                self._keys = [SigningKey(_generate(self.alg), self.alg, self._clock())]
                self._write_file()

    def all_keys(self) -> list[SigningKey]:
        """Every key kept, oldest first; the last one signs."""
        if not self._keys:
            self.load()
        return list(self._keys)

    @property
    def current(self) -> SigningKey:
        if not self._keys:
            self.load()
        return self._keys[-1]

    def rotate(self, alg: str | None = None) -> SigningKey:
        """Sign with a new key from now on; the old one is retired (still published)."""
        alg = alg or self.alg
        if not self._keys:
            self.load()
        with self._lock:
            now = self._clock()
            new = SigningKey(_generate(alg), alg, now)
            for key in self._keys:
                if key.retired_at is None:
                    key.retired_at = now
            self._keys = [k for k in self._keys if self._published(k, now)] + [new]
            if self.path is not None and self._pem is None:
                self._write_file()
            return new

    def _published(self, key: SigningKey, now: float) -> bool:
        return (
            key.retired_at is None
            or now - key.retired_at < self.grace
            or self._in_flight.get(key.kid, 0) > 0
        )

    def jwks(self) -> dict[str, Any]:
        """The public keys receivers verify with: the signing key and every
        retired key still within its grace period or still in use."""
        if not self._keys:
            self.load()
        now = self._clock()
        return {"keys": [k.public_jwk() for k in reversed(self._keys) if self._published(k, now)]}

    def jwks_json(self) -> bytes:
        return msgspec.json.encode(self.jwks())

    # --------------------------------------------------------------- signing

    def sign(self, body: bytes, *, notification_id: str) -> tuple[str, str]:
        """(the detached compact JWS of ``body``, the kid that signed it)."""
        key = self.current
        protected = {
            "alg": key.alg,
            "kid": key.kid,
            "typ": SIGNATURE_TYPE,
            "iat": int(self._clock()),
            "nid": notification_id,
        }
        token = jws.serialize_compact(protected, body, key.key, registry=JWS_REGISTRY)
        head, _, rest = token.partition(".")
        _, _, sig = rest.partition(".")
        return f"{head}..{sig}", key.kid

    @contextlib.contextmanager
    def in_use(self, kid: str) -> Iterator[None]:
        """Keep ``kid`` published while a delivery signed with it is in flight."""
        self._in_flight[kid] = self._in_flight.get(kid, 0) + 1
        try:
            yield
        finally:
            left = self._in_flight[kid] - 1
            if left:
                self._in_flight[kid] = left
            else:
                del self._in_flight[kid]

    # ------------------------------------------------------------------ file

    def _entries(self) -> _KeyFile:
        return _KeyFile(keys=[
            _KeyFileEntry(
                kid=k.kid, alg=k.alg, created_at=k.created_at, retired_at=k.retired_at,
                pem=k.key.as_pem(private=True).decode("ascii"),
            )
            for k in self._keys
        ])

    def _create_file(self, keys: list[SigningKey]) -> bool:
        """Write the first key file; False if another process made one first."""
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        saved, self._keys = self._keys, keys
        try:
            data = msgspec.json.encode(self._entries())
        finally:
            self._keys = saved
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return True

    def _write_file(self) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(msgspec.json.encode(self._entries()))
        os.replace(tmp, self.path)

    def _read_file(self) -> list[SigningKey]:
        assert self.path is not None
        try:
            content = self.path.read_bytes()
            doc = msgspec.json.decode(content, type=_KeyFile)
        except OSError as exc:
            raise ValueError(f"cannot read the signing key file {self.path}: {exc}") from None
        except msgspec.DecodeError as exc:
            what = ("a PEM key, not a key file of interlingua's (the JSON key ring it makes "
                    "at a path where there is none, and rotates keys in): give a new path"
                    if b"-----BEGIN" in content[:4096] else str(exc))
            raise ValueError(f"cannot read the signing key file {self.path}: {what}") from None
        keys = []
        for entry in doc.keys:
            key, alg = _import_pem(entry.pem)
            keys.append(SigningKey(key, entry.alg or alg, entry.created_at, entry.retired_at))
        # the signing key is the one not retired (the newest if several)
        keys.sort(key=lambda k: (k.retired_at is None, k.created_at))
        return keys
