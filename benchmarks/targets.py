"""The servers under test: where each one's code lives, which venv runs it, what it speaks.

Every server is an ASGI app in ``benchmarks/servers/`` served by the uvicorn of its own
venv with identical settings. To add a server, add a ``Target`` here and its app module
in ``servers/``; to give a server the ``stream`` case, set its ``stream`` field once it
has an endpoint that answers a streaming request with ``events`` SSE events (and with N
artifact chunks for the text ``stream N``: the ``growth`` case). ``idle_path`` gives it
the ``memory-streams`` case (the text ``idle``), ``cancel`` says that its JSON-RPC route
cancels tasks, ``listing`` gives it the ``list-tasks`` case (interlingua on SQLite), and
``unary=False`` leaves out its unary and memory-tasks figures (a streaming-only ceiling).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from payloads import V0_1, V0_3, V1_0, V1_0_REST, Dialect

BENCH_DIR = Path(__file__).resolve().parent
SERVERS_DIR = BENCH_DIR / "servers"
ROOT = BENCH_DIR.parent
PROJECT_PYTHON = ROOT / ".venv" / "bin" / "python"
SDK_VENV = BENCH_DIR / ".venv-a2a-sdk"
SDK03_VENV = BENCH_DIR / ".venv-a2a-sdk-03"
SETUP_HINT = "run `bash benchmarks/setup.sh`"

# a2a-sdk wraps its handlers in OpenTelemetry spans whenever opentelemetry-api is importable,
# and google-api-core pulls that in; a no-op tracer still costs about a quarter of its
# throughput. The SDK's own switch turns it off, so it is measured at its best.
SDK_ENV = {"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "false"}

# Packages whose versions the report prints for every server's venv.
STACK_PACKAGES = ("uvicorn", "uvloop", "httptools", "starlette", "msgspec")


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """A streaming endpoint: POST ``path`` with the dialect's stream method body."""

    path: str
    events: int  # events in one complete stream, first to last


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    description: str
    python: Path
    module: str  # module in servers/
    attr: str  # ASGI app, or app factory when ``factory``
    factory: bool
    dialect: Dialect
    rpc_path: str = "/"
    stream: StreamSpec | None = None
    # Store URL passed as BENCH_STORE_URL; ``{workdir}`` is a fresh directory per start.
    store_url: str | None = None
    store_note: str = ""  # the store, for servers configured in code
    packages: tuple[str, ...] = ()  # distributions to report besides the stack
    env: dict[str, str] = field(default_factory=dict)  # extra environment of the server
    baseline: bool = False  # the a2a-sdk figure other servers are compared with
    # Streaming path whose agent answers the text ``idle`` with one working update and
    # then waits (memory-streams); None: no such mode.
    idle_path: str | None = None
    cancel: bool = True  # CancelTask (v0.3 tasks/cancel) works on its JSON-RPC route
    listing: bool = False  # list-tasks: interlingua served on a pre-filled SQLite file
    # unary and memory-tasks are measured on it; False for a streaming-only ceiling
    unary: bool = True

    @property
    def app_ref(self) -> str:
        return f"{self.module}:{self.attr}"


@dataclass(slots=True)
class Probe:
    """Whether a target can run here, and the versions it would run with."""

    ok: bool
    reason: str = ""
    python_version: str = ""
    versions: dict[str, str | None] = field(default_factory=dict)


