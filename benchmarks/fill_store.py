"""Fill a fresh interlingua store with finished echo tasks, straight through the store API.

Run by the list-tasks case in the project venv, before the server starts on the file::

    python benchmarks/fill_store.py --url sqlite:////tmp/x/tasks.db --tasks 100000

Every task is what the echo agent leaves after a unary send: created from a user message
(``hello``), one artifact echoing it, then a final status. Task ``i`` belongs to context
``i % contexts`` (so a context's tasks are spread over the whole listing) and ends failed
when ``i % 10 == 9``, completed otherwise; status timestamps grow with ``i``. Writes go in
concurrent batches, which the SQLite store commits together (one transaction per batch).
Prints one JSON object (``FillResult``) on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime, timedelta

import msgspec

from interlingua.core.model import (
    Artifact,
    ArtifactUpdate,
    Event,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
    TextPart,
)
from interlingua.core.parts import new_id
from interlingua.stores import Scope, open_store

TEXT = "hello"
FAILED_EVERY = 10  # task i ends failed when i % 10 == 9
BATCH = 500
START = datetime(2026, 1, 1, tzinfo=UTC)


class FillResult(msgspec.Struct):
    tasks: int
    contexts: int
    completed: int
    failed: int
    #: a context id to filter on, and how many tasks it holds
    sample_context: str
    sample_context_tasks: int
    seconds: float


def _stamp(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def task_events(i: int, context_id: str) -> tuple[list[Event], str, str]:
    """The log of echo task ``i``, the time it was last written, and its message id."""
    task_id = new_id()
    created_at = START + timedelta(milliseconds=10 * i)
    ended_at = created_at + timedelta(milliseconds=5)
    message_id = f"fill-{i}"
    message = Message(
        message_id=message_id,
        role=Role.USER,
        parts=[TextPart(text=TEXT)],
        task_id=task_id,
        context_id=context_id,
    )
    submitted = TaskStatus(state=TaskState.SUBMITTED, timestamp=_stamp(created_at))
    state = TaskState.FAILED if i % FAILED_EVERY == FAILED_EVERY - 1 else TaskState.COMPLETED
    events: list[Event] = [
        TaskCreated(
            task=Task(id=task_id, context_id=context_id, status=submitted, history=[message])
        ),
        ArtifactUpdate(
            task_id=task_id,
            context_id=context_id,
            artifact=Artifact(artifact_id=new_id(), parts=[TextPart(text=TEXT)], index=0),
            last_chunk=True,
        ),
        StatusUpdate(
            task_id=task_id,
            context_id=context_id,
            status=TaskStatus(state=state, timestamp=_stamp(ended_at)),
        ),
    ]
    return events, _stamp(ended_at), message_id


async def fill(url: str, tasks: int, per_context: int) -> FillResult:
    contexts = [new_id() for _ in range(max(1, tasks // per_context))]
    store = open_store(url)
    scope = Scope()
    start = time.perf_counter()
    await store.open()
    try:
        for first in range(0, tasks, BATCH):
            writes = []
            for i in range(first, min(first + BATCH, tasks)):
                events, now, message_id = task_events(i, contexts[i % len(contexts)])
                writes.append(
                    store.create_task(scope, events, dialect="1.0", now=now, message_id=message_id)
                )
            await asyncio.gather(*writes)
    finally:
        await store.close()
    failed = tasks // FAILED_EVERY
    sample = 7 % len(contexts)
    return FillResult(
        tasks=tasks,
        contexts=len(contexts),
        completed=tasks - failed,
        failed=failed,
        sample_context=contexts[sample],
        sample_context_tasks=len(range(sample, tasks, len(contexts))),
        seconds=time.perf_counter() - start,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="store URL, e.g. sqlite:////tmp/x/tasks.db")
    parser.add_argument("--tasks", type=int, required=True)
    parser.add_argument("--per-context", type=int, default=100, help="tasks per context")
    args = parser.parse_args(argv)
    result = asyncio.run(fill(args.url, args.tasks, args.per_context))
    sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
