"""The third-party A2A checkers against ``interlingua serve``: a2a-lint and a2a-proof.

Each checker is installed from PyPI, pinned, in an environment of its own under
``.interop/`` (``scripts/interop-setup``, its checker block). Every example that is
an agent is graded by ``a2a-lint --live --strict`` and must get 0 errors and 0
warnings; the model-backed ones run against the stand-in model server on loopback
(``tests/adapters/chat_server.py``). a2a-proof writes a contract from the card
(``a2a-proof init``) and runs it, with gRPC off and on, over each binding.

A finding that is the checker's own (not the agent's) is asserted as it is, and the
same finding is shown against the official SDK's server (a2a-sdk 1.3.0) with the
spec clause it contradicts: docs/interop.md, "Checkers".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua.cli.serve import load_agent
from tests.adapters.chat_server import ChatServer
from tests.e2e.procs import free_port
from tests.live import live_agent, live_server

from .harness import PEERS_DIR, ROOT, AgentProcess, ensure_env, peer_env
from .matrix import CHECKER_ROWS

LINT = "lint-a2a-lint-0.1.1"
PROOF = "lint-a2a-proof-0.16.0"
SDK = "py-a2a-1.3.0"

pytestmark = [pytest.mark.interop(envs=[LINT, PROOF, SDK]), pytest.mark.timeout(180)]

#: every example that is an agent: the ``serve`` options it is graded with
AGENTS: dict[str, list[str]] = {
    "echo": [],
    "flight_booking": [],
    "image_rotate": [],
    "langgraph_agent": [],
    "report_agent": [],
    "secure_agent": [],
    "story": [],
    "support_tickets": [],
    # model-backed: against the stand-in model server (OPENAI_BASE_URL)
    "chat_openai": [],
    "pydantic_ai_agent": [],
    "orchestrator": [],
}
#: the examples that are not agents
NOT_AGENTS = {"report_client"}
MODEL_BACKED = {"chat_openai", "pydantic_ai_agent", "orchestrator"}


def _bin(env: str, program: str) -> str:
    return str(ensure_env(env) / "bin" / program)


def _wait(url: str, proc: subprocess.Popen[Any], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{proc.args!r} exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    pytest.fail(f"{proc.args!r} did not answer:\n{log.read_text()[-3000:]}")


@contextmanager
def process(argv: list[str], port: int, log: Path,
            env: dict[str, str] | None = None) -> Iterator[str]:
    """``argv`` run until the block ends; the URL once its card answers."""
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve(example: str, tmp_path: Path, *args: str,
          env: dict[str, str] | None = None) -> Any:
    port = free_port()
    argv = [sys.executable, "-m", "interlingua.cli.main", "serve", f"examples/{example}.py",
            "--port", str(port), "--store", "memory://", "--log-level", "warning", *args]
    return process(argv, port, tmp_path / f"{example}.log", env)


def lint(url: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([_bin(LINT, "a2a-lint"), url, "--live", "--strict", "--json",
                           "--timeout", "60"], capture_output=True, text=True, timeout=150,
                          env=peer_env())
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"a2a-lint gave no report (exit {done.returncode}):\n"
                    f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


@pytest.fixture(scope="module")
def echo_with_grpc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``echo`` served with gRPC on, on a port of its own: one server for a2a-lint and
    a2a-proof (each only sends it messages of its own)."""
    with serve("echo", tmp_path_factory.mktemp("echo-grpc"), "--bindings", "jsonrpc,rest,grpc",
               "--grpc-port", str(free_port())) as url:
        yield url


def _not_info(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["level"], f["field"], f["message"]) for f in report["findings"]
            if f["level"] != "info"]


@pytest.fixture(scope="module")
def model_env() -> Iterator[dict[str, str]]:
    """What the model-backed examples read: the stand-in model server, and for the
    orchestrator the agents it delegates to."""
    with live_server(ChatServer().app) as model, \
            live_agent(load_agent("examples/echo.py")) as echo, \
            live_agent(load_agent("examples/support_tickets.py")) as tickets:
        yield {"OPENAI_BASE_URL": model + "/v1", "OPENAI_MODEL": "stand-in",
               "OPENAI_API_KEY": "unused", "AGENT_URLS": f"{echo},{tickets}"}


def test_the_documented_rows_name_tests_of_this_module() -> None:
    """docs/interop.md's "Checkers" rows (``matrix.CHECKER_ROWS``) each name the tests
    here that show them."""
    named = {t for *_, tests in CHECKER_ROWS for t in tests.split(", ")}
    assert named <= set(globals()), named - set(globals())


def test_every_example_is_graded() -> None:
    examples = {p.stem for p in (ROOT / "examples").glob("*.py")}
    assert examples == set(AGENTS) | NOT_AGENTS


