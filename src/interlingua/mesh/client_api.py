"""The public API both mesh clients share (``MeshClient``, ``EmqxClient``), built on
what each does its own way: ``call`` (send, get, cancel), ``_follow`` (a stream)
and ``_message`` (how a send names its task)."""

from __future__ import annotations

import dataclasses
import os
import ssl
import uuid
from collections.abc import AsyncGenerator, Sequence
from types import TracebackType
from typing import Any, Self

from ..client.card import FetchedCard, parse_card
from ..client.errors import DialectMismatch, too_large
from ..client.generations import (
    GENERATIONS_VERSION,
    GenerationsNotSupported,
    check_generation,
    long_poll,
    long_poll_asked,
)
from ..client.messages import make_message
from ..client.security import CardVerifier, UnverifiedCard
from ..client.session import Session
from ..client.stream import StreamEvent
from ..client.tls import CertLike, ssl_context
from ..client.transport import HTTPXTransport
from ..core.calls import Call, CancelTask, GetTask, SendConfig, SendMessage, SubscribeToTask
from ..core.model import AgentCard, FilePart, Message, Metadata, Part, PushConfig, Task
from .topics import MeshURL

__all__ = ["MeshClientAPI", "http_only", "named_for", "verified_card", "with_tls"]

#: ``Client``'s keywords a mesh client takes and has no use for (it has one binding
#: and no HTTP connection of its own; ``dialect`` each client reads itself)
_HTTP_ONLY = frozenset({"binding", "httpx_client", "transport", "resume",
                        "allow_insecure_interfaces"})


def http_only(options: dict[str, Any]) -> None:
    """A TypeError for a keyword in ``options`` that ``Client`` would refuse too (a
    misspelt ``timeout``, say): taken by ``client_for`` for an HTTP agent, it is not
    passed over silently for one on the mesh."""
    unknown = sorted(set(options) - _HTTP_ONLY)
    if unknown:
        raise TypeError(f"unexpected keyword argument{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(map(repr, unknown))} (the client's keywords: "
                        "dialect, timeout, headers, max_answer_bytes, verify, cert, "
                        "card_verifier, and the HTTP client's binding, httpx_client, "
                        "transport, resume and allow_insecure_interfaces, which have no "
                        "use here)")


#: the namespace of the task and context ids a mesh requester names for a new task
_NAMED = uuid.UUID("6f0c5a52-9d6e-4b1e-8f0e-3a1f6d2c9b7e")


def named_for(message_id: str, what: str = "task") -> str:
    """The id of the task (or context) a mesh requester names for a new task, made from
    its message's id: a retry of the message (same id) names the same task, and the
    agent answers it with that task instead of running it again."""
    return str(uuid.uuid5(_NAMED, f"{what}:{message_id}"))


def with_tls(url: MeshURL, verify: bool | str | ssl.SSLContext = True,
             cert: CertLike | None = None) -> MeshURL:
    """``url`` carrying the TLS context that ``verify`` and ``cert`` (``Client``'s
    options) make, for an ``mqtts://`` broker: every connection made with it uses it."""
    return dataclasses.replace(url, tls_context=ssl_context(verify, cert)) if url.tls else url


async def verified_card(verifier: CardVerifier, document: bytes, where: str,
                        timeout: float | None) -> AgentCard:
    """The card ``document`` (that came from ``where`` on the mesh), once one of its
    signatures verifies (``UnverifiedCard`` otherwise). The keys are the verifier's
    own, or its JWKS URL's, or those at the origin of the HTTP interface the card
    names: a mesh address has no origin to fetch keys from."""
    card = parse_card(document)
    origin = next((i.url for i in card.interfaces
                   if i.url.startswith(("https://", "http://"))), None)
    if origin is None and not verifier.finds_keys_itself:
        raise UnverifiedCard(
            f"the card of {where} came over the mesh and names no HTTP interface whose "
            "origin serves its keys: give the keys (CardVerifier(keys=), --key) or a "
            "JWKS URL (CardVerifier(jwks_url=), --jwks)")
    transport = HTTPXTransport(timeout=timeout)
    try:
        return await verifier.verify(FetchedCard(card, document, origin or where), transport)
    finally:
        await transport.aclose()


