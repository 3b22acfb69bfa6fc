"""Interoperability tests with the official A2A SDKs: peers, fixtures, the matrix.

Every test here is marked ``interop`` (``-m "not interop"`` leaves them out).
The peer environments under ``.interop/`` are made by ``scripts/interop-setup``
before the tests run (``tests/conftest.py``); a test whose peer cannot be
installed because a package registry cannot be reached is skipped, with the
registry named, and fails under CI.

Each test fills one cell of the matrix in ``matrix.py``: its row is the
``peer`` parameter, its column the test's name. At the end of the session the
run's matrix is written outside the working tree: to the file
``INTERLINGUA_INTEROP_MATRIX`` names (``scripts/interop-matrix`` sets it, and
copies a complete matrix to ``docs/interop.md``), else into pytest's temporary
folder. ``test_the_matrix.py`` (run after the interop tests) checks the committed
document against the cells the run filled.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.procs import free_port

from . import matrix
from .harness import (
    PEERS_DIR,
    AgentProcess,
    Driver,
    InterlinguaProcess,
    PeerError,
    Receiver,
    ensure_env,
    running,
)
from .matrix import ROWS, Cell, Note, Row, rows

#: where the run's matrix goes (``scripts/interop-matrix`` sets it); unset, pytest's
#: temporary folder
MATRIX_ENV = "INTERLINGUA_INTEROP_MATRIX"

CLIENT_ROWS = rows("client")
AGENT_ROWS = rows("agent")


# --------------------------------------------------------------------------- peers


def _python(env: Path) -> str:
    return str(env / "bin" / "python")


def _major(row: Row) -> str:
    version = row.env.rsplit("-", 1)[1]
    return "v03" if version.startswith("0.") else "v1"


def client_argv(row: Row, env: Path, url: str) -> list[str]:
    if row.env.startswith("py-"):
        argv = [_python(env), str(PEERS_DIR / f"py_client_{_major(row)}.py"), url]
    else:
        argv = ["node", str(PEERS_DIR / f"js_client_{_major(row)}.mjs"), url, "--sdk", str(env)]
    if _major(row) == "v1":
        # A 1.x client speaks v0.3 through the SDK's compatibility layer when told to.
        argv += ["--dialect", row.dialect]
    if row.binding != "JSONRPC":
        argv += ["--binding", row.binding]
    return argv


def agent_argv(row: Row, env: Path, port: int, grpc_port: int | None = None) -> list[str]:
    if row.env.startswith("py-"):
        grpc = [] if grpc_port is None else ["--grpc-port", str(grpc_port)]
        return [_python(env), str(PEERS_DIR / f"py_agent_{_major(row)}.py"), "--port", str(port),
                *grpc]
    return ["node", str(PEERS_DIR / f"js_agent_{_major(row)}.mjs"), "--port", str(port),
            "--sdk", str(env)]


class Peers:
    """The peer processes of the session, started together on first use.

    Clients are keyed by row (each talks to the interlingua agent in one
    dialect); agents by environment (one agent serves every row of its SDK:
    each binding, each dialect). Agents of an SDK with a row in gRPC serve
    gRPC too, on a port of their own (``AgentProcess.grpc_port``).
    """

    def __init__(self, interlingua_url: str) -> None:
        self.interlingua_url = interlingua_url
        self._lock = threading.Lock()
        self._clients: dict[str, Driver | BaseException] = {}
        self._agents: dict[str, AgentProcess | BaseException] = {}

    def client(self, row: Row) -> Driver:
        with self._lock:
            if not self._clients:
                self._start_clients()
        found = self._clients[row.id]
        if isinstance(found, BaseException):
            raise found
        return found

    def agent(self, row: Row) -> AgentProcess:
        with self._lock:
            if not self._agents:
                self._start_agents()
        found = self._agents[row.env]
        if isinstance(found, BaseException):
            raise found
        return found

    def _start_clients(self) -> None:
        started: list[Driver] = []
        for row in CLIENT_ROWS:
            try:
                env = ensure_env(row.env)
            except (pytest.skip.Exception, pytest.fail.Exception) as exc:
                self._clients[row.id] = exc
                continue
            driver = Driver(row.id, client_argv(row, env, self.interlingua_url))
            self._clients[row.id] = driver
            started.append(driver)
        for driver in started:
            try:
                driver.wait_ready()
            except PeerError as exc:
                driver.close()
                self._clients[driver.name] = exc

    def _start_agents(self) -> None:
        started: list[AgentProcess] = []
        for row in AGENT_ROWS:
            if row.env in self._agents:
                continue
            try:
                env = ensure_env(row.env)
            except (pytest.skip.Exception, pytest.fail.Exception) as exc:
                self._agents[row.env] = exc
                continue
            port = free_port()
            grpc_port = (free_port() if any(r.env == row.env and r.binding == "GRPC"
                                            for r in AGENT_ROWS) else None)
            agent = AgentProcess(row.env, agent_argv(row, env, port, grpc_port), port,
                                 grpc_port)
            self._agents[row.env] = agent
            started.append(agent)
        for agent in started:
            try:
                agent.wait_ready()
            except PeerError as exc:
                agent.stop()
                self._agents[agent.name] = exc

    def close(self) -> None:
        for driver in self._clients.values():
            if isinstance(driver, Driver):
                driver.close()
        for agent in self._agents.values():
            if isinstance(agent, AgentProcess):
                agent.stop()


def _ours(*extra: str) -> Iterator[InterlinguaProcess]:
    with running(InterlinguaProcess("tests/interop/agent.py:agent", free_port(), extra)) as proc:
        yield proc


@pytest.fixture(scope="module")
def ours() -> Iterator[InterlinguaProcess]:
    """Our agent (``agent.py``) as ``serve`` runs it by default: JSON-RPC and HTTP+JSON, no
    gRPC; one per module of the other frameworks' tests (a module may define its own)."""
    yield from _ours("--no-grpc")


