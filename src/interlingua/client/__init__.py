"""The client side: read an agent's card and talk to it in its dialect."""

from __future__ import annotations

from .assembler import ArtifactAssembler
from .card import Endpoint, FetchedCard, fetch_card, parse_card
from .client import DIALECTS, Client, file_from_path, make_message
from .errors import (
    AgentTimeout,
    AgentUnreachable,
    BadResponse,
    CardNotFound,
    CardNotOffered,
    ClientError,
    DialectMismatch,
    InsecureInterface,
    InvalidCard,
    NotConnected,
    TaskNotSettled,
)
from .generations import GenerationsNotSupported, TaskGenerationMismatch
from .push_receiver import PushEvent, Receiver, register_receiver
from .security import CardVerifier, UnverifiedCard, tls_context
from .session import Run, Session
from .stream import ResumePolicy, StreamEvent, StreamInterrupted, StreamTimeout
from .transport import HTTPReply, HTTPXTransport, StreamReply, Transport

__all__ = [
    "DIALECTS",
    "AgentTimeout",
    "AgentUnreachable",
    "ArtifactAssembler",
    "BadResponse",
    "CardNotFound",
    "CardNotOffered",
    "CardVerifier",
    "Client",
    "ClientError",
    "DialectMismatch",
    "Endpoint",
    "FetchedCard",
    "GenerationsNotSupported",
    "HTTPReply",
    "HTTPXTransport",
    "InsecureInterface",
    "InvalidCard",
    "NotConnected",
    "PushEvent",
    "Receiver",
    "ResumePolicy",
    "Run",
    "Session",
    "StreamEvent",
    "StreamInterrupted",
    "StreamReply",
    "StreamTimeout",
    "TaskGenerationMismatch",
    "TaskNotSettled",
    "Transport",
    "UnverifiedCard",
    "fetch_card",
    "file_from_path",
    "make_message",
    "parse_card",
    "register_receiver",
    "tls_context",
]
