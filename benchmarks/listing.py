"""The list-tasks case: ListTasks latency against SQLite stores of different sizes.

A store file per size is filled once per run by ``fill_store.py`` (a helper process
writing through ``interlingua.stores``, no HTTP), then each round starts the interlingua
server on it afresh and runs wrk (one connection) against v1.0 ``ListTasks`` with
``pageSize`` 50 and each filter in turn. Listing does not change the store, so every
round reads the same file.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import msgspec

import launch
import load
from payloads import V1_0, VerificationError
from targets import BENCH_DIR, PROJECT_PYTHON

PAGE_SIZE = 50
FILTERED_STATE = "TASK_STATE_FAILED"
_SENTINEL = 987654321987


class FillResult(msgspec.Struct):
    """What ``fill_store.py`` prints (the same fields)."""

    tasks: int
    contexts: int
    completed: int
    failed: int
    sample_context: str
    sample_context_tasks: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Filled:
    path: Path
    result: FillResult

    @property
    def store_url(self) -> str:
        return f"sqlite:///{self.path}"


@dataclass(frozen=True, slots=True)
class ListFilter:
    name: str  # as reported: none, status, contextId
    params: dict[str, str]
    matching: int  # totalSize the answer must report


def fill(directory: Path, tasks: int, cpu: int | None) -> Filled:
    """A fresh SQLite file holding ``tasks`` finished echo tasks."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"tasks-{tasks}.db"
    cmd = [
        str(PROJECT_PYTHON),
        str(BENCH_DIR / "fill_store.py"),
        "--url",
        f"sqlite:///{path}",
        "--tasks",
        str(tasks),
    ]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu), *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise load.LoadError(f"fill_store.py failed ({done.returncode}):\n{done.stderr}")
    result = msgspec.json.decode(done.stdout.strip().splitlines()[-1], type=FillResult)
    if result.tasks != tasks:
        raise load.LoadError(f"fill_store.py wrote {result.tasks} tasks, asked {tasks}")
    return Filled(path=path, result=result)


def filters(filled: Filled) -> list[ListFilter]:
    r = filled.result
    return [
        ListFilter("none", {}, r.tasks),
        ListFilter("status", {"status": FILTERED_STATE}, r.failed),
        ListFilter("contextId", {"contextId": r.sample_context}, r.sample_context_tasks),
    ]


def body(n: int, flt: ListFilter) -> bytes:
    params: dict[str, object] = {"pageSize": PAGE_SIZE, **flt.params}
    envelope = {"jsonrpc": "2.0", "id": n, "method": "ListTasks", "params": params}
    return msgspec.json.encode(envelope)


def body_template(flt: ListFilter) -> str:
    return body(_SENTINEL, flt).decode().replace("%", "%%").replace(str(_SENTINEL), "%d")


# Typed view of the answer, deep enough to check it.


class _Status(msgspec.Struct):
    state: str
    timestamp: str = ""


class _Task(msgspec.Struct, rename="camel"):
    id: str
    context_id: str
    status: _Status


class _Result(msgspec.Struct, rename="camel"):
    tasks: list[_Task] = []
    total_size: int = -1
    page_size: int = -1
    next_page_token: str = ""


class _Error(msgspec.Struct):
    code: int
    message: str = ""


class _Response(msgspec.Struct):
    id: int | str | None = None
    result: _Result | None = None
    error: _Error | None = None


def verify(running: launch.Running, flt: ListFilter, request_id: int) -> int:
    """One ListTasks with ``flt``; raise VerificationError unless it is the right page.

    Returns the reported totalSize.
    """
    status, raw = launch.post(running, running.target.rpc_path, body(request_id, flt), V1_0)
    if status != 200:
        raise VerificationError(f"ListTasks ({flt.name}): HTTP {status}: {raw[:300]!r}")
    try:
        answer = msgspec.json.decode(raw, type=_Response)
    except msgspec.DecodeError as exc:
        raise VerificationError(f"ListTasks ({flt.name}): undecodable ({exc})") from exc
    if answer.error is not None or answer.result is None:
        error = answer.error
        fault = f"JSON-RPC error {error.code}: {error.message}" if error else "no result"
        raise VerificationError(f"ListTasks ({flt.name}): {fault}")
    if answer.id != request_id:
        raise VerificationError(f"ListTasks ({flt.name}): id {answer.id!r}, not {request_id}")
    result = answer.result
    expected_page = min(PAGE_SIZE, flt.matching)
    faults = []
    if result.total_size != flt.matching:
        faults.append(f"totalSize {result.total_size}, expected {flt.matching}")
    if len(result.tasks) != expected_page:
        faults.append(f"{len(result.tasks)} tasks on the page, expected {expected_page}")
    if flt.matching > PAGE_SIZE and not result.next_page_token:
        faults.append("no nextPageToken although more tasks match")
    state = flt.params.get("status")
    context = flt.params.get("contextId")
    for task in result.tasks:
        if state is not None and task.status.state != state:
            faults.append(f"task {task.id} is {task.status.state}, filter asked {state}")
            break
        if context is not None and task.context_id != context:
            faults.append(f"task {task.id} is in context {task.context_id}, not {context}")
            break
    stamps = [t.status.timestamp for t in result.tasks]
    if stamps != sorted(stamps, reverse=True):
        faults.append("the page is not ordered by status timestamp, newest first")
    if faults:
        raise VerificationError(f"ListTasks ({flt.name}): " + "; ".join(faults))
    return result.total_size


def script(directory: Path, flt: ListFilter) -> Path:
    """The wrk script for ``flt``: every good answer carries a ``tasks`` member."""
    headers = dict(V1_0.headers)
    return load.write_script(
        directory, f"list-{flt.name}", load.lua_script(body_template(flt), headers, '"tasks"')
    )
