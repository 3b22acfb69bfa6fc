"""TLS on both sides, the CLI's TLS options, and the finer points of each scheme."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from interlingua import Agent, Context
from interlingua.cli.main import main
from interlingua.client import AgentUnreachable, Client
from interlingua.core.errors import AuthorizationFailed
from interlingua.server.auth import (
    APIKeyAuth,
    AuthConfig,
    BasicAuth,
    BearerAuth,
    MutualTLSAuth,
    hash_secret,
    verify_secret,
)
from tests.e2e.procs import free_port
from tests.live import bind_loopback

from .helpers import PKI, Issuer, send_request, serve_agent, serve_app

ROOT = Path(__file__).resolve().parents[2]


async def _whoami(ctx: Context) -> None:
    await ctx.complete(f"hello {ctx.principal}")


def _text(task: Any) -> str:
    return str(task.status.message.parts[0].text)


# ------------------------------------------------------------------------ TLS


@pytest.fixture(scope="module")
def https_url(pki: PKI) -> Iterator[str]:
    auth = AuthConfig(schemes={"mtls": MutualTLSAuth()})
    with serve_agent(Agent("TLS", "d", _whoami), certfile=str(pki.server),
                     client_ca=str(pki.ca), auth=auth) as url:
        yield url


async def test_client_verifies_the_server(pki: PKI, https_url: str) -> None:
    async with Client(https_url, verify=str(pki.ca), cert=str(pki.bob)) as c:
        assert _text(await c.send("hi")) == "hello bob"
    async with Client(https_url) as c:  # system CAs do not know the test CA
        with pytest.raises(AgentUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
            await c.get_card()
    async with Client(https_url, verify=False, cert=str(pki.alice)) as c:
        assert _text(await c.send("hi")) == "hello alice"


def test_scope_carries_the_certificate(pki: PKI, https_url: str) -> None:
    with httpx.Client(verify=_ctx(pki, pki.alice)) as c:
        body, headers = send_request("1.0")
        r = c.post(https_url + "/", json=body, headers=headers)
    assert r.json()["result"]["task"]["status"]["message"]["parts"][0]["text"] == "hello alice"


def _ctx(pki: PKI, cert: Path) -> Any:
    from interlingua.client import tls_context

    return tls_context(str(pki.ca), str(cert))


def test_cli_tls_options(pki: PKI, https_url: str) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["send", https_url, "hi", "--ca-bundle", str(pki.ca),
                              "--client-cert", str(pki.alice)], prog_name="interlingua")
    assert ok.exit_code == 0, ok.output
    assert "hello alice" in ok.output
    untrusted = runner.invoke(main, ["card", https_url], prog_name="interlingua")
    assert untrusted.exit_code == 3 and "CERTIFICATE_VERIFY_FAILED" in untrusted.output
    no_cert = runner.invoke(main, ["send", https_url, "hi", "--ca-bundle", str(pki.ca)],
                            prog_name="interlingua")
    assert no_cert.exit_code == 1 and "AuthenticationRequired" in no_cert.output


@pytest.mark.parametrize(("command", "option", "said"), [
    (["card"], "--ca-bundle", "error: cannot read the CA bundle"),
    (["send", "{url}", "hi"], "--client-cert", "error: cannot load the client certificate"),
    (["stream", "{url}", "hi"], "--client-cert", "error: cannot load the client certificate"),
    (["card"], "--key", "Invalid value for '--key': {file} is not a PEM file"),
])
def test_a_file_that_is_no_pem_is_said_by_its_option(
        tmp_path: Path, command: list[str], option: str, said: str) -> None:
    # (the CA bundle and the client certificate were a traceback in every client
    # command, a binary key another; the mesh's commands said them in one line)
    url = "http://127.0.0.1:9"
    der = tmp_path / "key.der"
    der.write_bytes(b"\x30\x59\x30\x13\x06\x07\x2a\x86\x48")
    file = der if option == "--key" else tmp_path / "not.pem"
    if option != "--key":
        file.write_text("not a certificate\n")
    args = [a.format(url=url) for a in command]
    if command == ["card"]:
        args.append(url)
    done = CliRunner().invoke(main, [*args, option, str(file)], prog_name="interlingua")
    assert done.exit_code == 2, done.output
    assert said.format(file=file) in done.output, done.output


def test_a_jwks_url_is_said_by_its_own_option() -> None:
    done = CliRunner().invoke(main, ["card", "http://127.0.0.1:9", "--verify", "--jwks",
                                     "ftp://keys.example/jwks.json"], prog_name="interlingua")
    assert done.exit_code == 2 and "Invalid value for '--jwks'" in done.output, done.output


@pytest.mark.parametrize(("option", "said"), [
    ("--certfile", "--certfile {file}: no certificate and key can be read"),
    ("--client-ca", "--client-ca {file}: no CA certificate can be read"),
    ("--card-key", "--card-key {file}: cannot read the signing key file {file}"),
    ("--push-signing-key", "--push-signing-key {file}: not a PEM file (text)"),
])
def test_serve_says_a_key_or_certificate_file_it_cannot_read_by_its_option(
        pki: PKI, tmp_path: Path, option: str, said: str) -> None:
    # (they were said as the port that could not be listened on, after the banner, or
    # for a binary key, with a traceback; --card-key's as the push signing key's)
    file = tmp_path / "bad.pem"
    file.write_bytes(b"\x30\x82\x01\x0a binary, no PEM" if option == "--push-signing-key"
                     else b"no PEM in here\n")
    extra = ["--certfile", str(pki.server)] if option == "--client-ca" else []
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", str(free_port()), "--store", "memory://", *extra, option, str(file)],
        cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: " + said.format(file=file)), done.stderr
    assert "Serving" not in done.stdout


def test_serve_says_a_pem_given_as_the_card_key_file_is_no_key_ring(pki: PKI,
                                                                    tmp_path: Path) -> None:
    # (it said "JSON is malformed: invalid character (byte 1)")
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", str(free_port()), "--store", "memory://", "--card-key", str(pki.server)],
        cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: --card-key {pki.server}: cannot read the signing key file "
                           f"{pki.server}: a PEM key, not a key file of interlingua's (the JSON "
                           "key ring it makes at a path where there is none, and rotates keys "
                           "in): give a new path\n")


@pytest.mark.parametrize("grpc", [False, True])
def test_serve_says_an_encrypted_key_is_not_taken(pki: PKI, tmp_path: Path,
                                                  grpc: bool) -> None:
    # (OpenSSL asked for its pass phrase on the terminal, twice; with --grpc-port the
    # server said it could not listen, with a traceback, as gRPC cannot read it)
    from cryptography.hazmat.primitives import serialization

    pem = pki.server.read_bytes()
    key = serialization.load_pem_private_key(pem, password=None)
    keyfile = tmp_path / "key.pem"
    keyfile.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pass phrase")))
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", str(free_port()), "--store", "memory://", "--certfile", str(pki.server),
         "--keyfile", str(keyfile), *(["--grpc-port", str(free_port())] if grpc else [])],
        cwd=ROOT, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: --keyfile {keyfile}: the key is encrypted;")
    assert "Serving" not in done.stdout and "Traceback" not in done.stderr


def _split_key(pem: Path, tmp_path: Path, *, encrypted: bool) -> tuple[Path, Path]:
    """``pem``'s certificate and its key in two files, the key encrypted or not."""
    from cryptography.hazmat.primitives import serialization

    data = pem.read_bytes()
    cert = tmp_path / "cert.pem"
    cert.write_bytes(data[:data.index(b"-----BEGIN PRIVATE KEY-----")])
    key = serialization.load_pem_private_key(data, password=None)
    keyfile = tmp_path / "key.pem"
    keyfile.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pass phrase") if encrypted
        else serialization.NoEncryption()))
    return cert, keyfile


