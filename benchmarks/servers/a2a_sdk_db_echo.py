"""Echo agent on the official ``a2a-sdk`` 1.x with a database task store (PostgreSQL).

Runs inside ``benchmarks/.venv-a2a-sdk`` (``benchmarks/setup.sh`` installs
``a2a-sdk[postgresql]`` there). The agent is the one of ``a2a_sdk_echo.py``; only the
store differs, chosen by ``BENCH_SDK_MODE``:

- ``store`` (default): ``DatabaseTaskStore``, one process;
- ``cluster``: the SDK's cluster mode, ``VersionedDatabaseTaskStore`` with a
  ``DatabaseTaskEventStream``: several such processes on one database, a stream held on
  one of them follows a task running on another by polling the shared event table
  (every 0.5 s, the SDK's default).

The message text ``ts N PAUSE`` makes the agent emit N chunks of one artifact whose text
is the wall-clock time of the emit (seconds), ``PAUSE`` seconds apart (0: back to back),
then complete: the cross-replica latency case of ``benchmarks/scale.py``.

Environment: ``BENCH_STORE_URL`` (``postgresql+asyncpg://…``), ``BENCH_PUBLIC_URL``,
``BENCH_SDK_MODE``, ``BENCH_SDK_POOL`` (connections of SQLAlchemy's pool, default 10).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator

from a2a.helpers import get_message_text, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import DatabaseTaskStore, TaskUpdater
from a2a_sdk_echo import EchoExecutor, agent_card
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette


class TimestampEchoExecutor(EchoExecutor):
    """The echo agent, plus ``ts N PAUSE``: N chunks carrying their emit time."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        words = get_message_text(message).split() if message is not None else []
        if message is None or len(words) != 3 or words[0] != "ts":
            await super().execute(context, event_queue)
            return
        count, pause = int(words[1]), float(words[2])
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        aid = f"ts-{task.id}"
        for n in range(count):
            part = new_text_part(f"{time.time():.6f} {n}")  # two may share a microsecond
            await updater.add_artifact([part], artifact_id=aid, append=n > 0)
            if pause:
                await asyncio.sleep(pause)
            elif n % 64 == 63:
                await asyncio.sleep(0)
        await updater.complete()


def create() -> Starlette:
    """App factory for ``uvicorn --factory``."""
    card = agent_card(os.environ.get("BENCH_PUBLIC_URL", "http://127.0.0.1:8000/"))
    pool = int(os.environ.get("BENCH_SDK_POOL", "10"))
    engine = create_async_engine(os.environ["BENCH_STORE_URL"], pool_size=pool, max_overflow=0)
    mode = os.environ.get("BENCH_SDK_MODE", "store")
    if mode == "cluster":
        from a2a.server.cluster import DatabaseTaskEventStream, VersionedDatabaseTaskStore

        store = VersionedDatabaseTaskStore(engine)
        stream = DatabaseTaskEventStream(engine)
        handler = DefaultRequestHandler(
            agent_executor=TimestampEchoExecutor(),
            task_store=store,
            agent_card=card,
            event_stream=stream,
        )
        ready = [store.initialize, stream.initialize]
    elif mode == "store":
        plain = DatabaseTaskStore(engine)
        handler = DefaultRequestHandler(
            agent_executor=TimestampEchoExecutor(), task_store=plain, agent_card=card
        )
        ready = [plain.initialize]
    else:
        raise SystemExit(f"BENCH_SDK_MODE: store or cluster, not {mode!r}")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for step in ready:
            await step()  # tables made before the first request, not during it
        yield
        await engine.dispose()

    routes = [*create_jsonrpc_routes(handler, rpc_url="/"), *create_agent_card_routes(card)]
    return Starlette(routes=routes, lifespan=lifespan)
