"""The agent side: what an agent builder uses to serve an agent over A2A."""

from __future__ import annotations

from .agent import Agent, Skill
from .app import create_app, lifespans
from .cards import A2AServer
from .context import Context, RequestInfo, TaskCanceled
from .engine import Engine, EngineConfig

__all__ = [
    "A2AServer",
    "Agent",
    "Context",
    "Engine",
    "EngineConfig",
    "RequestInfo",
    "Skill",
    "TaskCanceled",
    "create_app",
    "lifespans",
]
