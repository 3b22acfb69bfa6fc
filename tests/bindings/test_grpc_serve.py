"""``interlingua serve`` serves gRPC beside JSON-RPC when asked, on the port
--grpc-port names (0: a free one), and with the port checked before anything
else happens; no port is taken that was not asked for."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import httpx
import msgspec
import pytest

from interlingua.core.parts import new_id
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1

ROOT = Path(__file__).resolve().parents[2]


def _serve(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--store", "memory://", "--json", "--log-level", "warning", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--store", "memory://", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_serve_answers_over_grpc_on_a_port_of_its_own() -> None:
    proc = _serve("--port", "0", "--grpc-port", "0")
    try:
        assert proc.stdout is not None
        info = msgspec.json.decode(proc.stdout.readline())
        target = info["grpc"]
        assert target.startswith("127.0.0.1:")
        http_port = int(info["listen"].rsplit(":", 1)[1])
        assert int(target.rsplit(":", 1)[1]) not in (0, http_port)
        with grpc.insecure_channel(target) as channel:
            grpc.channel_ready_future(channel).result(timeout=20)
            sent = rpc1.A2AServiceStub(channel).SendMessage(pb1.SendMessageRequest(
                message=pb1.Message(message_id=new_id(), role=pb1.ROLE_USER,
                                    parts=[pb1.Part(text="over grpc")])), timeout=10)
        assert sent.task.artifacts[0].parts[0].text == "over grpc"
        card = httpx.get(info["card"]).json()
        # the card names it as an absolute URI the official SDKs connect to (docs/grpc.md)
        assert {"url": f"dns:///{target}", "protocolBinding": "GRPC",
                "protocolVersion": "1.0"} in card["supportedInterfaces"]
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_bindings_choose_what_is_served() -> None:
    proc = _serve("--port", "0", "--bindings", "jsonrpc")
    try:
        assert proc.stdout is not None
        info = msgspec.json.decode(proc.stdout.readline())
        assert "grpc" not in info
        card = httpx.get(info["card"], timeout=10).json()
        assert all(i["protocolBinding"] != "GRPC" for i in card["supportedInterfaces"])
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    for bad, said in (("grpc", "jsonrpc too"), ("jsonrpc,carrier-pigeon", "carrier-pigeon")):
        done = _run("--port", "0", "--grpc-port", "0", "--bindings", bad)
        assert done.returncode == 2, done.stderr
        assert said in done.stderr


def test_a_taken_grpc_port_fails_before_the_store_opens(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    store = tmp_path / "never.db"
    port = taken.getsockname()[1]
    try:
        started = time.monotonic()
        done = _run("--port", "0", "--grpc-port", str(taken.getsockname()[1]),
                    "--store", f"sqlite:///{store}")
    finally:
        taken.close()
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: --grpc-port {port}: cannot listen on 127.0.0.1:{port}: "
                           "Address already in use\n")
    assert not store.exists()
    assert time.monotonic() - started < 30


def test_a_grpc_port_another_server_serves_is_refused_not_shared(tmp_path: Path) -> None:
    """A second ``serve`` on the gRPC port of one running: one line, exit 2, as for a
    port any other program holds. grpc binds with SO_REUSEPORT unless told not to, and
    the second server was let in: the two shared the port's calls, each with tasks the
    other did not know."""
    first = _serve("--port", "0", "--grpc-port", "0")
    try:
        assert first.stdout is not None
        line = first.stdout.readline()
        assert line, first.communicate(timeout=20)[1]
        port = int(msgspec.json.decode(line)["grpc"].rsplit(":", 1)[1])
        store = tmp_path / "never.db"
        done = _run("--port", "0", "--grpc-port", str(port), "--store", f"sqlite:///{store}")
        assert done.returncode == 2, done.stderr
        assert done.stderr == (f"error: --grpc-port {port}: cannot listen on "
                               f"127.0.0.1:{port}: Address already in use\n")
        assert not store.exists()
    finally:
        first.terminate()
        first.communicate(timeout=20)


def _in_time_wait() -> int:
    """A port whose only socket is a connection waiting out TIME-WAIT (what a server
    that has just stopped leaves: its end of a connection closed first)."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        accepted.close()
        time.sleep(0.1)
        client.close()
        return int(listener.getsockname()[1])