@pytest.mark.parametrize("example", sorted(AGENTS))
def test_a2a_lint_grades_the_example_with_no_finding(
        example: str, tmp_path: Path, model_env: dict[str, str]) -> None:
    env = model_env if example in MODEL_BACKED else None
    with serve(example, tmp_path, *AGENTS[example], env=env) as url:
        code, report = lint(url)
    log = (tmp_path / f"{example}.log").read_text()[-3000:]
    assert "findings" in report, f"{report}\nthe agent's log:\n{log}"
    assert _not_info(report) == [], report
    assert report["summary"] == {"errors": 0, "warnings": 0, "grade": "A"}
    assert code == 0


def test_a2a_lint_with_grpc_on(echo_with_grpc: str) -> None:
    code, report = lint(echo_with_grpc)
    assert (code, _not_info(report)) == (0, []), report


# The checker sends no credentials: an agent that requires them answers its live
# calls with HTTP 401, which it grades as errors ("JSON-RPC endpoints should return
# 200 with errors in the body"). The spec names HTTP 401 for missing credentials
# (v1.0 §3.3.2, Authentication Errors; v0.1 §4: SHOULD use 401 Unauthorized), and
# the official SDK's server behind its API key draws the same two findings.
AUTH_FINDINGS = [
    ("error", "(live)", "message/send returned HTTP 401."),
    ("error", "(live-stream)",
     "message/stream returned HTTP 401 but the card declares streaming: true."),
]


def test_a2a_lint_cannot_grade_an_agent_behind_credentials(tmp_path: Path) -> None:
    with serve("secure_agent", tmp_path, "--auth", "examples/secure_agent.py:auth") as url:
        code, report = lint(url)
    assert code == 1
    assert _not_info(report) == AUTH_FINDINGS, report


def test_a2a_lint_finds_the_same_on_the_official_sdk_behind_a_key(tmp_path: Path) -> None:
    port = free_port()
    argv = [_bin(SDK, "python"), str(PEERS_DIR / "py_agent_v1.py"), "--port", str(port),
            "--api-key", "k"]
    with process(argv, port, tmp_path / "sdk.log", peer_env()) as url:
        code, report = lint(url)
    assert code == 1
    assert _not_info(report) == AUTH_FINDINGS, report


# ------------------------------------------------------------------------- a2a-proof


def proof(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_bin(PROOF, "a2a-proof"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=150, env=peer_env())


def proofs(*runs: Sequence[str], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """``a2a-proof`` run once per ``runs`` entry, all at once (each only reads its
    contract and talks to the agent), in that order."""
    with ThreadPoolExecutor(len(runs)) as pool:
        return list(pool.map(lambda args: proof(*args, cwd=cwd), runs))


def _passes(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 scenario passed" in done.stdout, done.stdout


def test_a2a_proof_contract_passes_with_grpc_off(tmp_path: Path) -> None:
    with serve("echo", tmp_path) as url:
        made = proof("init", url, "-o", "contract.yaml", cwd=tmp_path)
        assert made.returncode == 0, made.stdout + made.stderr
        for done in proofs(["run", "contract.yaml"],
                           ["run", "contract.yaml", "--transport", "HTTP+JSON"], cwd=tmp_path):
            _passes(done)


def test_a2a_proof_contract_passes_with_grpc_on(echo_with_grpc: str, tmp_path: Path) -> None:
    """gRPC on a port of its own is another origin, which a2a-proof takes only when
    told to trust it (``--allow-cross-origin``; without, it refuses the card). Then its
    contract passes over every binding, gRPC too: it dials the card's
    ``dns:///host:port`` as it is (plain text: ``grpc_tls: false``)."""
    url = echo_with_grpc
    refused, made = proofs(["init", url, "-o", "strict.yaml"],
                           ["init", url, "--allow-cross-origin", "-o", "contract.yaml"],
                           cwd=tmp_path)
    assert refused.returncode == 2
    assert "Agent Card interface has an unsupported URL: 'dns:///127.0.0.1:" in \
        refused.stderr
    assert made.returncode == 0, made.stdout + made.stderr
    plain = (tmp_path / "contract.yaml").read_text().replace(
        "  allow_cross_origin_interfaces: true\n",
        "  allow_cross_origin_interfaces: true\n  grpc_tls: false\n")
    (tmp_path / "grpc.yaml").write_text(plain)
    for done in proofs(["run", "contract.yaml"],
                       ["run", "contract.yaml", "--transport", "HTTP+JSON"],
                       ["run", "grpc.yaml", "--transport", "GRPC"], cwd=tmp_path):
        _passes(done)


def test_a2a_proof_refuses_the_official_sdk_s_grpc_card_the_same_way(
        sdk_agent_with_grpc: AgentProcess, tmp_path: Path) -> None:
    """The official SDK's server with gRPC on its own port (its card names it
    ``host:port``): the same refusal. The spec asks of an interface's URL nothing
    about its origin (v1.0 ``AgentInterface.url``: an absolute URL, HTTPS in
    production)."""
    refused = proof("init", sdk_agent_with_grpc.url, "-o", "strict.yaml", cwd=tmp_path)
    assert refused.returncode == 2
    assert ("Agent Card interface has an unsupported URL: "
            f"'127.0.0.1:{sdk_agent_with_grpc.grpc_port}'") in refused.stderr
