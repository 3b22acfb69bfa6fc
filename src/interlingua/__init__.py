"""interlingua: an A2A agent framework and client that speaks every A2A dialect."""

from __future__ import annotations

from .client import ArtifactAssembler, Client
from .clients import client_for
from .core.model import (
    AgentCard,
    AgentProvider,
    AgentSkill,
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    Part,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from .core.parts import (
    agent_message,
    data_part,
    file_part,
    get_data,
    get_text,
    text_part,
    user_message,
)
from .host import create_app
from .server import Agent, Context, Service, ServiceSettings

# the one place the version is kept: the build reads it from here (pyproject.toml)
__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentCard",
    "AgentProvider",
    "AgentSkill",
    "Artifact",
    "ArtifactAssembler",
    "ArtifactUpdate",
    "Client",
    "Context",
    "DataPart",
    "FilePart",
    "Message",
    "Part",
    "Role",
    "Service",
    "ServiceSettings",
    "StatusUpdate",
    "Task",
    "TaskState",
    "TaskStatus",
    "TextPart",
    "__version__",
    "agent_message",
    "client_for",
    "create_app",
    "data_part",
    "file_part",
    "get_data",
    "get_text",
    "text_part",
    "user_message",
]
