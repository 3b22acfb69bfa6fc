"""Task generations (A2A 1.1, draft): what the client sends and reads of them.

A2A 1.1 numbers a task's mutations: ``generation`` starts at 1 and every status or
artifact event carries the number after it (spec §3.2.7). The client uses it three
ways, all only with an agent it speaks 1.1 to (an endpoint whose card interface says
``protocolVersion`` 1.1, sent as ``A2A-Version: 1.1``):

- ``GetTask`` with ``currentGeneration``: a long poll, answered once the task is past
  that generation (``Client.get_task(after_generation=n)``);
- ``SendMessageConfiguration.ifGenerationMatch``: a follow-up refused with
  ``TaskGenerationMismatch`` when the task has moved on (``Client.send(if_generation_match=g)``);
- each stream event's generation: a gap means missed events (``stream.py`` fetches the
  task then).

An agent spoken to in 1.0 or older knows none of this, and would ignore the fields:
asking for them there raises ``GenerationsNotSupported`` before anything is sent, never
a request with the field silently dropped (``encoding.py`` checks it for every binding).
The fields are written by the 1.1 codec (``core/dialects/v1_1.py``), the one calls to a
1.1 endpoint are encoded with; ``TaskGenerationMismatch`` is the core's error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ..core import errors
from ..core.calls import Call, GetTask, SendMessage
from ..core.errors import A2AError, RemoteError
from ..core.model import TERMINAL_STATES, Task
from ..core.reading import ascii_int
from .errors import AgentTimeout, DialectMismatch

__all__ = [
    "GENERATIONS_VERSION",
    "GenerationTracker",
    "GenerationsNotSupported",
    "TaskGenerationMismatch",
    "check_generation",
    "generation_of",
    "long_poll",
    "long_poll_asked",
    "mismatch_in",
    "mismatch_of_status",
    "needs_generations",
]

#: the A2A version (Major.Minor) that has task generations
GENERATIONS_VERSION = "1.1"

_MISMATCH_REASON = "TASK_GENERATION_MISMATCH"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


class TaskGenerationMismatch(errors.TaskGenerationMismatch):
    """The core's ``TaskGenerationMismatch`` as the client raises it, with what the
    agent said: a follow-up sent with ``if_generation_match`` found the task at another
    generation (someone changed it first). Fetch the task, then decide whether to retry."""

    @property
    def task_id(self) -> str | None:
        return _meta(self.data, "taskId")

    @property
    def expected_generation(self) -> int | None:
        return _int(_meta(self.data, "expectedGeneration"))

    @property
    def current_generation(self) -> int | None:
        return _int(_meta(self.data, "currentGeneration"))


class GenerationsNotSupported(DialectMismatch):
    """Task generations were asked of an agent this client does not speak A2A 1.1 to."""


def _meta(data: Any, key: str) -> str | None:
    value = data.get(key) if isinstance(data, dict) else None
    return str(value) if value is not None else None


#: a generation as the agent wrote it in an error's details, if it is one
_int = ascii_int


# ------------------------------------------------------------------ calls out


def answered(call: Call) -> Call:
    """``call`` as its answer is read: without its 1.1 fields, which say nothing of the
    answer's shape (the v1.0 reading of the answer refuses a call that has them)."""
    if isinstance(call, GetTask) and call.current_generation is not None:
        return msgspec.structs.replace(call, current_generation=None)
    if isinstance(call, SendMessage) and call.config.if_generation_match is not None:
        return msgspec.structs.replace(
            call, config=msgspec.structs.replace(call.config, if_generation_match=None))
    return call


def needs_generations(call: object) -> bool:
    """The call asks for something only A2A 1.1 has."""
    if isinstance(call, GetTask):
        return call.current_generation is not None
    return isinstance(call, SendMessage) and call.config.if_generation_match is not None


# ------------------------------------------------------------------ long polls

#: pauses between long polls that an agent answered at once, unchanged (one that
#: does not hold them: spec §3.2.7 makes holding a SHOULD): doubling up to the last
def check_generation(name: str, value: object, *, minimum: int) -> None:
    """A ``ValueError`` unless ``value`` (the argument ``name``) is an integer >= ``minimum``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, not {value!r}")


def long_poll_asked(after_generation: object, wait: float | None) -> bool:
    """Whether ``get_task``'s arguments ask for a long poll, checked (a ``ValueError``
    for a ``wait`` without ``after_generation``, a bad generation, a negative wait);
    every client's ``get_task`` reads them so."""
    if after_generation is None:
        if wait is not None:
            raise ValueError("wait is for a long poll: give after_generation too")
        return False
    check_generation("after_generation", after_generation, minimum=0)
    if wait is not None and wait < 0:
        raise ValueError("wait must be a number of seconds >= 0")
    return True


_UNHELD_PAUSES = (0.25, 0.5, 1.0, 2.0)
#: an answer sooner than this, unchanged, was not held
_HELD = 0.5


