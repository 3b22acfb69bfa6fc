"""A recording proxy on loopback: how the peer fixtures' bytes were captured.

    python tests/interop/peers/record.py --port PORT --upstream http://127.0.0.1:N --out FILE

Forwards every request to ``--upstream`` unchanged and appends one JSON line
per exchange to ``--out``: method, path, the request's ``Content-Type`` and
body, the answer's status, ``Content-Type`` and body (an event stream whole, as
it came). The golden tests under ``tests/dialects/fixtures/peers/`` hold lines
taken from such files; nothing here runs in the tests themselves.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

_lock = threading.Lock()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--out", required=True)
    opts = ap.parse_args()
    upstream = opts.upstream.rstrip("/")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in ("host", "content-length", "connection")}
            with httpx.Client(timeout=60) as client, client.stream(
                self.command, upstream + self.path, content=body, headers=headers
            ) as resp:
                chunks = []
                self.send_response(resp.status_code)
                for k, v in resp.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection",
                                         "content-encoding"):
                        self.send_header(k, v)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in resp.iter_raw():
                    chunks.append(chunk)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            record: dict[str, Any] = {
                "method": self.command, "path": self.path,
                "request_type": self.headers.get("Content-Type"),
                "request": body.decode("utf-8", "replace"),
                "status": resp.status_code, "response_type": resp.headers.get("content-type"),
                "response": b"".join(chunks).decode("utf-8", "replace"),
            }
            with _lock, open(opts.out, "a") as out:
                out.write(json.dumps(record) + "\n")

        do_GET = do_POST = do_PUT = do_DELETE = _forward

        def log_message(self, format: str, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", opts.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
