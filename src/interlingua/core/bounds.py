"""Bounds of request fields that no other limit holds, and that are kept and sent on.

The body limit (``max_body_bytes``) bounds a request, ``Limits`` its parts, inline
files and nesting, core/ids.py its ids. Some fields are neither, and are stored as
they came and sent again: a push config's token is a header of every webhook POST
(one of megabytes makes each delivery fail at the receiver, and is kept and sent
for the task's life), its URL, schemes and credentials go out with each one too; a
message's referenced tasks and extensions and a send's accepted output modes are
kept in the task's history. Each is held here to a bound no real client comes near:

=============================================  ==========================
field                                          bound
=============================================  ==========================
a push config's ``token``                      4 KiB (UTF-8 bytes)
a push config's ``url``, an extension's URI    2 KiB (what browsers and most servers take)
``authentication.credentials``                 8 KiB (a header: servers take 8 KiB)
``authentication.schemes``                     64 schemes, each at most 1 KiB
``message.referenceTaskIds``                   256 ids (each held to core/ids.py)
``message.extensions``                         64 URIs
``configuration.acceptedOutputModes``          64 media types, each at most 1 KiB
=============================================  ==========================

Fixed, as the ids' bound is: checked once, by the front door, for every binding's
calls as they are read (server/dispatch.py), and refused as invalid params naming the
field as its caller's binding sent it. Only requests are held to them: what a store
already holds loads as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from .calls import Call, SendConfig, SendMessage, SetPushConfig
from .model import Message, PushConfig

__all__ = [
    "MAX_CREDENTIALS_BYTES", "MAX_EXTENSIONS", "MAX_NAME_BYTES", "MAX_OUTPUT_MODES",
    "MAX_PUSH_TOKEN_BYTES", "MAX_REFERENCE_TASK_IDS", "MAX_SCHEMES", "MAX_URL_BYTES",
    "Fault", "call_fault", "push_config_fault",
]

#: bytes (UTF-8) of a push config's token, sent as a header of every webhook POST
MAX_PUSH_TOKEN_BYTES = 4096
#: bytes of a push config's URL, and of an extension's URI
MAX_URL_BYTES = 2048
#: bytes of a push config's ``authentication.credentials`` (an ``Authorization`` header)
MAX_CREDENTIALS_BYTES = 8192
#: bytes of a short name: an authentication scheme, an accepted output mode
MAX_NAME_BYTES = 1024
#: schemes of a push config's authentication
MAX_SCHEMES = 64
#: tasks a message references
MAX_REFERENCE_TASK_IDS = 256
#: extensions a message names
MAX_EXTENSIONS = 64
#: output modes a send accepts
MAX_OUTPUT_MODES = 64

#: a field past its bound: its path in v0.3 JSON-RPC's params (the codec of the call's
#: dialect spells it as its callers do: ``Codec.member_path``), and what is wrong
Fault = tuple[list[str], str]


def _longer(value: str, limit: int) -> bool:
    # (an ASCII text's length is its size in bytes: nothing encoded for nearly every one)
    return len(value) > limit or (
        not value.isascii() and len(value.encode("utf-8", "surrogatepass")) > limit)


def _too_long(path: list[str], value: str | None, limit: int) -> Fault | None:
    if value is not None and _longer(value, limit):
        return path, f"is longer than {limit} bytes, the most this agent accepts"
    return None


def _list_fault(path: list[str], values: Sequence[str] | None, most: int,
                each: int) -> Fault | None:
    """A list of more than ``most`` entries, or one of them longer than ``each`` bytes."""
    if values is None:
        return None
    if len(values) > most:
        return path, f"has {len(values)} entries; this agent accepts at most {most}"
    for n, value in enumerate(values):
        if _longer(value, each):
            return [*path, f"[{n}]"], \
                f"is longer than {each} bytes, the most this agent accepts"
    return None


def push_config_fault(config: PushConfig, at: list[str]) -> Fault | None:
    """The first field of ``config`` (found at ``at`` in the params) past its bound."""
    fault = _too_long([*at, "url"], config.url, MAX_URL_BYTES) \
        or _too_long([*at, "token"], config.token, MAX_PUSH_TOKEN_BYTES)
    auth = config.authentication
    if fault is None and auth is not None:
        where = [*at, "authentication"]
        fault = _list_fault([*where, "schemes"], auth.schemes, MAX_SCHEMES, MAX_NAME_BYTES) \
            or _too_long([*where, "credentials"], auth.credentials, MAX_CREDENTIALS_BYTES)
    return fault


def call_fault(call: Call) -> Fault | None:
    """The first field of ``call`` past its bound (None: none is). The front door
    calls it only for a send that has one of these fields, or a push config's set."""
    if type(call) is SendMessage:
        return _send_fault(call.message, call.config)
    if type(call) is SetPushConfig:
        return push_config_fault(call.config, ["pushNotificationConfig"])
    return None


def _send_fault(message: Message, config: SendConfig) -> Fault | None:
    refs = message.reference_task_ids
    if refs is not None and len(refs) > MAX_REFERENCE_TASK_IDS:
        # each id is held to the rule of every id (core/ids.py) where a send begins
        return ["message", "referenceTaskIds"], \
            f"has {len(refs)} entries; this agent accepts at most {MAX_REFERENCE_TASK_IDS}"
    fault = _list_fault(["message", "extensions"], message.extensions, MAX_EXTENSIONS,
                        MAX_URL_BYTES) \
        or _list_fault(["configuration", "acceptedOutputModes"],
                       config.accepted_output_modes, MAX_OUTPUT_MODES, MAX_NAME_BYTES)
    if fault is None and config.push_config is not None:
        fault = push_config_fault(config.push_config, ["configuration", "pushNotificationConfig"])
    return fault