async def long_poll(get: Callable[[GetTask], Awaitable[Task]], task_id: str,
                    history_length: int | None, after: int, wait: float | None) -> Task:
    """``Client.get_task(after_generation=after, wait=wait)``: ``get`` makes one call."""
    call = GetTask(id=task_id, history_length=history_length, current_generation=after)
    if wait is None:
        return numbered(await get(call))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    task: Task | None = None
    unheld = 0
    while (remaining := deadline - loop.time()) > 0:
        asked = loop.time()
        try:
            async with asyncio.timeout(remaining):
                task = numbered(await get(call))
        except TimeoutError:
            task = None  # the caller's wait is over, the agent still holding
            break
        except AgentTimeout:
            continue  # the client's timeout is shorter than the agent's hold: ask again
        if task.generation > after or task.status.state in TERMINAL_STATES:
            return task
        # answered unchanged: the agent's own longest hold ran out, or it holds nothing
        if loop.time() - asked < _HELD:
            pause = _UNHELD_PAUSES[min(unheld, len(_UNHELD_PAUSES) - 1)]
            unheld += 1
            await asyncio.sleep(min(pause, max(0.0, deadline - loop.time())))
    if task is not None:
        return task
    return numbered(await get(GetTask(id=task_id, history_length=history_length)))


def numbered(task: Task) -> Task:
    """``task``, which must carry a generation: 0 says the agent keeps none."""
    if task.generation <= 0:
        raise GenerationsNotSupported(
            f"the agent answered task {task.id} without a generation (0): it does not "
            "number its tasks, so there is nothing to wait for (spec §3.2.7)")
    return task


# ------------------------------------------------------------------ answers in


class _Generation(msgspec.Struct):
    generation: int | str | None = None


class _StreamResponse(msgspec.Struct, rename="camel"):
    task: _Generation | None = None
    status_update: _Generation | None = None
    artifact_update: _Generation | None = None


_task = msgspec.json.Decoder(_Generation)
_stream = msgspec.json.Decoder(_StreamResponse)


def generation_of(raw: bytes, *, streamed: bool = False) -> int:
    """The generation a ``Task`` (or, ``streamed``, a ``StreamResponse``) carries as the
    agent sent it; 0 when it carries none (a message, or an agent without generations)."""
    try:
        if streamed:
            doc = _stream.decode(raw)
            found = doc.task or doc.status_update or doc.artifact_update
        else:
            found = _task.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return 0
    value = _int(found.generation) if found is not None else None
    return value if value is not None and value > 0 else 0


def mismatch_in(err: A2AError) -> A2AError:
    """``err`` as the client's ``TaskGenerationMismatch`` when the agent meant one: the
    core's, or an error whose code was read as unknown but whose ErrorInfo names the
    reason (a 1.0 codec reading it); else ``err``."""
    if type(err) is errors.TaskGenerationMismatch:
        return TaskGenerationMismatch(err.message, data=err.data)
    if isinstance(err, RemoteError):
        found = _mismatch(err.data, err.message)
        if found is not None:
            return found
    return err


def mismatch_of_status(status: Any) -> A2AError | None:
    """A ``google.rpc.Status`` (the ``error`` member of an HTTP+JSON body, a gRPC
    status's details) whose ErrorInfo says ``TASK_GENERATION_MISMATCH``, as that error."""
    if not isinstance(status, dict):
        return None
    message = status.get("message")
    return _mismatch(status.get("details"), message if isinstance(message, str) else None)


def _mismatch(details: Any, message: str | None) -> TaskGenerationMismatch | None:
    if not isinstance(details, list):
        return None
    for info in details:
        if (isinstance(info, dict) and info.get("@type") == _ERROR_INFO
                and info.get("reason") == _MISMATCH_REASON):
            meta = info.get("metadata")
            return TaskGenerationMismatch(message or None,
                                          data=meta if isinstance(meta, dict) else None)
    return None


# --------------------------------------------------------------------- streams


class GenerationTracker:
    """The generations of one task's events, in the order they arrive.

    ``see(n)`` says what event ``n`` means: "next" (one past the last), "gap" (events
    were missed: fetch the task), "old" (already in a task seen since: a snapshot the
    stream began with or one fetched to fill a gap), or "off" once the agent has shown
    that it does not number its events (a 0, the same number twice in a row, or one
    going back: spec §3.2.7), after which every event is "off".
    """

    __slots__ = ("last", "off", "snapshot")

    def __init__(self) -> None:
        self.last = 0
        self.off = False
        #: ``last`` is a whole task's, not an event's
        self.snapshot = False

    def see(self, generation: int, *, snapshot: bool = False) -> str:
        if self.off:
            return "off"
        if generation <= 0:
            return self._off()
        if snapshot:
            self.reconciled(generation)
            return "next"
        if generation <= self.last:
            # at or before a whole task seen: already in it; else a repeat or a step back
            return "old" if self.snapshot else self._off()
        gap = self.last > 0 and generation > self.last + 1
        self.last, self.snapshot = generation, False
        return "gap" if gap else "next"

    def reconciled(self, generation: int) -> None:
        """A whole task at ``generation``: events at or before it are in it."""
        if generation >= self.last:
            self.last, self.snapshot = generation, True

    def _off(self) -> str:
        self.off = True
        return "off"