def test_a_port_in_time_wait_is_taken_for_grpc_as_for_http() -> None:
    # (grpc's port was refused as in use until the connections of the server just
    # stopped had waited out TIME-WAIT, a minute; the HTTP port was taken at once)
    http_port, grpc_port = _in_time_wait(), _in_time_wait()
    proc = _serve("--port", str(http_port), "--grpc-port", str(grpc_port))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.communicate(timeout=20)[1]
        info = msgspec.json.decode(line)
        assert info["grpc"] == f"127.0.0.1:{grpc_port}"
        assert info["listen"].endswith(f":{http_port}")
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_a_taken_http_port_is_one_line_naming_the_option() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _run("--port", str(port), "--grpc-port", "0")
    assert done.returncode == 2
    assert done.stderr == (f"error: --port {port}: cannot listen on 127.0.0.1:{port}: "
                           "Address already in use\n")


def test_no_port_is_taken_that_was_not_asked_for() -> None:
    while True:  # a free port P whose next port can be held
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        held = socket.socket()
        try:
            held.bind(("127.0.0.1", port + 1))
        except OSError:
            held.close()
            probe.close()
            continue
        probe.close()
        break
    held.close()  # P + 1 is free: the port an agent used to take unasked
    proc = _serve("--port", str(port))
    try:
        assert proc.stdout is not None
        info = msgspec.json.decode(proc.stdout.readline())
        assert info["listen"].endswith(f":{port}")
        assert "grpc" not in info
        card = httpx.get(info["card"], timeout=10).json()
        assert all(i["protocolBinding"] != "GRPC" for i in card["supportedInterfaces"])
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


@pytest.mark.parametrize("address", ["127.0.0.1:70000", "127.0.0.1:\u00b2", "127.0.0.1",
                                     "127.0.0.1:-1", "127.0.0.1:"])
def test_a_listener_refuses_an_address_without_a_port_at_once(address: str) -> None:
    from interlingua.bindings.grpc.listener import Listener

    with pytest.raises(ValueError, match="is not host:port"):
        Listener(address)


def test_a_listener_takes_any_port_of_the_range() -> None:
    from interlingua.bindings.grpc.listener import Listener

    for address in ("127.0.0.1:0", "127.0.0.1:65535", "[::1]:50051"):
        assert Listener(address).address == address



def test_the_grpc_port_holds_a_bounded_number_of_connections() -> None:
    """One client opening connections without end is held to ``MAX_CONNECTIONS`` on the
    gRPC port (grpc closes the rest at once), not to the process's open-file limit,
    which the HTTP port shares: the HTTP port still answers."""
    from interlingua import Agent
    from interlingua.bindings.grpc.server import MAX_CONNECTIONS
    from tests.live import live_grpc_agent

    async def echo(text: str) -> str:
        return text

    with live_grpc_agent(Agent("E", "d", echo)) as (url, target):
        host, port = target.rsplit(":", 1)
        socks = [socket.create_connection((host, int(port)))
                 for _ in range(MAX_CONNECTIONS + 100)]
        try:
            for s in socks:
                s.setblocking(False)
            # grpc closes those past the cap as it accepts them: looked at until it has
            # (a busy machine may take a while), the ones it closed staying closed
            deadline = time.monotonic() + 15
            while True:
                held = 0
                for s in socks:
                    try:
                        held += s.recv(1) != b""
                    except BlockingIOError:
                        held += 1  # open, nothing to read
                    except OSError:
                        pass
                if held <= MAX_CONNECTIONS or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert held <= MAX_CONNECTIONS, held
            assert httpx.get(url + "/.well-known/agent-card.json").status_code == 200
        finally:
            for s in socks:
                s.close()