@pytest.fixture(scope="module")
def ours_with_grpc() -> Iterator[InterlinguaProcess]:
    """The same agent with gRPC on, on a port of its own (the card lists it)."""
    yield from _ours()


#: the official SDK whose agent is the reference the other frameworks' peer bugs are
#: shown against
REFERENCE_SDK = "py-a2a-1.3.0"


def _reference_agent(grpc: bool) -> Iterator[AgentProcess]:
    python = _python(ensure_env(REFERENCE_SDK))
    port, grpc_port = free_port(), (free_port() if grpc else None)
    argv = [python, str(PEERS_DIR / "py_agent_v1.py"), "--port", str(port)]
    if grpc_port is not None:
        argv += ["--grpc-port", str(grpc_port)]
    name = "py_agent_v1.py" + ("-grpc" if grpc else "")
    with running(AgentProcess(name, argv, port, grpc_port)) as agent:
        yield agent


@pytest.fixture(scope="session")
def sdk_agent() -> Iterator[AgentProcess]:
    """a2a-sdk 1.3.0's agent (``peers/py_agent_v1.py``): the reference for peer bugs.
    One for the session: the tests read only the answers to their own messages."""
    yield from _reference_agent(grpc=False)


@pytest.fixture(scope="session")
def sdk_agent_with_grpc() -> Iterator[AgentProcess]:
    """The same with gRPC on a port of its own (its card names ``127.0.0.1:PORT``); the
    tests read only its card."""
    yield from _reference_agent(grpc=True)


@pytest.fixture(scope="session")
def interlingua_agents() -> Iterator[dict[str, str]]:
    """The interlingua agents of ``agent.py``, each served in its own process."""
    servers = {"agent": InterlinguaProcess("tests/interop/agent.py:agent", free_port()),
               "card": InterlinguaProcess("tests/interop/agent.py:card_agent", free_port())}
    try:
        for server in servers.values():
            server.wait_ready()
        yield {name: server.url for name, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="session")
def receiver() -> Iterator[Receiver]:
    """The webhook push configs point at."""
    hook = Receiver()
    try:
        yield hook
    finally:
        hook.close()


