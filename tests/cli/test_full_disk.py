"""``interlingua serve`` on a SQLite file the disk stops taking writes for (a full disk,
as a file size limit makes it): a send is told the store is unavailable, 503 with
``Retry-After`` over HTTP+JSON and the same over JSON-RPC, as PostgreSQL's refusals
are, with a line in the log and no traceback (it was 500, an internal error, a
traceback per request)."""

from __future__ import annotations

import resource
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import msgspec

ROOT = Path(__file__).resolve().parents[2]
HEADERS = {"A2A-Version": "1.0"}
#: bytes any file of the server's may hold: the store's first tasks fit, later ones not
LIMIT = 400_000


def _limited() -> None:
    # (Python ignores SIGXFSZ: a write past the limit fails with EFBIG, as on a full disk)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _message(text: str) -> dict[str, object]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def test_a_disk_that_refuses_writes_is_a_store_unavailable(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--store", f"sqlite:///{tmp_path}/tasks.db", "--json", "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_limited)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.communicate(timeout=30)[1]
        url = msgspec.json.decode(line)["listen"]
        with httpx.Client(timeout=30) as client:
            for _ in range(40):
                r = client.post(url + "/message:send", headers=HEADERS,
                                json={"message": _message("x" * 50_000)})
                if r.status_code != 200:
                    break
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"] == "1"
            assert "unavailable" in r.json()["error"]["message"]
            rpc = client.post(url + "/", headers=HEADERS, json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": {"message": _message("y" * 50_000)}}).json()
            assert rpc["error"]["code"] == -32603, rpc
            assert "unavailable" in rpc["error"]["message"], rpc
    finally:
        proc.terminate()
        err = proc.communicate(timeout=40)[1]
    assert "refused" in err and "Traceback" not in err, err