def _cli_with_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run the CLI with a pseudo-terminal as its controlling terminal and stdio (where
    OpenSSL would prompt for a pass phrase, and wait): its exit code and output."""
    import pty

    leader, follower = pty.openpty()
    name = os.ttyname(follower)

    def take_the_terminal() -> None:  # (a session leader's first tty becomes its own)
        os.close(os.open(name, os.O_RDWR))

    proc = subprocess.Popen([sys.executable, "-m", "interlingua.cli.main", *args], cwd=ROOT,
                            stdin=follower, stdout=follower, stderr=follower,
                            start_new_session=True, preexec_fn=take_the_terminal)
    os.close(follower)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    finally:
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(leader)
    return code, out.decode(errors="replace")


@pytest.mark.parametrize("command", [["send", "{url}", "hi"], ["card", "{url}"]])
def test_an_encrypted_client_key_is_said_by_its_option_never_asked_for(
        pki: PKI, https_url: str, tmp_path: Path, command: list[str]) -> None:
    # (OpenSSL asked for its pass phrase, twice: on a terminal the command waited for
    # it, without one it failed with "[Errno 22] Invalid argument")
    cert, keyfile = _split_key(pki.alice, tmp_path, encrypted=True)
    args = [*(a.format(url=https_url) for a in command), "--ca-bundle", str(pki.ca),
            "--client-cert", str(cert), "--client-key", str(keyfile)]
    said = f"error: --client-key {keyfile}: the key is encrypted; the client takes an " \
           f"unencrypted key (openssl pkey -in {keyfile} -out PLAIN_KEY"
    done = subprocess.run([sys.executable, "-m", "interlingua.cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(said) and len(done.stderr.splitlines()) == 1, done.stderr
    code, out = _cli_with_a_terminal(args)
    assert code == 2 and said in out and "pass phrase" not in out, out


def test_a_client_certificate_without_its_key_says_the_key_is_missing(
        pki: PKI, https_url: str, tmp_path: Path) -> None:
    # (it said "[SSL] PEM lib (_ssl.c:3926)")
    cert, keyfile = _split_key(pki.alice, tmp_path, encrypted=False)
    run = [sys.executable, "-m", "interlingua.cli.main", "send", https_url, "hi",
           "--ca-bundle", str(pki.ca), "--client-cert", str(cert)]
    done = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(
        f"error: --client-cert {cert} holds no private key: the private key is missing; "
        "give it with --client-key KEY"), done.stderr
    wrong = subprocess.run([*run, "--client-key", str(cert)], cwd=ROOT, capture_output=True,
                           text=True, timeout=30)
    assert wrong.returncode == 2, wrong.stderr
    assert wrong.stderr.startswith(f"error: --client-key {cert} holds no private key"), \
        wrong.stderr
    ok = subprocess.run([*run, "--client-key", str(keyfile)], cwd=ROOT, capture_output=True,
                        text=True, timeout=30)
    assert ok.returncode == 0 and "hello alice" in ok.stdout, ok.stderr


def test_serve_command_with_tls(pki: PKI) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "SECURE_AGENT_API_KEY": "key-for-the-cli-test-0123456789"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/secure_agent.py",
         "--port", str(port), "--store", "memory://", "--certfile", str(pki.server),
         "--client-ca", str(pki.ca), "--auth", "examples/secure_agent.py:auth",
         "--sign-card", "--log-level", "warning", "--json"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"https://localhost:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(url + "/healthz", verify=_ctx(pki, pki.alice), timeout=1)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stderr.read().decode() if proc.stderr else "") from None
                time.sleep(0.1)
        runner = CliRunner()
        card = runner.invoke(main, ["card", url, "--verify", "--ca-bundle", str(pki.ca), "--json"],
                             prog_name="interlingua")
        assert card.exit_code == 0, card.output
        doc = msgspec.json.decode(card.stdout)  # (a line on stderr says it verified)
        assert doc["url"] == f"https://127.0.0.1:{port}/" and doc["signatures"]
        assert "key-for-the-cli-test" not in card.output
        sent = runner.invoke(main, ["send", url, "calendar", "--ca-bundle", str(pki.ca),
                                    "-H", "X-API-Key: key-for-the-cli-test-0123456789"],
                             prog_name="interlingua")
        assert sent.exit_code == 0, sent.output
        assert "calendar token" in sent.output
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=15)
    info = msgspec.json.decode(out.splitlines()[0])
    assert info["listen"] == f"https://127.0.0.1:{port}"


# ------------------------------------------------------------------ API keys


@pytest.mark.parametrize("location", ["query", "cookie"])
def test_api_key_in_query_and_cookie(location: str) -> None:
    key = "q-" + "k" * 30
    auth = AuthConfig(schemes={"k": APIKeyAuth({"carol": key}, name="api_key",
                                               location=location)})
    with serve_agent(Agent("K", "d", _whoami), auth=auth) as url, httpx.Client() as c:
        body, headers = send_request("0.3")
        where: dict[str, Any] = ({"params": {"api_key": key}} if location == "query"
                                 else {"headers": {"Cookie": f"api_key={key}", **headers}})
        where.setdefault("headers", headers)
        r = c.post(url + "/", json=body, **where)
        assert r.json()["result"]["status"]["message"]["parts"][0]["text"] == "hello carol"
        card = c.get(url + "/.well-known/agent-card.json").json()
        assert card["securitySchemes"]["k"]["in"] == location
        bad = c.post(url + "/", json=body, headers=headers)
        assert bad.status_code == 401
        assert bad.headers["www-authenticate"] == \
            f'ApiKey realm="a2a", in="{location}", name="api_key"'


def test_api_key_config_is_checked() -> None:
    with pytest.raises(ValueError, match="shorter than 16"):
        APIKeyAuth({"x": "short"})
    with pytest.raises(ValueError, match="location"):
        APIKeyAuth({"x": "k" * 20}, location="body")
    digest = "sha256:" + __import__("hashlib").sha256(b"k" * 20).hexdigest()
    assert APIKeyAuth({"x": digest}).secrets() == []


# --------------------------------------------------------------------- Basic


def test_passwords_are_hashed() -> None:
    with pytest.raises(ValueError, match="not a hash"):
        BasicAuth({"dave": "plain-password"})
    for method in ("pbkdf2_sha256", "scrypt"):
        stored = hash_secret("pw", method=method) if method == "scrypt" else \
            hash_secret("pw", iterations=1000)
        assert stored.startswith(method + "$")
        assert verify_secret(stored, "pw") and not verify_secret(stored, "pW")
        assert stored != hash_secret("pw", method=method, iterations=1000)  # salted


def _watch_verify(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The (stored hash, candidate) of each password check Basic auth makes."""
    import interlingua.server.auth.schemes as schemes

    checks: list[tuple[str, str]] = []
    real = schemes.verify_secret

    def watched(stored: str, candidate: str) -> bool:
        checks.append((stored, candidate))
        return real(stored, candidate)

    monkeypatch.setattr(schemes, "verify_secret", watched)
    return checks


