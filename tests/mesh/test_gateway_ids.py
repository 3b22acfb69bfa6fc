"""A gateway id a live gateway of this host holds is refused (exit 2), in both layouts:
two gateways of one id connect with one MQTT client id and take the session from each
other in turn (Mosquitto: "already connected, closing old connection"), and their
streams lose events. It was not refused. A killed gateway's id is free again at once
(real processes, real Mosquitto)."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from .helpers import BROKER, need_broker, org_unit
from .test_serve_cli import ROOT, SCRIPT

pytestmark = pytest.mark.timeout(60)


def _gateway(*options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SCRIPT), "gateway", "--mesh", BROKER, "--port", "0", "--json",
         "--log-level", "warning", *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _listening(proc: subprocess.Popen[str]) -> dict[str, str]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.communicate()
    return json.loads(line)


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.communicate()


@pytest.mark.parametrize("layout", ["sam", "emqx"])
def test_a_gateway_id_held_by_a_live_gateway_is_refused(layout: str) -> None:
    need_broker()
    org, unit = org_unit()
    where = ["--namespace", org] if layout == "sam" else [
        "--mesh-profile", "emqx", "--org", org, "--unit", unit]
    first = _gateway(*where, "--gateway-id", "gw1")
    procs = [first]
    try:
        assert _listening(first)["gateway_id"] == "gw1"
        second = _gateway(*where, "--gateway-id", "gw1")
        procs.append(second)
        try:
            out, err = second.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail("a second gateway of the id gw1 was not refused: it serves")
        assert second.returncode == 2, err
        assert "gw1" in err and "already" in err, err
        assert "Traceback" not in err
        # (run with --json: the error is also one JSON object on stdout)
        assert "gw1" in json.loads(out)["error"]["message"], out
        # another id beside it is served, and the first one's id once it is gone
        other = _gateway(*where, "--gateway-id", "gw2")
        procs.append(other)
        assert _listening(other)["gateway_id"] == "gw2"
        _stop(first, signal.SIGKILL)
        again = _gateway(*where, "--gateway-id", "gw1")
        procs.append(again)
        assert _listening(again)["gateway_id"] == "gw1"
    finally:
        for proc in procs:
            _stop(proc)
