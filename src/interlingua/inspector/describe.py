"""Canonical A2A objects as the JSON the inspector's page reads.

The page gets every task, message and update in one neutral shape
(``msgspec.to_builtins`` of the canonical model: snake_case members, parts
tagged by ``kind``, file bytes in base64), whatever dialect the agent
spoke; the wire form is shown beside it, in the raw frames.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..core.model import ArtifactUpdate, Message, StatusUpdate, Task

__all__ = ["item_json", "item_type", "to_json"]


def to_json(value: Any) -> Any:
    return msgspec.to_builtins(value)


def item_type(item: Any) -> str:
    if isinstance(item, Task):
        return "task"
    if isinstance(item, StatusUpdate):
        return "status"
    if isinstance(item, ArtifactUpdate):
        return "artifact"
    if isinstance(item, Message):
        return "message"
    return type(item).__name__.lower()


def item_json(item: Any) -> dict[str, Any]:
    """``{"type", "taskId", "contextId", "state", "item"}`` for a stream item or a result."""
    task_id = item.id if isinstance(item, Task) else getattr(item, "task_id", None)
    state = None
    if isinstance(item, (Task, StatusUpdate)):
        state = item.status.state.value
    return {"type": item_type(item), "taskId": task_id,
            "contextId": getattr(item, "context_id", None), "state": state,
            "item": to_json(item)}
