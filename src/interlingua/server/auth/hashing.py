"""Stored secrets: salted, slow hashes (PBKDF2-SHA256 or scrypt), checked in constant time.

A hash is one string, so it can live in a config file:

    pbkdf2_sha256$<iterations>$<salt b64>$<hash b64>
    scrypt$<n>$<r>$<p>$<salt b64>$<hash b64>

``hash_secret("s3cret")`` makes one; ``verify_secret(hash, candidate)``
checks a candidate. API keys are long random strings, so a fast keyed digest
is enough for them (``key_digest``): they are kept only as SHA-256 digests.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

__all__ = ["decoy_hash", "hash_secret", "is_hash", "key_digest", "verify_secret"]

_PBKDF2_ITERATIONS = 600_000
_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def hash_secret(secret: str, *, method: str = "pbkdf2_sha256",
                iterations: int = _PBKDF2_ITERATIONS) -> str:
    """A salted hash of ``secret`` to store instead of it."""
    salt = os.urandom(16)
    data = secret.encode("utf-8")
    if method == "pbkdf2_sha256":
        digest = hashlib.pbkdf2_hmac("sha256", data, salt, iterations)
        return f"pbkdf2_sha256${iterations}${_b64(salt)}${_b64(digest)}"
    if method == "scrypt":
        digest = hashlib.scrypt(data, salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P,
                                dklen=32)
        return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${_b64(salt)}${_b64(digest)}"
    raise ValueError(f"unknown hash method {method!r}; use pbkdf2_sha256 or scrypt")


def decoy_hash(like: str | None = None) -> str:
    """A hash no secret matches whose check costs what checking ``like`` costs (the
    same method and parameters; the default ones without ``like``): what an unknown
    user is checked against, so that timing does not tell which users exist."""
    method, params, salt, expected = (
        ("pbkdf2_sha256", (_PBKDF2_ITERATIONS,), b"\0" * 16, b"\0" * 32) if like is None
        else _parse(like))
    return "$".join([method, *map(str, params), _b64(os.urandom(len(salt))),
                     _b64(os.urandom(len(expected)))])


def is_hash(value: str) -> bool:
    """True when ``value`` is a hash this module can check."""
    try:
        _parse(value)
    except ValueError:
        return False
    return True


def _parse(stored: str) -> tuple[str, tuple[int, ...], bytes, bytes]:
    parts = stored.split("$")
    try:
        if parts[0] == "pbkdf2_sha256" and len(parts) == 4:
            return parts[0], (int(parts[1]),), _unb64(parts[2]), _unb64(parts[3])
        if parts[0] == "scrypt" and len(parts) == 6:
            params = (int(parts[1]), int(parts[2]), int(parts[3]))
            return parts[0], params, _unb64(parts[4]), _unb64(parts[5])
    except (ValueError, IndexError):
        pass
    raise ValueError("not a pbkdf2_sha256$... or scrypt$... hash")


def verify_secret(stored: str, candidate: str) -> bool:
    """Does ``candidate`` hash to ``stored``? (constant-time comparison)"""
    method, params, salt, expected = _parse(stored)
    data = candidate.encode("utf-8")
    if method == "pbkdf2_sha256":
        digest = hashlib.pbkdf2_hmac("sha256", data, salt, params[0])
    else:
        n, r, p = params
        digest = hashlib.scrypt(data, salt=salt, n=n, r=r, p=p, dklen=len(expected),
                                maxmem=256 * 1024 * 1024)
    return hmac.compare_digest(digest, expected)


def key_digest(key: str) -> bytes:
    """The SHA-256 digest an API key is kept as."""
    return hashlib.sha256(key.encode("utf-8")).digest()