@pytest.fixture(scope="session")
def peers(interlingua_agents: dict[str, str]) -> Iterator[Peers]:
    pool = Peers(interlingua_agents["agent"])
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def note(request: pytest.FixtureRequest) -> Callable[..., None]:
    """``note(text, kind="info")``: a note on this test's matrix cell.

    Kinds: ``info``; ``peer-quirk`` (allowed, but worth knowing);
    ``peer-aside`` (a peer bug the tested setup avoids); ``peer-bug`` and
    ``interlingua-bug`` (the test confirmed a documented bug: the cell shows a
    failure, with the note).
    """

    def add(text: str, kind: str = "info") -> None:
        request.node.user_properties.append(("interop-note", (kind, text)))

    return add


# -------------------------------------------------------------------------- matrix


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    _record(item, report)
    return report


def _record(item: pytest.Item, report: pytest.TestReport) -> None:
    """The outcome of one phase of an interop test, into its matrix cell."""
    direction = getattr(getattr(item, "module", None), "DIRECTION", None)
    callspec = getattr(item, "callspec", None)
    if direction is None or callspec is None or "peer" not in callspec.params:
        return
    row: Row = callspec.params["peer"]
    op = getattr(item, "originalname", item.name).removeprefix("test_")
    if op not in matrix.OPS:
        return
    notes = [Note(*value) for key, value in report.user_properties
             if key == "interop-note" and isinstance(value, tuple)]
    if report.when == "call" and report.passed:
        # A test that passed by confirming a documented bug marks its cell as failing.
        bug = any(n.kind in ("peer-bug", "interlingua-bug") for n in notes)
        cell = Cell("bug" if bug else "passed", notes, item.nodeid)
    elif hasattr(report, "wasxfail"):
        cell = Cell("xfailed", [*notes, Note("info", _one_line(report.wasxfail))], item.nodeid)
    elif report.skipped:
        cell = Cell("skipped", [*notes, Note("info", "not run: " + _skip_reason(report))],
                    item.nodeid)
    elif report.failed:
        failure = f"`{item.nodeid}` failed ({report.when}): {_failure(report)}"
        cell = Cell("failed", [*notes, Note("failure", failure)], item.nodeid)
    else:
        return
    matrix.record(direction, row.id, op, cell)


def _one_line(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return _one_line(str(longrepr[2]).removeprefix("Skipped: "))
    return _one_line(str(longrepr))


def _failure(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    message = crash.message if crash is not None else str(report.longrepr)
    return _one_line(message)


def node_version() -> str | None:
    """The Node.js the JavaScript peers run on, or None."""
    try:
        node = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return node.stdout.strip().removeprefix("v") or None


@pytest.fixture(scope="session", autouse=True)
def _matrix_folder(tmp_path_factory: pytest.TempPathFactory,
                   request: pytest.FixtureRequest) -> None:
    """Where this session's matrix goes when no file is named: its temporary folder."""
    request.config.stash[_folder] = tmp_path_factory.getbasetemp()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # the check of the committed matrix runs after the tests that fill its cells
    last = [item for item in items if item.path.name == "test_the_matrix.py"]
    if last:
        items[:] = [item for item in items if item not in last] + last


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not matrix.results():
        return
    text = matrix.render(matrix.versions(node_version()))
    named = os.environ.get(MATRIX_ENV)
    folder = session.config.stash.get(_folder, None)
    if named:
        target = Path(named)
    elif folder is not None:
        target = folder / "interop.md"
    else:
        return
    if not matrix.complete():
        # scripts/interop-matrix copies only a complete matrix into docs/
        target = target.with_name(target.name + ".partial")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    session.config.stash[_written] = target


_written = pytest.StashKey[Path]()
_folder = pytest.StashKey[Path]()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    target = config.stash.get(_written, None)
    if target is not None:
        filled = len(matrix.results())
        terminalreporter.write_line(
            f"interop matrix of this run ({filled} of {len(ROWS) * len(matrix.OPS)} cells) "
            f"written to {target}; scripts/interop-matrix rewrites docs/interop.md")
