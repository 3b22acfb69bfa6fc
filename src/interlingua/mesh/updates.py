"""Reading a task's updates off the mesh, in both layouts (SAM's status topics, the
A2A-over-MQTT profile's reply topic): anyone allowed on the broker may publish where
updates come, so an update that cannot be read, or is about another task, is no
update of the caller's task. It is skipped with one warning and the task goes on."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..core.dialects import Codec
from ..core.dialects.base import StreamItem
from ..core.errors import InvalidAgentResponse
from ..core.model import ArtifactUpdate, Message, StatusUpdate, Task
from .codec import MESH_CODEC

__all__ = ["read_update", "task_of"]

log = logging.getLogger("interlingua.mesh")


def task_of(item: StreamItem) -> str | None:
    """The task an answer is about (None: a bare message that names none)."""
    if isinstance(item, Task):
        return item.id
    if isinstance(item, (StatusUpdate, ArtifactUpdate, Message)):
        return item.task_id
    return None


def read_update(raw: bytes, task_id: str | None, agent: str, codec: Codec = MESH_CODEC, *,
                last: Callable[[bytes, str | None], bool] | None = None) -> StreamItem | None:
    """The update ``raw`` (an answer's ``result``) of the task ``task_id`` (None: of
    any). None, with a warning, for one that cannot be read or is about another task.
    ``last`` tells by its shape an answer of the task that ends the turn (the
    profile's layout carries them with the updates): one that cannot be read raises
    ``InvalidAgentResponse``, as a final answer on SAM's reply topic does, rather than
    leave the call waiting."""
    try:
        item = codec.decode_stream_item(raw)
    except InvalidAgentResponse as exc:
        if last is not None and last(raw, task_id):
            raise
        log.warning("an answer to a request to %s that cannot be read as an update was "
                    "skipped: %s", agent, exc.message)
        return None
    named = task_of(item)
    if task_id is not None and named is not None and named != task_id:
        log.warning("an answer to a request to %s about task %s, not %s, was skipped",
                    agent, named, task_id)
        return None
    return item
