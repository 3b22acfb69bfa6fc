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

A process that stops says so in the file it locks (``Slot.releasing``: by when it
lets go). One that starts meanwhile (a supervisor does not wait for the old
process to end) and finds its name held by a stopping process waits for it, up to
that time and ``RELEASE_MARGIN`` s more, and takes it: it resumes that session,
with the requests queued in it. Taking the next slot instead left them there
until the session expired. The note names the thread that wrote it: a name whose
stopping holder is the very thread that asks for it (one event loop stopping an
agent and starting it again) is not waited for, since that stop cannot go on while
the thread waits; the wait is a blocking one, and ``serve`` claims its name before
its event loop runs (one mesh agent a process).

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
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .topics import MeshURL

__all__ = ["RELEASE_MARGIN", "InstanceTaken", "Slot", "broker_addresses", "claim", "close_link",
           "hold_gateway_id", "host_name"]

log = logging.getLogger("interlingua.mesh")

#: slots tried before giving up (one per live instance of the agent on this host)
_SLOTS = 1000
#: seconds a starting process waits for a stopping holder of its name beyond the time
#: that holder said it would let go by
RELEASE_MARGIN = 5.0
#: how a stopping holder's lock file begins: then the time (Unix seconds) it lets go by
_RELEASING = "releasing by "
#: seconds between two tries of a name a stopping process holds
_POLL = 0.05


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

    def releasing(self, within: float) -> None:
        """Say that this process is stopping and lets go of the name within ``within``
        s: a process that starts meanwhile waits for it (and resumes its session)
        rather than take another name."""
        note = f"{_RELEASING}{time.time() + within:.3f} {_this_thread()}\n".encode()
        for fd, _ in self._held:
            with contextlib.suppress(OSError):  # opened read-only (another user's file)
                os.pwrite(fd, note, 0)

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
        path = _lock_dir() / (hashlib.sha256(key).hexdigest()[:32] + ".lock")
        locked = _lock(path) or _lock_once_released(path, name)
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
            with contextlib.suppress(OSError):  # a killed holder's note: not this one's
                os.ftruncate(fd, 0)
            return fd, path
        os.close(fd)  # removed by its last holder after it was opened: try the new one


def _this_thread() -> str:
    return f"{os.getpid()}:{threading.get_ident()}"


def _released_by(path: Path) -> float | None:
    """The time (Unix seconds) by which the process holding ``path`` said it lets go
    of it; None when it said nothing (a live holder), or when its holder is this
    thread (its stop waits for this thread, which would wait for it in vain)."""
    try:
        note = path.read_text()
    except (OSError, UnicodeError):
        return None
    if not note.startswith(_RELEASING):
        return None
    by, _, thread = note[len(_RELEASING):].strip().partition(" ")
    if thread == _this_thread():
        return None
    try:
        return float(by)
    except ValueError:
        return None


def _lock_once_released(path: Path, name: str) -> tuple[int, Path] | None:
    """``path`` locked once the stopping process that holds it lets go, waited for up
    to the time it said and ``RELEASE_MARGIN`` s more; None at once when its holder
    is live (said nothing), or when it did not let go by then."""
    by = _released_by(path)
    if by is None:
        return _lock(path)  # (let go between the two looks: its note went with it)
    log.info("instance %s is held by a process that is stopping: waiting up to %.0f s "
             "for it, to resume its session", name, max(0.0, by + RELEASE_MARGIN - time.time()))
    while time.time() < by + RELEASE_MARGIN:
        time.sleep(_POLL)
        locked = _lock(path)
        if locked is not None:
            return locked
        if _released_by(path) is None:
            # taken meanwhile by a live process (another one that started)
            return _lock(path)
    return None


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
