"""Version-neutral calls: what a request asks for once its dialect is peeled off.

A codec turns a JSON-RPC method + params (or a REST route, a gRPC call, an MQTT
message) into one of these; the server's handler takes only these.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec

from .model import AgentCard, Message, Metadata, PushConfig, Task, TaskState

__all__ = [
    "Call",
    "CancelTask",
    "DeletePushConfig",
    "GetExtendedCard",
    "GetPushConfig",
    "GetTask",
    "ListPushConfigs",
    "ListTasks",
    "ListTasksResult",
    "PushConfigsPage",
    "Result",
    "SendConfig",
    "SendMessage",
    "SetPushConfig",
    "SubscribeToTask",
]


class SendConfig(msgspec.Struct, omit_defaults=True):
    accepted_output_modes: list[str] | None = None
    history_length: int | None = None
    # Absent means blocking in every dialect (DIALECTS.md §i.31).
    blocking: bool = True
    push_config: PushConfig | None = None
    #: A2A 1.1: a follow-up is taken only if the task is at this generation
    if_generation_match: int | None = None


class SendMessage(msgspec.Struct, omit_defaults=True):
    message: Message
    config: SendConfig = msgspec.field(default_factory=SendConfig)
    metadata: Metadata | None = None
    tenant: str | None = None
    streaming: bool = False
    # v0.1 clients name the task themselves (``tasks/send`` with ``id``); the
    # engine creates it when unknown and continues it when known.
    client_task_id: str | None = None


class GetTask(msgspec.Struct, omit_defaults=True):
    id: str
    history_length: int | None = None
    tenant: str | None = None
    #: A2A 1.1: answer once the task's generation is past this one (a long poll)
    current_generation: int | None = None


class ListTasks(msgspec.Struct, omit_defaults=True):
    context_id: str | None = None
    status: TaskState | None = None
    page_size: int = 50
    page_token: str | None = None
    history_length: int | None = None
    status_timestamp_after: str | None = None
    include_artifacts: bool = False
    tenant: str | None = None
    #: the answer is written as v1.0 JSON (set by that codec's ``for_answer``):
    #: a store may then give tasks already in that form (``ListTasksResult.encoded``)
    v1_json: bool = False


class ListTasksResult(msgspec.Struct):
    tasks: list[Task]
    next_page_token: str
    page_size: int
    total_size: int
    #: when set (only for a ``v1_json`` query), the page in order instead of
    #: ``tasks``: the whole page as one v1.0 JSON array, or a list of runs of
    #: tasks in v1.0 JSON (comma-separated, written into the array as they are)
    #: and Tasks where the store had none
    encoded: msgspec.Raw | list[msgspec.Raw | Task] | None = None


class CancelTask(msgspec.Struct, omit_defaults=True):
    id: str
    metadata: Metadata | None = None
    tenant: str | None = None


class SubscribeToTask(msgspec.Struct, omit_defaults=True):
    id: str
    tenant: str | None = None
    history_length: int | None = None


class SetPushConfig(msgspec.Struct, omit_defaults=True):
    task_id: str
    config: PushConfig
    tenant: str | None = None


class GetPushConfig(msgspec.Struct, omit_defaults=True):
    task_id: str
    config_id: str | None = None
    tenant: str | None = None


class ListPushConfigs(msgspec.Struct, omit_defaults=True):
    task_id: str
    page_size: int | None = None
    page_token: str | None = None
    tenant: str | None = None

    @property
    def paged(self) -> bool:
        """A page was asked for (v1.0 has pages): answered with a ``PushConfigsPage``."""
        return self.page_size is not None or bool(self.page_token)


class PushConfigsPage(msgspec.Struct):
    """One page of a task's push configs (a ``ListPushConfigs`` that asked for one)."""

    configs: list[PushConfig]
    #: the token of the page after it; "" for the last
    next_page_token: str


class DeletePushConfig(msgspec.Struct, omit_defaults=True):
    task_id: str
    config_id: str
    tenant: str | None = None


class GetExtendedCard(msgspec.Struct, omit_defaults=True):
    tenant: str | None = None
    #: v0.3's card of the caller (``GET /v1/card``, gRPC ``GetAgentCard``): with no
    #: extended card, the answer is None (the public card, a success), not an error
    public_if_none: bool = False


Call: TypeAlias = (
    SendMessage
    | GetTask
    | ListTasks
    | CancelTask
    | SubscribeToTask
    | SetPushConfig
    | GetPushConfig
    | ListPushConfigs
    | DeletePushConfig
    | GetExtendedCard
)

# What a handler answers: a Task or a Message (send), a page of tasks, a card,
# a push config or a list of them, or None (delete).
Result: TypeAlias = (Task | Message | ListTasksResult | AgentCard | PushConfig | list[PushConfig]
                     | PushConfigsPage | None)
