"""Task owners are keyed by scheme: Basic user ``alice`` and the API-key principal
``alice`` never see each other's tasks; a credential header sent twice is refused;
a store from before owners were keyed is re-keyed once, or refused when the
scheme of its owners cannot be told."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path

import httpx
import pytest

from interlingua import Agent, create_app
from interlingua.core.model import TaskState
from interlingua.server.auth import (
    APIKeyAuth,
    AuthConfig,
    BasicAuth,
    BearerAuth,
    Principal,
    hash_secret,
)
from interlingua.server.auth.principal import owner_key
from interlingua.stores import Scope, open_store
from tests.stores.builders import created, status, ts

from .helpers import Issuer, serve_agent

KEY = "alice-key-" + "k" * 20
PASSWORD = "alice-password-1234"
API = {"X-API-Key": KEY, "A2A-Version": "1.0"}
BASIC = {"Authorization": "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode(),
         "A2A-Version": "1.0"}


async def _echo(text: str) -> str:
    return text


AGENT = Agent("Echo", "Echoes.", _echo)


def _two_schemes(**kw: object) -> AuthConfig:
    return AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY}, name="X-API-Key"),
                               "basic": BasicAuth({"alice": hash_secret(PASSWORD)})}, **kw)


def _rpc(method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _send(c: httpx.Client, url: str, headers: dict[str, str]) -> str:
    r = c.post(url + "/", headers=headers, json=_rpc("SendMessage", {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}))
    return str(r.json()["result"]["task"]["id"])


def test_one_name_under_two_schemes_is_two_owners() -> None:
    with serve_agent(AGENT, auth=_two_schemes()) as url, httpx.Client(timeout=10) as c:
        by_key = _send(c, url, API)
        by_basic = _send(c, url, BASIC)  # the same messageId: another owner's, not a retry
        assert by_key != by_basic
        foreign = c.post(url + "/", headers=BASIC, json=_rpc("GetTask", {"id": by_key}))
        assert foreign.json()["error"]["code"] == -32001
        listed = c.post(url + "/", headers=BASIC, json=_rpc("ListTasks", {})).json()["result"]
        assert [t["id"] for t in listed["tasks"]] == [by_basic]
        own = c.post(url + "/", headers=API, json=_rpc("GetTask", {"id": by_key}))
        assert own.json()["result"]["id"] == by_key


def test_a_credential_header_sent_twice_is_refused() -> None:
    with serve_agent(AGENT, auth=_two_schemes()) as url, httpx.Client(timeout=10) as c:
        twice = [("X-API-Key", "nobody-" + "x" * 20), ("X-API-Key", KEY),
                 ("A2A-Version", "1.0")]
        r = c.post(url + "/", headers=twice, json=_rpc("GetTask", {"id": "t"}))
        assert r.status_code == 401
        assert "sent twice" in r.json()["error"]["message"]
        both = [("Authorization", BASIC["Authorization"]), ("Authorization", "Basic eA=="),
                ("A2A-Version", "1.0")]
        r = c.post(url + "/", headers=both, json=_rpc("GetTask", {"id": "t"}))
        assert r.status_code == 401


async def _old_store(path: Path, owner: str = "alice") -> None:
    """A SQLite store as written before owners were keyed: the task of ``owner`` under
    its bare id."""
    store = open_store(f"sqlite:///{path}")
    await store.open()
    await store.create_task(Scope("", owner), [created("t-old"),
                                                status("t-old", TaskState.COMPLETED, ts(1))],
                            dialect="1.0", now=ts(1))
    await store.close()
    raw = sqlite3.connect(path)
    raw.execute("DELETE FROM meta")
    raw.commit()
    raw.close()


async def test_an_old_store_is_rekeyed_with_its_only_scheme(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    await _old_store(db)
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY}, name="X-API-Key")})
    with serve_agent(AGENT, auth=auth, store=f"sqlite:///{db}") as url, \
            httpx.Client(timeout=10) as c:
        got = c.post(url + "/", headers=API, json=_rpc("GetTask", {"id": "t-old"}))
        assert got.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # once: a second start finds it keyed already
    with serve_agent(AGENT, auth=auth, store=f"sqlite:///{db}") as url, \
            httpx.Client(timeout=10) as c:
        got = c.post(url + "/", headers=API, json=_rpc("GetTask", {"id": "t-old"}))
        assert got.json()["result"]["id"] == "t-old"


async def test_an_old_store_with_several_schemes_needs_the_scheme_named(
        tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    await _old_store(db)
    app = create_app(AGENT, auth=_two_schemes(), store=f"sqlite:///{db}")
    with pytest.raises(RuntimeError, match="legacy_owner_scheme"):
        await app.state.engine.start()
    with serve_agent(AGENT, auth=_two_schemes(legacy_owner_scheme="basic"),
                     store=f"sqlite:///{db}") as url, httpx.Client(timeout=10) as c:
        as_basic = c.post(url + "/", headers=BASIC, json=_rpc("GetTask", {"id": "t-old"}))
        assert as_basic.json()["result"]["id"] == "t-old"
        as_key = c.post(url + "/", headers=API, json=_rpc("GetTask", {"id": "t-old"}))
        assert as_key.json()["error"]["code"] == -32001


async def test_serve_refuses_such_a_store_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "tasks.db"
    await _old_store(db)
    auth = tmp_path / "two_schemes.py"
    auth.write_text(
        "from interlingua.server.auth import APIKeyAuth, AuthConfig, BasicAuth, hash_secret\n"
        f"auth = AuthConfig(schemes={{'key': APIKeyAuth({{'alice': {KEY!r}}}),\n"
        f"                           'basic': BasicAuth({{'alice': hash_secret({PASSWORD!r})}})}})\n")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", "0", "--store", f"sqlite:///{db}", "--auth", f"{auth}:auth"],
        cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "legacy_owner_scheme" in lines[0], done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_owner_keys_tell_every_principal_apart_and_keep_plain_ones_as_they_were() -> None:
    """One key per (scheme, issuer, id), whatever ``:`` and ``%`` the parts hold (a
    plain ``:`` join took issuer ``A`` + subject ``B:C`` for ``A:B`` + ``C``); keys
    of parts without them are as before, so stored tasks stay their owners'."""
    parts = ["", "a", ":", "%", "a:b", "b:", ":b", "%3A", "a%3Ab", "a%b", "https://x",
             "https://x:1", "https://x:1:victim"]
    principals = {(scheme, issuer, pid) for scheme in ("bearer", "apiKey", "custom", "x:y",
                                                       "x%3Ay")
                  for issuer in (parts if scheme == "bearer" else [""])
                  for pid in parts if pid}
    keys = {Principal(id=pid, scheme=scheme, claims={"iss": issuer} if issuer else {}).owner
            for scheme, issuer, pid in principals}
    assert len(keys) == len(principals)
    assert owner_key("bearer", "alice", "https://id.example") == "bearer:https://id.example:alice"
    assert owner_key("apiKey", "team:alice") == "apiKey:team:alice"
    assert owner_key("basic", "alice") == "basic:alice"
    assert owner_key("", "alice") == "custom:alice"
    assert owner_key("bearer", "user:1%", "https://id.example") == \
        "bearer:https://id.example:user%3A1%25"


async def test_an_old_store_is_rekeyed_as_tokens_name_their_subjects(tmp_path: Path) -> None:
    """A bare owner id holding ``:`` is re-keyed as a token naming it is keyed now."""
    db = tmp_path / "tasks.db"
    await _old_store(db, owner="user:1%")
    issuer = Issuer()
    auth = AuthConfig(schemes={"bearer": BearerAuth(issuer=issuer.iss, audience="a2a-test",
                                                    keys=issuer.jwks)})
    headers = {"Authorization": f"Bearer {issuer.token('user:1%')}", "A2A-Version": "1.0"}
    with serve_agent(AGENT, auth=auth, store=f"sqlite:///{db}") as url, \
            httpx.Client(timeout=10) as c:
        got = c.post(url + "/", headers=headers, json=_rpc("GetTask", {"id": "t-old"}))
        assert got.json()["result"]["id"] == "t-old", got.text