TARGETS: tuple[Target, ...] = (
    Target(
        name="raw",
        description="raw ceiling: Starlette + msgspec, canned completed task; streams one "
        "send per event (servers/raw.py)",
        python=PROJECT_PYTHON,
        module="raw",
        attr="app",
        factory=False,
        dialect=V1_0,
        stream=StreamSpec(path="/stream", events=1002),
        store_note="none",
        idle_path="/stream",
        cancel=False,
    ),
    # The streaming ceiling of a server that writes what is ready together; the same
    # app, so its unary figures would be raw's: only its streams are measured.
    Target(
        name="raw-coalescing",
        description="raw coalescing SSE ceiling: the raw app's events through a queue, "
        "written together when ready (servers/raw.py, /stream-coalescing)",
        python=PROJECT_PYTHON,
        module="raw",
        attr="app",
        factory=False,
        dialect=V1_0,
        stream=StreamSpec(path="/stream-coalescing", events=1002),
        store_note="none",
        cancel=False,
        unary=False,
    ),
    Target(
        name="interlingua-memory",
        description="interlingua, in-memory store (servers/interlingua_echo.py)",
        python=PROJECT_PYTHON,
        module="interlingua_echo",
        attr="create",
        factory=True,
        dialect=V1_0,
        store_url="memory://",
        packages=("interlingua",),
        stream=StreamSpec(path="/", events=1002),
        idle_path="/",
    ),
    # The same server asked in older dialects: what their codecs cost next to v1.0's.
    Target(
        name="interlingua-memory-rest",
        description="interlingua, in-memory store, v1.0 HTTP+JSON POST /message:send and "
        "/message:stream (servers/interlingua_echo.py)",
        python=PROJECT_PYTHON,
        module="interlingua_echo",
        attr="create",
        factory=True,
        dialect=V1_0_REST,
        rpc_path="/message:send",
        store_url="memory://",
        packages=("interlingua",),
        stream=StreamSpec(path="/message:stream", events=1002),
        cancel=False,
    ),
    Target(
        name="interlingua-memory-0.3",
        description="interlingua, in-memory store, v0.3 message/send (servers/interlingua_echo.py)",
        python=PROJECT_PYTHON,
        module="interlingua_echo",
        attr="create",
        factory=True,
        dialect=V0_3,
        store_url="memory://",
        packages=("interlingua",),
        stream=StreamSpec(path="/", events=1002),
    ),
    Target(
        name="interlingua-memory-0.1",
        description="interlingua, in-memory store, v0.1 tasks/send (servers/interlingua_echo.py)",
        python=PROJECT_PYTHON,
        module="interlingua_echo",
        attr="create",
        factory=True,
        dialect=V0_1,
        store_url="memory://",
        packages=("interlingua",),
        stream=StreamSpec(path="/", events=1002),
    ),
    Target(
        name="interlingua-sqlite",
        description="interlingua, SQLite store (servers/interlingua_echo.py)",
        python=PROJECT_PYTHON,
        module="interlingua_echo",
        attr="create",
        factory=True,
        dialect=V1_0,
        store_url="sqlite:///{workdir}/tasks.db",
        packages=("interlingua",),
        stream=StreamSpec(path="/", events=1002),
        idle_path="/",
        listing=True,
    ),
    Target(
        name="a2a-sdk",
        description="official a2a-sdk 1.x, InMemoryTaskStore (servers/a2a_sdk_echo.py)",
        python=SDK_VENV / "bin" / "python",
        module="a2a_sdk_echo",
        attr="create",
        factory=True,
        dialect=V1_0,
        store_note="a2a-sdk InMemoryTaskStore",
        packages=("a2a-sdk", "protobuf", "pydantic"),
        env=SDK_ENV,
        baseline=True,
        stream=StreamSpec(path="/", events=1002),
        idle_path="/",
    ),
    Target(
        name="a2a-sdk-0.3",
        description="official a2a-sdk 0.3.x (v0.3 message/send), InMemoryTaskStore "
        "(servers/a2a_sdk03_echo.py)",
        python=SDK03_VENV / "bin" / "python",
        module="a2a_sdk03_echo",
        attr="create",
        factory=True,
        dialect=V0_3,
        store_note="a2a-sdk InMemoryTaskStore",
        packages=("a2a-sdk", "pydantic"),
        env=SDK_ENV,
        stream=StreamSpec(path="/", events=1002),
        idle_path="/",
    ),
)

_PROBE = """
import importlib, importlib.metadata as md, json, platform, sys
sys.path.insert(0, sys.argv[1])
module = importlib.import_module(sys.argv[2])
app = getattr(module, sys.argv[3])
if sys.argv[4] == "factory":
    app = app()
versions = {}
for name in sys.argv[5:]:
    try:
        versions[name] = md.version(name)
    except md.PackageNotFoundError:
        versions[name] = None
print(json.dumps({"python": platform.python_version(), "versions": versions}))
"""


def probe(target: Target) -> Probe:
    """Build the target's app in its own venv (imports and factory), without serving it."""
    if not target.python.exists():
        return Probe(ok=False, reason=f"{target.python} is missing: {SETUP_HINT}")
    cmd = [
        str(target.python),
        "-c",
        _PROBE,
        str(SERVERS_DIR),
        target.module,
        target.attr,
        "factory" if target.factory else "app",
        *STACK_PACKAGES,
        *target.packages,
    ]
    with tempfile.TemporaryDirectory(prefix="interlingua-bench-probe-") as workdir:
        env = dict(os.environ, **target.env, BENCH_PUBLIC_URL="http://127.0.0.1:8000/")
        if target.store_url is not None:
            env["BENCH_STORE_URL"] = target.store_url.format(workdir=workdir)
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return Probe(ok=False, reason=lines[-1] if lines else f"exit {done.returncode}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return Probe(ok=True, python_version=data["python"], versions=data["versions"])


def by_name(name: str) -> Target:
    for target in TARGETS:
        if target.name == name:
            return target
    raise KeyError(name)
