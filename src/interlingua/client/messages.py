"""Making the user message a call sends: text, parts, data and files."""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..core.model import FilePart, Message, Metadata, Part
from ..core.parts import data_part, user_message

__all__ = ["file_from_path", "make_message"]


def file_from_path(path: str | os.PathLike[str], *, media_type: str | None = None) -> FilePart:
    """An inline file part with the file's bytes, name and (guessed) media type."""
    p = Path(path)
    raw = p.read_bytes()
    if media_type is None:
        media_type = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
    return FilePart(raw=raw, media_type=media_type, filename=p.name)


def make_message(
    content: Message | str | Part | Sequence[Part],
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    data: Any = None,
    files: Sequence[FilePart | str | os.PathLike[str]] = (),
    metadata: Metadata | None = None,
) -> Message:
    """A user message: ``content`` (text, parts, or a message) plus a data part
    for ``data`` (when not None) and a file part per entry of ``files``
    (parts as they are, paths read inline)."""
    extra: list[Part] = []
    if data is not None:
        extra.append(data_part(data))
    for f in files:
        extra.append(f if isinstance(f, FilePart) else file_from_path(f))
    if isinstance(content, Message):
        changes: dict[str, Any] = {}
        if extra:
            changes["parts"] = [*content.parts, *extra]
        if task_id is not None:
            changes["task_id"] = task_id
        if context_id is not None:
            changes["context_id"] = context_id
        if metadata is not None:
            changes["metadata"] = metadata
        return msgspec.structs.replace(content, **changes) if changes else content
    parts: list[Any] = [content] if isinstance(content, str) else list(
        content if isinstance(content, Sequence) else [content]
    )
    return user_message(
        [*parts, *extra], task_id=task_id, context_id=context_id, metadata=metadata
    )
