"""``interlingua serve --log-format json --otel --metrics`` in a real process:
every log line is one JSON object, and a line logged by the executor names its
task, its context and the trace the caller sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.procs import Process

pytestmark = pytest.mark.timeout(60)

AGENT = '''
import logging

from interlingua import Agent

log = logging.getLogger("obs.agent")


async def run(text: str) -> str:
    log.warning("working on %s", text)
    return text.upper()


agent = Agent("Logger", "Logs what it does.", run)
'''

TRACE_ID, PARENT_ID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


def test_json_logs_carry_task_context_and_trace_ids(tmp_path: Path):
    (tmp_path / "logger_agent.py").write_text(AGENT)
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    server = Process()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        server.launch([sys.executable, "-c", "from interlingua.cli.main import main; main()",
                       "serve", str(tmp_path / "logger_agent.py"), "--port", str(server.port),
                       "--store", "memory://", "--bindings", "jsonrpc", "--log-format", "json",
                       "--otel", "--otel-exporter", "console", "--metrics"],
                      stdout=stdout, stderr=stderr)
        try:
            server.wait_ready()
            answer = httpx.post(server.url + "/", headers={
                "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}, json={
                "jsonrpc": "2.0", "id": 1, "method": "message/send",
                "params": {"message": {"kind": "message", "messageId": "m-1", "role": "user",
                                       "parts": [{"kind": "text", "text": "hi"}]}}})
            task = answer.json()["result"]
            assert task["status"]["state"] == "completed"
            assert httpx.get(server.url + "/metrics").status_code == 200
        finally:
            server.stop()

    lines = [line for line in err.read_text().splitlines() if line.strip()]
    assert lines
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in records)
    (working,) = [r for r in records if r["message"] == "working on hi"]
    assert working["logger"] == "obs.agent"
    assert working["task_id"] == task["id"]
    assert working["context_id"] == task["contextId"]
    assert working["trace_id"] == TRACE_ID
    # uvicorn's own lines come through the same handler
    assert any(r["logger"].startswith("uvicorn") for r in records)
    # --otel with the console exporter: the spans are printed on stdout
    assert '"name": "A2A SendMessage"' in out.read_text()


def test_otel_without_the_sdk_says_what_to_install(tmp_path: Path):
    (tmp_path / "logger_agent.py").write_text(AGENT)
    # the SDK hidden from the child: as on a machine without interlingua[otel]
    code = ("import sys; sys.modules['opentelemetry.sdk'] = None; "
            "from interlingua.cli.main import main; main()")
    done = subprocess.run([sys.executable, "-c", code, "serve", str(tmp_path / "logger_agent.py"),
                           "--port", "0", "--otel"], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "interlingua[otel]" in done.stderr


@pytest.mark.parametrize("agents", [1, 2], ids=["one agent", "several"])
def test_an_otel_exporter_without_otel_is_refused(tmp_path: Path, agents: int):
    # (it was taken, and nothing traced, where every other option that goes with
    # another is refused)
    (tmp_path / "logger_agent.py").write_text(AGENT)
    (tmp_path / "other_agent.py").write_text(AGENT.replace('"Logger"', '"Other"'))
    files = [str(tmp_path / "logger_agent.py"), str(tmp_path / "other_agent.py")][:agents]
    done = subprocess.run([sys.executable, "-m", "interlingua.cli.main", "serve", *files,
                           "--store", "memory://", "--port", "0", "--otel-exporter", "console"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "error: --otel-exporter goes with --otel\n"


def test_otel_sends_spans_to_an_otlp_collector(tmp_path: Path):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from tests.push.helpers import Hook, serve_hook

    (tmp_path / "logger_agent.py").write_text(AGENT)
    collector = Hook()
    with serve_hook(collector) as collector_url:
        server = Process()
        env = {**os.environ, "PYTHONUNBUFFERED": "1",
               "OTEL_EXPORTER_OTLP_ENDPOINT": collector_url,
               "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_SERVICE_NAME": "obs-test"}
        server.launch([sys.executable, "-c", "from interlingua.cli.main import main; main()",
                       "serve", str(tmp_path / "logger_agent.py"), "--port", str(server.port),
                       "--store", "memory://", "--bindings", "jsonrpc", "--otel"],
                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            server.wait_ready()
            answer = httpx.post(server.url + "/", json={
                "jsonrpc": "2.0", "id": 1, "method": "message/send",
                "params": {"message": {"kind": "message", "messageId": "m-2", "role": "user",
                                       "parts": [{"kind": "text", "text": "hi"}]}}})
            assert answer.json()["result"]["status"]["state"] == "completed"
            deadline = time.monotonic() + 10
            names: set[str] = set()
            while time.monotonic() < deadline and "A2A SendMessage" not in names:
                time.sleep(0.05)
                for received in list(collector.requests):
                    assert received.path == "/v1/traces"
                    assert received.headers["content-type"] == "application/x-protobuf"
                    request = ExportTraceServiceRequest.FromString(received.body)
                    for resource_spans in request.resource_spans:
                        service = {a.key: a.value.string_value
                                   for a in resource_spans.resource.attributes}
                        assert service["service.name"] == "obs-test"
                        for scope_spans in resource_spans.scope_spans:
                            names.update(s.name for s in scope_spans.spans)
        finally:
            server.stop()
    assert {"A2A SendMessage", "A2A executor turn", "A2A store commit"} <= names


def _wait_for(path: Path, text: str, proc: Process, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen = path.read_text()
        if text in seen:
            return seen
        assert proc.proc is not None and proc.proc.poll() is None, seen
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never came: {path.read_text()}")


def _send(url: str, message_id: str) -> None:
    answer = httpx.post(url + "/", json={
        "jsonrpc": "2.0", "id": 1, "method": "message/send",
        "params": {"message": {"kind": "message", "messageId": message_id, "role": "user",
                               "parts": [{"kind": "text", "text": "hi"}]}}}, timeout=30)
    assert answer.json()["result"]["status"]["state"] == "completed"


def test_otel_without_a_collector_says_where_and_complains_once(tmp_path: Path):
    from tests.services import free_port

    (tmp_path / "logger_agent.py").write_text(AGENT)
    port = free_port()
    # nothing listens there; a credential in its URL is never said
    secret, nowhere = "s3cretTOKEN", f"http://***@127.0.0.1:{port}"
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    server = Process()
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://user:{secret}@127.0.0.1:{port}",
           "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_EXPORTER_OTLP_TIMEOUT": "4"}
    with out.open("wb") as stdout, err.open("wb") as stderr:
        server.launch([sys.executable, "-c", "from interlingua.cli.main import main; main()",
                       "serve", str(tmp_path / "logger_agent.py"), "--port", str(server.port),
                       "--store", "memory://", "--bindings", "jsonrpc", "--otel"],
                      env=env, stdout=stdout, stderr=stderr)
        try:
            server.wait_ready()
            # where spans go is said at start-up
            assert f"traces:     OTLP to {nowhere}/v1/traces" in out.read_text()
            _send(server.url, "m-3")
            _wait_for(err, "cannot send spans to the collector", server)
            _send(server.url, "m-4")  # a second batch fails too, at the latest on the way out
        finally:
            server.stop()
    logged = err.read_text()
    assert logged.count("cannot send spans to the collector") == 1, logged
    assert f"collector at {nowhere}/v1/traces (Connection refused)" in logged, logged[-600:]
    # the SDK's own lines for every retry and batch are held back
    assert "Transient error" not in logged and "Failed to export" not in logged, logged
    assert secret not in logged and secret not in out.read_text()


def test_a_failing_collector_is_told_once_not_once_a_batch(tmp_path: Path):
    from tests.push.helpers import Hook, serve_hook

    (tmp_path / "logger_agent.py").write_text(AGENT)
    collector = Hook(lambda hook, headers, body, path: 400)  # refuses every batch at once
    err = tmp_path / "stderr"
    with serve_hook(collector) as collector_url, err.open("wb") as stderr:
        server = Process()
        env = {**os.environ, "PYTHONUNBUFFERED": "1",
               "OTEL_EXPORTER_OTLP_ENDPOINT": collector_url, "OTEL_BSP_SCHEDULE_DELAY": "50"}
        server.launch([sys.executable, "-c", "from interlingua.cli.main import main; main()",
                       "serve", str(tmp_path / "logger_agent.py"), "--port", str(server.port),
                       "--store", "memory://", "--bindings", "jsonrpc", "--otel"],
                      env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            server.wait_ready()
            for n in range(1, 4):  # three batches, one after the other
                _send(server.url, f"m-batch-{n}")
                deadline = time.monotonic() + 20
                while len(collector.requests) < n:
                    assert time.monotonic() < deadline, "the batch never came"
                    time.sleep(0.02)
        finally:
            server.stop()
    # the exporter is one thread: the third batch came, so the second one's failure was seen
    logged = err.read_text()
    assert logged.count("cannot send spans to the collector") == 1, logged
    assert "(HTTP 400 Bad Request)" in logged, logged
    assert "Failed to export" not in logged, logged


def test_a_json_log_stream_gets_a_json_banner(tmp_path: Path):
    (tmp_path / "logger_agent.py").write_text(AGENT)
    out = tmp_path / "stdout"
    server = Process()
    with out.open("wb") as stdout:
        server.launch([sys.executable, "-c", "from interlingua.cli.main import main; main()",
                       "serve", str(tmp_path / "logger_agent.py"), "--port", str(server.port),
                       "--store", "memory://", "--log-format", "json", "--otel",
                       "--otel-exporter", "console"],
                      stdout=stdout, stderr=subprocess.DEVNULL)
        try:
            server.wait_ready()
        finally:
            server.stop()
    banner = json.loads(out.read_text().splitlines()[0])
    assert banner["listen"] == server.url
    assert banner["traces"] == {"exporter": "console", "endpoint": "stdout"}


def test_a_json_log_line_holding_a_lone_surrogate_is_written_escaped() -> None:
    """An exception's text may hold what no UTF-8 carries (a file name's undecodable
    bytes, read as surrogates): its JSON line is written with it escaped, where the
    formatter failed and logging printed its own error instead of the line."""
    import io
    import json
    import logging

    from interlingua.observability.logs import JSONFormatter

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JSONFormatter())
    logger = logging.getLogger("interlingua.test.surrogate")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise LookupError("no report named b\udcffd.txt")
        except LookupError:
            logger.exception("executor of task %s failed", "t-\udcfe")
    finally:
        logger.removeHandler(handler)
    (line,) = out.getvalue().splitlines()
    doc = json.loads(line)
    assert doc["message"] == "executor of task t-\\udcfe failed"
    assert "no report named b\\udcffd.txt" in doc["exception"]
