"""The HAProxy configuration of docs/deployment.md, run in front of replicas."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

from ..services import missing, reachable
from .procs import ROOT, free_port

DOC = ROOT / "docs" / "deployment.md"


def documented_config() -> str:
    """The ```haproxy block of docs/deployment.md, as written there."""
    found = re.search(r"```haproxy\n(.*?)```", DOC.read_text(), re.S)
    assert found, "docs/deployment.md has no haproxy configuration"
    return found.group(1)


def haproxy() -> str:
    for candidate in (shutil.which("haproxy"), "/usr/sbin/haproxy"):
        if candidate and Path(candidate).exists():
            return candidate
    missing("haproxy (Debian's haproxy package; scripts/test installs it)")
    raise AssertionError("unreachable")


class Balancer:
    """HAProxy with the documented configuration; its ports replaced by the test's."""

    def __init__(self, replica_ports: list[int], workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = documented_config().replace("127.0.0.1:8000", f"127.0.0.1:{self.port}")
        documented = ["127.0.0.1:8001", "127.0.0.1:8002", "127.0.0.1:8003"]
        assert all(d in config for d in documented)
        for old, port in zip(documented, replica_ports, strict=True):
            config = config.replace(old, f"127.0.0.1:{port}")
        self.config = workdir / "haproxy.cfg"
        self.config.write_text(config)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Balancer:
        binary = haproxy()
        check = subprocess.run([binary, "-c", "-f", str(self.config)], capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        self.proc = subprocess.Popen([binary, "-db", "-f", str(self.config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not reachable("127.0.0.1", self.port):
            assert self.proc.poll() is None and time.monotonic() < deadline, \
                "haproxy did not start"
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