def test_basic_remembers_a_good_password(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = _watch_verify(monkeypatch)
    auth = AuthConfig(schemes={"b": BasicAuth({"dave": hash_secret("pw", iterations=1000)})})
    token = base64.b64encode(b"dave:pw").decode()
    with serve_agent(Agent("B", "d", _whoami), auth=auth) as url, httpx.Client() as c:
        for _ in range(3):
            body, headers = send_request("1.0")
            r = c.post(url + "/", json=body, headers={"Authorization": f"Basic {token}", **headers})
            assert r.status_code == 200
    assert [candidate for _, candidate in checks] == ["pw"]


@pytest.mark.parametrize("method", ["pbkdf2_sha256", "scrypt"])
def test_an_unknown_user_costs_the_hash_a_known_one_does(
        monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """An unknown user's password is checked against a hash of the users' own method
    and cost, over HTTP as a client meets it: before, against 1,000 PBKDF2 rounds
    (600,000 for a user's), which answered ~500 times sooner and named the users."""
    from interlingua.server.auth.hashing import _parse

    checks = _watch_verify(monkeypatch)
    stored = hash_secret("pw", method=method) if method == "scrypt" else \
        hash_secret("pw", iterations=2000)
    auth = AuthConfig(schemes={"b": BasicAuth({"dave": stored})})
    with serve_agent(Agent("B", "d", _whoami), auth=auth) as url, httpx.Client() as c:
        for who in ("dave:wrong", "mallory:pw", "eve:other"):
            body, headers = send_request("1.0")
            token = base64.b64encode(who.encode()).decode()
            r = c.post(url + "/", json=body, headers={"Authorization": f"Basic {token}", **headers})
            assert r.status_code == 401, r.text
    checked = [hashed for hashed, _ in checks]
    assert checked[0] == stored
    for decoy in checked[1:]:
        assert decoy != stored and _parse(decoy)[:2] == _parse(stored)[:2]
        assert len(_parse(decoy)[3]) == len(_parse(stored)[3])


def test_a_decoy_without_users_costs_the_default_hash() -> None:
    from interlingua.server.auth.hashing import _parse, decoy_hash

    assert _parse(decoy_hash())[:2] == _parse(hash_secret("x"))[:2]
    assert not verify_secret(decoy_hash(), "")


# -------------------------------------------------------------------- Bearer


class IdentityProvider:
    """An OpenID provider on loopback: discovery and JWKS, counting fetches."""

    def __init__(self, issuer: Issuer) -> None:
        self.issuer = issuer
        self.fetches: list[str] = []
        self.url = ""

    def app(self) -> Starlette:
        async def discovery(request: Any) -> Response:
            self.fetches.append("discovery")
            return Response(msgspec.json.encode({"issuer": self.issuer.iss,
                                                 "jwks_uri": self.url + "/jwks"}))

        async def jwks(request: Any) -> Response:
            self.fetches.append("jwks")
            return Response(msgspec.json.encode(self.issuer.jwks))

        return Starlette(routes=[Route("/.well-known/openid-configuration", discovery),
                                 Route("/jwks", jwks)])


def test_a_hanging_key_host_costs_one_fetch_for_all_who_wait() -> None:
    """Stale keys and a key host that hangs: the requests waiting meanwhile share one
    attempt and are answered with the keys in hand, and the next attempt waits for
    ``refetch_interval``. Before, each request made an attempt of its own, one after
    another under the lock: the fifth waited five timeouts, and every later request
    tried again."""
    issuer = Issuer()
    clock = [time.time()]
    attempts: list[str] = []
    hang = [False]

    async def fetch(url: str) -> bytes:
        attempts.append(url)
        if hang[0]:
            await asyncio.sleep(0.5)
            raise httpx.ReadTimeout("the key host sent nothing")
        return msgspec.json.encode(issuer.jwks)

    bearer = BearerAuth(jwks_url="https://keys.example/jwks", audience="a2a-test",
                        fetch=fetch, clock=lambda: clock[0], jwks_cache_seconds=300,
                        refetch_interval=30)
    auth = AuthConfig(schemes={"jwt": bearer})
    token = issuer.token("alice", ttl=3600)

    async def ask(url: str, n: int) -> list[int]:
        body, headers = send_request("1.0")
        headers = {**headers, "Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(timeout=30) as c:
            answers = await asyncio.gather(*(c.post(url + "/", json=body, headers=headers)
                                             for _ in range(n)))
        return [a.status_code for a in answers]

    with serve_agent(Agent("J", "d", _whoami), auth=auth) as url:
        assert asyncio.run(ask(url, 1)) == [200] and len(attempts) == 1
        clock[0] += 400  # the keys are stale; the host hangs
        hang[0] = True
        assert asyncio.run(ask(url, 5)) == [200] * 5
        assert len(attempts) == 2
        clock[0] += 10  # within refetch_interval of the failed attempt: none made
        assert asyncio.run(ask(url, 2)) == [200] * 2 and len(attempts) == 2
        clock[0] += 30
        hang[0] = False
        assert asyncio.run(ask(url, 3)) == [200] * 3 and len(attempts) == 3


def test_a_key_host_down_from_the_start_costs_one_fetch_for_all_who_wait() -> None:
    """No keys yet and a key host that hangs: the requests waiting meanwhile are all
    refused after one attempt, not one attempt each in turn."""
    attempts: list[str] = []

    async def fetch(url: str) -> bytes:
        attempts.append(url)
        await asyncio.sleep(0.5)
        raise httpx.ReadTimeout("the key host sent nothing")

    bearer = BearerAuth(jwks_url="https://keys.example/jwks", audience="a2a-test",
                        fetch=fetch, refetch_interval=30)
    token = Issuer().token("alice")

    async def ask(url: str, n: int) -> list[httpx.Response]:
        body, headers = send_request("1.0")
        headers = {**headers, "Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(timeout=30) as c:
            return list(await asyncio.gather(*(c.post(url + "/", json=body, headers=headers)
                                               for _ in range(n))))

    with serve_agent(Agent("J", "d", _whoami), auth=AuthConfig(schemes={"jwt": bearer})) as url:
        answers = asyncio.run(ask(url, 4))
    assert [a.status_code for a in answers] == [401] * 4
    assert all("signing keys could not be fetched" in a.text for a in answers)
    assert len(attempts) == 1


def test_bearer_with_discovery_cache_and_rotation() -> None:
    idp = IdentityProvider(Issuer())
    sock = bind_loopback()
    with serve_app(idp.app(), sock) as idp_url:
        idp.url = idp_url
        bearer = BearerAuth(openid_config_url=idp_url + "/.well-known/openid-configuration",
                            audience="a2a-test", refetch_interval=0)
        auth = AuthConfig(schemes={"oidc": bearer})
        with serve_agent(Agent("O", "d", _whoami), auth=auth) as url, httpx.Client() as c:
            card = c.get(url + "/.well-known/agent-card.json").json()
            assert card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"] == {
                "openIdConnectUrl": idp_url + "/.well-known/openid-configuration"}
            for who in ("erin", "frank", "erin"):
                body, headers = send_request("1.0")
                r = c.post(url + "/", json=body, headers={
                    "Authorization": f"Bearer {idp.issuer.token(who)}", **headers})
                text = r.json()["result"]["task"]["status"]["message"]["parts"][0]["text"]
                assert text == f"hello {who}"
            assert idp.fetches == ["discovery", "jwks"]  # cached
            idp.issuer = Issuer(kid="k2")  # the provider rotates its key
            body, headers = send_request("1.0")
            r = c.post(url + "/", json=body, headers={
                "Authorization": f"Bearer {idp.issuer.token('erin')}", **headers})
            assert r.status_code == 200
            assert idp.fetches == ["discovery", "jwks", "jwks"]


def test_bearer_scopes(issuer: Issuer) -> None:
    auth = AuthConfig(
        schemes={"bearer": BearerAuth(issuer=issuer.iss, audience="a2a-test", keys=issuer.jwks)},
        security=[{"bearer": ["tasks.write"]}])
    with serve_agent(Agent("S", "d", _whoami), auth=auth) as url, httpx.Client() as c:
        card = c.get(url + "/.well-known/agent-card.json").json()
        assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": ["tasks.write"]}}}]
        body, headers = send_request("0.1")
        r = c.post(url + "/", json=body, headers={
            "Authorization": f"Bearer {issuer.token('gina', scope='tasks.read')}", **headers})
        assert r.status_code == 403 and r.json()["error"]["code"] == -32008
        assert r.headers["www-authenticate"] == \
            'Bearer realm="a2a", error="insufficient_scope", scope="tasks.write"'
        r = c.post(url + "/", json=send_request("0.1")[0], headers={
            "Authorization": f"Bearer {issuer.token('gina', scope='tasks.read tasks.write')}"})
        assert r.status_code == 200


def test_bearer_config_is_checked(issuer: Issuer) -> None:
    with pytest.raises(ValueError, match="audience"):
        BearerAuth(issuer="x", keys=issuer.jwks)
    with pytest.raises(ValueError, match="asymmetric"):
        BearerAuth(audience="a", keys=issuer.jwks, algorithms=["HS256"])
    with pytest.raises(ValueError, match="needs keys"):
        BearerAuth(audience="a")


def test_auth_config_is_checked() -> None:
    with pytest.raises(ValueError, match="not one of the schemes"):
        AuthConfig(schemes={"k": APIKeyAuth({"x": "k" * 20})}, security=[{"other": []}])
    with pytest.raises(ValueError, match="at least one"):
        AuthConfig(schemes={})


async def test_client_raises_authorization_failed(issuer: Issuer) -> None:
    async def deny(*args: Any) -> bool:
        return False

    auth = AuthConfig(schemes={"k": APIKeyAuth({"x": "k" * 20})}, authorize=deny)
    with serve_agent(Agent("D", "d", _whoami), auth=auth) as url:
        async with Client(url, headers={"X-API-Key": "k" * 20}) as c:
            with pytest.raises(AuthorizationFailed):
                await c.send("hi")


def test_serve_says_a_file_is_in_the_way_of_the_card_key(tmp_path: Path) -> None:
    # (it said "File exists", which named nothing: the store's option says why)
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", str(free_port()), "--store", "memory://",
         "--card-key", str(blocker / "card.key")],
        cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: --card-key {blocker / 'card.key'}: {blocker} is a file, "
                           "not a folder\n")