class MeshClientAPI:
    """The HTTP ``Client``'s API over a requester of the mesh (``_requester``)."""

    agent: str
    url: str
    timeout: float | None
    _requester: Any
    _card: AgentCard | None
    _card_document: bytes | None
    card_verifier: CardVerifier | None
    #: what ``list_tasks`` says (it has no counterpart on the mesh)
    _no_listing = "listing tasks has no counterpart on the mesh"
    #: the ``A2A-Version`` spoken, as ``Client.version``: ``"1.1"`` has task generations
    version: str = "1.0"

    def __init__(self, url: str, **options: Any) -> None:
        raise NotImplementedError  # each client reads its own URL

    # ------------------------------------------------------------- plumbing

    async def _take_card(self, document: bytes, broker: str) -> AgentCard:
        """The card ``document`` read on ``broker``, kept as this client's: held to
        ``max_answer_bytes``, and verified when a ``card_verifier`` was given (a card
        that does not verify is not used)."""
        limit = self._requester.max_answer_bytes
        if limit is not None and len(document) > limit:
            raise too_large(f"{self.agent} on {broker}", limit)
        if self.card_verifier is not None:
            card = await verified_card(self.card_verifier, document, self.url, self.timeout)
        else:
            card = parse_card(document)
        self._card, self._card_document = card, document
        return card

    @classmethod
    async def connect(cls, url: str, **kwargs: Any) -> Self:
        client = cls(url, **kwargs)
        try:
            await client.resolve()
        except BaseException:
            await client.aclose()
            raise
        return client

    async def resolve(self) -> None:
        """Connect to the broker (the HTTP client chooses its endpoint here)."""
        await self._requester.ensure()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._requester.aclose()

    @property
    def card(self) -> AgentCard | None:
        return self._card

    @property
    def card_document(self) -> bytes | None:
        return self._card_document

    # ------------------------------------------------------------ each its own

    async def call(self, call: Call) -> Any:
        raise NotImplementedError

    def _follow(self, call: SendMessage | SubscribeToTask) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError

    def _message(self, message_or_text: Message | str | Part | Sequence[Part], *,
                 task_id: str | None, context_id: str | None, data: Any,
                 files: Sequence[FilePart | str | os.PathLike[str]] | None) -> Message:
        return make_message(message_or_text, task_id=task_id, context_id=context_id,
                            data=data, files=files or ())

    # ---------------------------------------------------------------- calls

    async def send(
        self,
        message_or_text: Message | str | Part | Sequence[Part],
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        data: Any = None,
        files: Sequence[FilePart | str | os.PathLike[str]] | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        metadata: Metadata | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        push: PushConfig | None = None,
        if_generation_match: int | None = None,
    ) -> Task | Message:
        """As ``Client.send``; ``if_generation_match`` needs A2A 1.1 (``dialect="1.1"``)."""
        if push is not None:
            raise DialectMismatch("push notifications have no counterpart on the mesh")
        if if_generation_match is not None:
            check_generation("if_generation_match", if_generation_match, minimum=1)
            self._need_generations("if_generation_match")
        msg = self._message(message_or_text, task_id=task_id, context_id=context_id,
                            data=data, files=files)
        call = SendMessage(message=msg, metadata=metadata, config=SendConfig(
            accepted_output_modes=list(accepted_output_modes) if accepted_output_modes else None,
            history_length=history_length, blocking=blocking,
            if_generation_match=if_generation_match))
        result = await self.call(call)
        assert isinstance(result, (Task, Message))
        return result

    async def get_task(self, task_id: str, history_length: int | None = None, *,
                       after_generation: int | None = None,
                       wait: float | None = None) -> Task:
        """As ``Client.get_task``: ``after_generation`` (a long poll) needs A2A 1.1."""
        if not long_poll_asked(after_generation, wait):
            return await self._task_of(GetTask(id=task_id, history_length=history_length))
        assert after_generation is not None
        self._need_generations("after_generation")
        return await long_poll(self._task_of, task_id, history_length, after_generation, wait)

    async def _task_of(self, call: GetTask) -> Task:
        result = await self.call(call)
        assert isinstance(result, Task)
        return result

    def _need_generations(self, what: str) -> None:
        """``GenerationsNotSupported`` unless this client speaks A2A 1.1: an agent
        spoken to in 1.0 would refuse the field (nothing is sent)."""
        if self.version != GENERATIONS_VERSION:
            raise GenerationsNotSupported(
                f"{what} needs task generations (A2A 1.1): reach {self.url} with "
                f"dialect='1.1' (--dialect 1.1)")

    async def cancel(self, task_id: str, *, metadata: Metadata | None = None) -> Task:
        result = await self.call(CancelTask(id=task_id, metadata=metadata))
        assert isinstance(result, Task)
        return result

    async def list_tasks(self, *args: Any, **kwargs: Any) -> Any:
        raise DialectMismatch(self._no_listing)

    def session(self, *, context_id: str | None = None, task: Task | None = None) -> Session:
        """A conversation with this agent, as ``Client.session`` gives one."""
        return Session(self, context_id=context_id, task=task)

    async def stream(
        self,
        message_or_text: Message | str | Part | Sequence[Part],
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        data: Any = None,
        files: Sequence[FilePart | str | os.PathLike[str]] | None = None,
        metadata: Metadata | None = None,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        resume: Any = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Send a message and follow the task to the end of its turn."""
        msg = self._message(message_or_text, task_id=task_id, context_id=context_id,
                            data=data, files=files)
        call = SendMessage(message=msg, metadata=metadata, streaming=True, config=SendConfig(
            accepted_output_modes=list(accepted_output_modes) if accepted_output_modes else None,
            history_length=history_length))
        async for event in self._follow(call):
            yield event

    async def subscribe(self, task_id: str, *, last_event_id: int | None = None,
                        resume: Any = None) -> AsyncGenerator[StreamEvent, None]:
        """Follow a running task (its state now, then its updates)."""
        if last_event_id is not None:
            raise DialectMismatch("resuming from an event id has no counterpart on the mesh")
        async for event in self._follow(SubscribeToTask(id=task_id)):
            yield event
