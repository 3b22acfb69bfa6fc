"""The agent side: what an agent builder uses to serve an agent over A2A.

``create_app``, which puts it behind its bindings, is the host's
(``interlingua.host``, exported as ``interlingua.create_app``)."""

from __future__ import annotations

from ..core.output import InvalidOutput
from .agent import Agent, Skill
from .cards.serving import A2AServer
from .context import Context, RequestInfo, TaskCanceled
from .engine import Engine, EngineConfig
from .service import Binding, Service
from .settings import ServiceSettings

__all__ = [
    "A2AServer",
    "Agent",
    "Binding",
    "Context",
    "Engine",
    "EngineConfig",
    "InvalidOutput",
    "RequestInfo",
    "Service",
    "ServiceSettings",
    "Skill",
    "TaskCanceled",
]
