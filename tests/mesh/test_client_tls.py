"""The client's TLS options and card checks on the mesh, as over HTTP: ``verify`` (a CA
bundle, or False), ``cert`` (mutual TLS) and ``card_verifier`` reach an ``mqtts://``
broker and the card read there, in both layouts and from the command line, where
they were taken and dropped (a real Mosquitto with TLS listeners, started here)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import getpass
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc.jwk import ECKey

from interlingua import Agent, Client, Context, client_for, create_app
from interlingua.client import CardVerifier
from interlingua.client.errors import AgentUnreachable
from interlingua.client.security import UnverifiedCard
from interlingua.core.model import Task, TaskState
from interlingua.mesh import MeshSettings, attach
from interlingua.server.auth import CardSigning
from tests.ports import free_port
from tests.security.helpers import PKI

from .helpers import need_broker, org_unit

pytestmark = pytest.mark.timeout(60)

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
SCRIPT = Path(sys.executable).with_name("interlingua")


async def echo(ctx: Context) -> None:
    await ctx.artifact(ctx.text)
    await ctx.complete()


ECHO = Agent("Echo", "Echoes.", echo, streaming=True)


class Broker:
    """A Mosquitto with two TLS listeners: ``port`` (server certificate only) and
    ``mutual`` (client certificates required), both signed by ``pki.ca``."""

    def __init__(self, pki: PKI, port: int, mutual: int) -> None:
        self.pki, self.port, self.mutual = pki, port, mutual

    def url(self, path: str, *, mutual: bool = False) -> str:
        return f"mqtts://127.0.0.1:{self.mutual if mutual else self.port}/{path}"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    need_broker()  # the machine's Mosquitto: the program is there
    root = tmp_path_factory.mktemp("mqtts")
    pki = PKI.make(root)
    port, mutual = free_port(), free_port()
    listener = f"cafile {pki.ca}\ncertfile {pki.server}\nkeyfile {pki.server}\n"
    (root / "mosquitto.conf").write_text(
        f"listener {port} 127.0.0.1\n{listener}"
        f"listener {mutual} 127.0.0.1\n{listener}require_certificate true\n"
        # (run as root, it would change to the mosquitto user, who cannot read here)
        f"allow_anonymous true\nuser {getpass.getuser()}\n")
    log = root / "mosquitto.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([MOSQUITTO, "-c", str(root / "mosquitto.conf")],
                                stdout=subprocess.DEVNULL, stderr=out)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", mutual), 1):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("mosquitto with TLS did not start: " + log.read_text())
            time.sleep(0.05)
        yield Broker(pki, port, mutual)
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.asynccontextmanager
async def refused_handshakes() -> AsyncIterator[None]:
    """Around a connection whose TLS handshake is refused: its socket is closed, not
    left to the garbage collector (which reported it unclosed, failing the test, once
    the worker thread that made it let go of it: waited for here)."""
    yield
    for _ in range(3):
        await asyncio.sleep(0.05)
    gc.collect()


@contextlib.asynccontextmanager
async def agent_on(broker: Broker, layout: str, monkeypatch: pytest.MonkeyPatch, *,
                   mutual: bool = False,
                   **tls: Any) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """``ECHO`` on the TLS broker in ``layout``: (its URL's path, its card's public
    keys). Without ``tls`` (``MeshSettings``' TLS fields) the agent trusts the test CA
    as the system's (``SSL_CERT_FILE``), only while it connects: the clients below get
    nothing from the environment."""
    org, unit = org_unit()
    url = broker.url("", mutual=mutual)
    if not tls:
        monkeypatch.setenv("SSL_CERT_FILE", str(broker.pki.ca))
    # cards signed; served on the mesh alone (no HTTP interface in the card)
    app = create_app(ECHO, store="memory://", freeze_gc=False, card_signing=CardSigning())
    if layout == "sam":
        settings = MeshSettings(url=url, namespace=org, card_interval=0.5,
                                session_expiry=30, http=False, **tls)
        path = f"{org}/Echo"
    else:
        settings = MeshSettings(url=url, namespace="", profile="emqx", org=org,
                                unit=unit, session_expiry=30, http=False, **tls)
        path = f"{org}/{unit}/Echo"
    attach(app, settings)
    async with app.router.lifespan_context(app):
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://agent.test") as http:
            jwks = (await http.get("/.well-known/jwks.json")).json()
        yield path, jwks


@pytest.fixture(params=["sam", "emqx"])
def layout(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_a_ca_bundle_or_no_checks_reach_an_mqtts_broker(
        broker: Broker, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async with agent_on(broker, layout, monkeypatch) as (path, _):
        for verify in (str(broker.pki.ca), False):
            async with client_for(broker.url(path), timeout=10, verify=verify) as client:
                task = await client.send("hello")
                assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        # the system's CAs do not know the test CA
        async with client_for(broker.url(path), timeout=10) as client:
            async with refused_handshakes():
                with pytest.raises(AgentUnreachable):
                    await client.send("hello")


async def test_a_client_certificate_reaches_a_broker_that_asks_for_one(
        broker: Broker, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async with agent_on(broker, layout, monkeypatch) as (path, _):
        url = broker.url(path, mutual=True)
        async with client_for(url, timeout=10, verify=str(broker.pki.ca),
                              cert=str(broker.pki.alice)) as client:
            task = await client.send("hello")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        # without one: refused in the handshake (TLS 1.2, whose handshake a refusal
        # ends at once; over 1.3 the client hears of it only when it waits for CONNACK)
        tls12 = ssl.create_default_context(cafile=str(broker.pki.ca))
        tls12.maximum_version = ssl.TLSVersion.TLSv1_2
        async with client_for(url, timeout=10, verify=tls12) as client:
            async with refused_handshakes():
                with pytest.raises(AgentUnreachable):
                    await client.send("hello")


async def test_a_card_read_on_the_mesh_is_verified_when_asked(
        broker: Broker, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async with agent_on(broker, layout, monkeypatch) as (path, jwks):
        url, ca = broker.url(path), str(broker.pki.ca)
        async with client_for(url, timeout=10, verify=ca,
                              card_verifier=CardVerifier(keys=jwks)) as client:
            assert (await client.get_card()).name == "Echo"
        other = ECKey.generate_key("P-256", private=True).as_pem(private=False).decode()
        async with client_for(url, timeout=10, verify=ca,
                              card_verifier=CardVerifier(keys=[other])) as client:
            with pytest.raises(UnverifiedCard, match="is not trusted"):
                await client.get_card()
        # a mesh-only card has no origin to fetch keys from: said, not passed over
        async with client_for(url, timeout=10, verify=ca,
                              card_verifier=CardVerifier()) as client:
            with pytest.raises(UnverifiedCard, match="names no HTTP interface"):
                await client.get_card()


async def test_the_command_line_s_tls_and_card_options_reach_the_mesh(
        broker: Broker, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async with agent_on(broker, "sam", monkeypatch) as (path, _):
        url = broker.url(path)
        env = {k: v for k, v in os.environ.items() if k != "SSL_CERT_FILE"}

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True,
                                  env=env, timeout=40)

        ok = await asyncio.to_thread(run, "send", url, "hi", "--ca-bundle",
                                     str(broker.pki.ca), "--json")
        assert ok.returncode == 0, ok.stderr
        unverified = await asyncio.to_thread(run, "card", url, "--ca-bundle",
                                             str(broker.pki.ca), "--verify")
        assert unverified.returncode != 0
        assert "names no HTTP interface" in unverified.stderr


# ------------------------------------------------------------ the agent's side


async def test_an_agent_reaches_an_mqtts_broker_with_a_ca_bundle_and_a_certificate(
        broker: Broker, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``MeshSettings(ca_bundle=, client_cert=)``: an agent served on a broker with a
    private CA, which asks for client certificates (it trusted the system's CAs alone)."""
    ca = str(broker.pki.ca)
    async with agent_on(broker, layout, monkeypatch, mutual=True, ca_bundle=ca,
                        client_cert=str(broker.pki.bob)) as (path, _):
        async with client_for(broker.url(path), timeout=10, verify=ca) as client:
            task = await client.send("hello")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED


def test_the_agent_s_tls_settings_are_checked_when_made(broker: Broker) -> None:
    with pytest.raises(ValueError, match="cannot read the CA bundle"):
        MeshSettings(url=broker.url(""), namespace="ns", ca_bundle="/no/such/ca.pem")
    with pytest.raises(ValueError, match="client_key needs client_cert"):
        MeshSettings(url=broker.url(""), namespace="ns", client_key="k.pem")
    with pytest.raises(ValueError, match="choose one"):
        MeshSettings(url=broker.url(""), namespace="ns", ca_bundle=str(broker.pki.ca),
                     insecure=True)


async def test_serve_takes_the_mesh_s_tls_options(
        broker: Broker, tmp_path: Path) -> None:
    org = org_unit()[0]
    env = {k: v for k, v in os.environ.items() if k != "SSL_CERT_FILE"}
    cmd = [str(SCRIPT), "serve", str(Path(__file__).parent / "tls_echo.py"), "--no-http",
           "--mesh", broker.url(""), "--namespace", org, "--mesh-ca-bundle",
           str(broker.pki.ca), "--mesh-card-interval", "0.5", "--store", "memory://"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        async with client_for(broker.url(f"{org}/Echo"), timeout=15,
                              verify=str(broker.pki.ca)) as client:
            assert (await client.get_card()).name == "Echo"  # it is up: its card came
            task = await client.send("hello")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    plain = subprocess.run([str(SCRIPT), "serve", str(Path(__file__).parent / "tls_echo.py"),
                            "--mesh", "mqtt://127.0.0.1:1883", "--namespace", org,
                            "--mesh-ca-bundle", str(broker.pki.ca)],
                           capture_output=True, text=True, env=env, timeout=30)
    assert plain.returncode == 2 and "go with an mqtts:// broker" in plain.stderr


async def test_mesh_agents_and_the_gateway_take_the_tls_options(
        broker: Broker, monkeypatch: pytest.MonkeyPatch) -> None:
    async with agent_on(broker, "sam", monkeypatch) as (path, _):
        org = path.split("/")[0]
        env = {k: v for k, v in os.environ.items() if k != "SSL_CERT_FILE"}
        ca = str(broker.pki.ca)

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True,
                                  env=env, timeout=40)

        listed = await asyncio.to_thread(run, "mesh", "agents", "--mesh", broker.url(""),
                                         "--namespace", org, "--ca-bundle", ca,
                                         "--wait", "1.5", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [a["name"] for a in json.loads(listed.stdout)] == ["Echo"]
        refused = await asyncio.to_thread(run, "mesh", "agents", "--mesh", broker.url(""),
                                          "--namespace", org, "--wait", "0.5")
        assert refused.returncode == 3 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr

        gateway = subprocess.Popen(
            [str(SCRIPT), "gateway", "--mesh", broker.url(""), "--namespace", org,
             "--ca-bundle", ca, "--port", "0", "--json"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert gateway.stdout is not None
            line = await asyncio.to_thread(gateway.stdout.readline)
            base = json.loads(line)["listen"]
            async with httpx.AsyncClient(timeout=10) as http:
                deadline = time.monotonic() + 15
                while "Echo" not in (await http.get(base + "/agents")).text:
                    assert time.monotonic() < deadline, "the gateway never heard the agent"
                    await asyncio.sleep(0.2)
            async with Client(base + "/agents/Echo/", timeout=10) as client:
                task = await client.send("hello")
                assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        finally:
            gateway.terminate()
            gateway.communicate(timeout=20)
