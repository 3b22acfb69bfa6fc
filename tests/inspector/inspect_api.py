"""A client of the inspector's own HTTP API, as the page uses it (for tests without a browser)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx


class InspectorAPI:
    """One inspector session (its cookie kept by the httpx client)."""

    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=base.rstrip("/") + "/", timeout=20)
        self.after = 0

    def close(self) -> None:
        self.http.close()

    def config(self) -> dict[str, Any]:
        return self.http.get("api/config").raise_for_status().json()

    def post(self, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        return self.http.post(path, json=body or {})

    def connect(self, url: str, **options: Any) -> dict[str, Any]:
        r = self.post("api/connect", {"url": url, **options})
        assert r.status_code == 200, r.text
        return r.json()

    def send(self, text: str, **options: Any) -> int:
        r = self.post("api/send", {"text": text, **options})
        assert r.status_code == 200, r.text
        return int(r.json()["turn"])

    def entries(self, until: Callable[[dict[str, Any]], bool], timeout: float = 15.0
                ) -> list[dict[str, Any]]:
        """The session's log entries after the last ones read, up to the first
        that ``until`` accepts (AssertionError if none comes in ``timeout``)."""
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        with self.http.stream("GET", "api/events", params={"after": self.after},
                              timeout=httpx.Timeout(timeout, read=timeout)) as r:
            buf = ""
            for text in r.iter_text():
                buf += text
                while "\n\n" in buf:
                    block, buf = buf.split("\n\n", 1)
                    for line in block.splitlines():
                        if line.startswith("data:"):
                            entry = json.loads(line[5:])
                            got.append(entry)
                            self.after = entry["n"]
                            if until(entry):
                                return got
                if time.monotonic() > deadline:
                    break
        raise AssertionError(f"not seen in {timeout} s; got {[e['kind'] for e in got]}")

    def turn(self, turn: int) -> list[dict[str, Any]]:
        """The entries up to the end of ``turn`` (its end or its error)."""
        return self.entries(lambda e: e.get("turn") == turn and e["kind"] in ("turn-end", "error"))
