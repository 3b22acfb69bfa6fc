"""Structured logs: one JSON object per line, with the ids of what was being done.

``configure("json")`` puts a handler on the root logger whose every line is a
JSON object: time, level, logger, message, and, where known, the task id, the
context id and the trace and span ids. The task and context ids live in context
variables set by the request and executor-turn hooks (``observability/install.py``)
and inherited by everything an executor starts; the trace ids are read from
OpenTelemetry's current span, when there is one.
"""

from __future__ import annotations

import logging
import sys
import time
from contextvars import ContextVar
from typing import Any, Literal, TextIO

import msgspec

from ..core import trace_context as propagation

__all__ = ["CONTEXT_ID", "TASK_ID", "JSONFormatter", "configure", "json_enabled"]

#: the task being worked on (a request about it, or its executor's turn)
TASK_ID: ContextVar[str | None] = ContextVar("interlingua_log_task_id", default=None)
#: the context of that task
CONTEXT_ID: ContextVar[str | None] = ContextVar("interlingua_log_context_id", default=None)

_json = False

_encode = msgspec.json.Encoder().encode


def json_enabled() -> bool:
    """``configure("json")`` was called: the hooks then keep the ids in context."""
    return _json


def _trace_ids() -> tuple[str, str] | None:
    trace = propagation.trace
    if trace is None:
        return None
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"


class JSONFormatter(logging.Formatter):
    """A log record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                    + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        task_id = getattr(record, "task_id", None) or TASK_ID.get()
        if task_id:
            out["task_id"] = task_id
        context_id = getattr(record, "context_id", None) or CONTEXT_ID.get()
        if context_id:
            out["context_id"] = context_id
        ids = _trace_ids()
        if ids is not None:
            out["trace_id"], out["span_id"] = ids
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        try:
            return _encode(out).decode()
        except UnicodeEncodeError:  # a lone surrogate (an undecodable file name, say)
            return _encode({k: v.encode("utf-8", "backslashreplace").decode()
                            if isinstance(v, str) else v for k, v in out.items()}).decode()


def configure(fmt: Literal["text", "json"] = "text", level: int | str = logging.INFO,
              stream: TextIO | None = None) -> None:
    """Log to ``stream`` (stderr) in ``fmt``; replaces the root logger's handlers.
    Call it before the app is built, so that its hooks keep the ids in context."""
    global _json
    handler = logging.StreamHandler(stream or sys.stderr)
    if fmt == "json":
        handler.setFormatter(JSONFormatter())
        # uvicorn's loggers have handlers of their own: theirs go through ours
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
            logger = logging.getLogger(name)
            logger.handlers.clear()
            logger.propagate = True
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    _json = fmt == "json"
