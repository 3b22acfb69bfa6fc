"""The name of an agent instance on the mesh, held for as long as the process runs.

An instance's MQTT client id is ``{ns}-{agent}-{instance}`` and its session is
persistent: a restart under the same name resumes the session the broker kept,
with the requests queued for it meanwhile. So the default name must be the same
on every start, and two live instances must never share one: two connections
with one client id take the session from each other in turn.

The default is ``{host}-{slot}``: the lowest slot (0, 1, …) that no live process
of this host holds for the same broker, namespace and agent. A slot is held by an
exclusive ``flock`` on a file in the temporary directory, which the kernel
releases when the process ends, however it ends (a ``kill -9`` too). An instance
alone on its host is always ``{host}-0``; of two, a restarted one takes the slot
the other does not hold. A name given with ``--mesh-instance`` is held the same
way, and refused while a live process of this host holds it.

"The same broker" is the same address and port, however the URL spells its host
(``127.0.0.1``, ``localhost``): a slot is held once for each address the host name
resolves to, so that two spellings that reach one broker meet on at least one.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import ipaddress
import os
import socket
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .topics import MeshURL

__all__ = ["InstanceTaken", "Slot", "broker_addresses", "claim", "close_link", "hold_gateway_id",
           "host_name"]

#: slots tried before giving up (one per live instance of the agent on this host)
_SLOTS = 1000


class InstanceTaken(ValueError):
    """Another live process of this host holds the instance name."""


def host_name() -> str:
    """This host's name as part of a topic level."""
    host = "".join(c if c.isalnum() or c in "-_." else "-" for c in os.uname().nodename)
    return host[:48] or "host"


def _lock_dir() -> Path:
    path = Path(tempfile.gettempdir()) / "interlingua-mesh"
    path.mkdir(mode=0o1777, exist_ok=True)
    with contextlib.suppress(OSError):  # another user's directory: theirs to set
        path.chmod(0o1777)  # every user of the host shares the slots
    return path


class Slot:
    """An instance name and the locks that hold it, one per address of the broker
    (``release`` on a clean stop)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._held: list[tuple[int, Path]] = []

    def add(self, fd: int, path: Path) -> None:
        self._held.append((fd, path))

    def release(self) -> None:
        held, self._held = self._held, []
        for fd, path in held:
            # removed while still held (a process that takes the name next checks
            # that the file it locked is still the one at the path), then unlocked
            with contextlib.suppress(OSError):
                path.unlink()
            os.close(fd)


def broker_addresses(broker: MeshURL) -> list[str]:
    """The addresses the broker's host name resolves to, each written one way; the
    lower-cased name when it does not resolve (every spelling of one broker then
    shares an address: ``localhost`` is ``127.0.0.1``)."""
    host = broker.host.lower()
    try:
        found = socket.getaddrinfo(host, broker.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return [host]
    addresses: set[str] = set()
    for *_, sockaddr in found:
        try:
            ip = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
        except ValueError:
            continue
        mapped = getattr(ip, "ipv4_mapped", None)
        addresses.add(str(mapped or ip))
    return sorted(addresses) or [host]


def _hold(addresses: list[str], port: int, namespace: str, agent: str,
          name: str) -> Slot | None:
    """``name`` held for every address of the broker (None: a live process of this host
    holds it for one of them)."""
    slot = Slot(name)
    for address in addresses:
        key = f"{address}:{port}|{namespace}|{agent}|{name}".encode()
        locked = _lock(_lock_dir() / (hashlib.sha256(key).hexdigest()[:32] + ".lock"))
        if locked is None:
            slot.release()
            return None
        slot.add(*locked)
    return slot


def _lock(path: Path) -> tuple[int, Path] | None:
    """The file at ``path`` locked (its descriptor), or None: a live process holds it."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:
            fd = os.open(path, os.O_RDONLY)  # made by another user: a read is enough to lock
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(fd).st_ino:
            return fd, path
        os.close(fd)  # removed by its last holder after it was opened: try the new one


def claim(broker: MeshURL, namespace: str, agent: str, instance: str | None) -> Slot:
    """Hold ``instance`` (or, if None, this host's lowest free ``{host}-{slot}``) for this
    process; ``InstanceTaken`` when a live process of this host holds the name given."""
    addresses = broker_addresses(broker)
    if instance is not None:
        slot = _hold(addresses, broker.port, namespace, agent, instance)
        if slot is None:
            raise InstanceTaken(
                f"instance {instance!r} of {agent!r} (namespace {namespace}) is already running "
                "on this host: give each instance a --mesh-instance of its own, or none")
        return slot
    host = host_name()
    for n in range(_SLOTS):
        slot = _hold(addresses, broker.port, namespace, agent, f"{host}-{n}")
        if slot is not None:
            return slot
    raise InstanceTaken(f"{_SLOTS} instances of {agent!r} already run on this host")


def hold_gateway_id(broker: MeshURL, space: str, gateway_id: str, client_id: str) -> Slot:
    """Hold the id of a gateway to the agents of ``space`` (a namespace, or an
    A2A-over-MQTT ``$a2a/{org}/{unit}``) for this process, as an instance name is
    held; ``InstanceTaken`` when a live process of this host holds it. Held as the
    agent whose client id is the gateway's (``gateway``, instance ``{id}``: SAM's
    ``{ns}-gateway-{id}``; ``gateway-{id}``, the profile's one instance ``a2a``)."""
    agent, instance = ("gateway-" + gateway_id, "a2a") if space.startswith("$a2a/") \
        else ("gateway", gateway_id)
    try:
        return claim(broker, space, agent, instance)
    except InstanceTaken:
        raise InstanceTaken(
            f"gateway id {gateway_id!r} is already used by a gateway running on this host "
            f"(MQTT client id {client_id} on {broker.broker}): two connections with one "
            "client id take the session from each other; give each gateway a --gateway-id "
            "of its own, or none") from None


async def close_link(background: set[asyncio.Task[Any]], *closes: Callable[[], Awaitable[None]],
                     slot: Slot | None) -> None:
    """A gateway's link stopped: its background work canceled, ``closes`` awaited in
    order, and its gateway id's ``slot`` released whatever they raised (both layouts)."""
    for task in list(background):
        task.cancel()
    try:
        for close in closes:
            await close()
    finally:
        if slot is not None:
            slot.release()
