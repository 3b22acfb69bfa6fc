"""Signing keys: made once and kept, rotated with the old key still published for a while."""

from __future__ import annotations

import base64
import logging
import stat
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from interlingua.server.keyring import attach_payload
from interlingua.server.push import KeyRing
from interlingua.server.push.admin import key_path_for, rotate_signing_key, signing_keys

from .helpers import dev_settings, echo, start_engine


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def verifies(ring: KeyRing, signature: str, body: bytes) -> bool:
    token = attach_payload(signature, body)
    kid = jwt.get_unverified_header(token)["kid"]
    keys = [k for k in ring.jwks()["keys"] if k["kid"] == kid]
    if not keys:
        return False
    try:
        jwt.api_jws.decode(token, key=jwt.PyJWK(keys[0]), algorithms=["ES256", "RS256"])
    except jwt.InvalidSignatureError:
        return False
    return True


async def test_keys_are_made_at_first_start_and_kept(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    store = f"sqlite:///{tmp_path}/tasks.db"
    engine = await start_engine(echo, dev_settings(), store)
    kid = engine.push.keys.current.kid
    await engine.stop()
    key_file = tmp_path / "tasks.push-keys.json"
    assert key_path_for(store) == key_file
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    engine = await start_engine(echo, dev_settings(), store)
    assert engine.push.keys.current.kid == kid  # the same key after a restart
    await engine.stop()
    assert "PRIVATE KEY" not in caplog.text
    assert "PRIVATE" not in repr(engine.push.keys.current)


async def test_a_memory_store_keeps_its_key_in_memory(tmp_path: Path) -> None:
    engine = await start_engine(echo, dev_settings())
    try:
        assert engine.push.keys.path is None and engine.push.keys.loaded
    finally:
        await engine.stop()


def test_rotation_keeps_the_old_key_published_for_the_grace_period(tmp_path: Path) -> None:
    clock = Clock()
    ring = KeyRing(path=tmp_path / "keys.json", grace=3600, clock=clock)
    old_sig, old_kid = ring.sign(b"body-1", notification_id="t:c:1")
    new_kid = ring.rotate().kid
    assert new_kid != old_kid
    sig, kid = ring.sign(b"body-2", notification_id="t:c:2")
    assert kid == new_kid
    assert [k["kid"] for k in ring.jwks()["keys"]] == [new_kid, old_kid]
    assert verifies(ring, old_sig, b"body-1") and verifies(ring, sig, b"body-2")
    assert not verifies(ring, sig, b"body-3")

    # a restart reads the same state back
    again = KeyRing(path=tmp_path / "keys.json", grace=3600, clock=clock)
    again.load()
    assert again.current.kid == new_kid
    assert [k["kid"] for k in again.jwks()["keys"]] == [new_kid, old_kid]

    clock.now += 3601
    assert [k["kid"] for k in ring.jwks()["keys"]] == [new_kid]
    assert not verifies(ring, old_sig, b"body-1")


def test_a_retired_key_in_use_stays_published_past_the_grace_period() -> None:
    clock = Clock()
    ring = KeyRing(grace=10, clock=clock)
    _, old_kid = ring.sign(b"x", notification_id="n")
    with ring.in_use(old_kid):
        ring.rotate()
        clock.now += 100
        assert old_kid in [k["kid"] for k in ring.jwks()["keys"]]
        ring.rotate()  # pruning on rotation spares it too
        assert old_kid in [k["kid"] for k in ring.jwks()["keys"]]
    assert old_kid not in [k["kid"] for k in ring.jwks()["keys"]]


def test_a_configured_pem_signs(tmp_path: Path) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    ring = KeyRing(pem=pem)
    sig, _ = ring.sign(b"hello", notification_id="n")
    token = attach_payload(sig, b"hello")
    # verified with the PEM's own public key, not with anything of ours
    public = private.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    assert jwt.api_jws.decode(token, key=public, algorithms=["ES256"]) == b"hello"
    with pytest.raises(ValueError, match="P-256"):
        KeyRing(pem=ec.generate_private_key(ec.SECP384R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()).decode()).load()


def test_the_signature_header_is_detached_and_names_the_notification() -> None:
    ring = KeyRing()
    sig, kid = ring.sign(b'{"a":1}', notification_id="task:cfg:7")
    protected, empty, _ = sig.split(".")
    assert empty == ""
    header = jwt.get_unverified_header(attach_payload(sig, b'{"a":1}'))
    assert header["kid"] == kid and header["nid"] == "task:cfg:7"
    assert isinstance(header["iat"], int) and header["typ"] == "a2a-push+jws"
    assert base64.urlsafe_b64decode(protected + "==")  # plain base64url


def test_cli_rotation_functions(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    first = rotate_signing_key(path)  # makes the file, then a second key
    listed = signing_keys(path)
    assert [k["signing"] for k in listed] == [False, True]
    assert listed[-1]["kid"] == first and listed[0]["retired_at"] is not None
    assert all("pem" not in k for k in listed)
