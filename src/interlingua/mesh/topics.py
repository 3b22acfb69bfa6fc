"""The topic layout of an agent mesh, and ``mqtt://`` URLs. Pure: no I/O.

Topics follow the Solace Agent Mesh layout (seed 002, DIALECTS.md §a.5)::

    {ns}/a2a/v1/agent/request/{agent}              requests to an agent
    {ns}/a2a/v1/agent/control/{agent}              cancels handed between its instances
    {ns}/a2a/v1/gateway/response/{gw}/{task}       a gateway's final answers
    {ns}/a2a/v1/gateway/status/{gw}/{task}         a gateway's status updates
    {ns}/a2a/v1/client/response/{client}[/{task}]  a client's final answers
    {ns}/a2a/v1/client/status/{client}/{task}      a client's status updates
    {ns}/a2a/v1/discovery/agentcards               agent cards, every few seconds
    {ns}/a2a/v1/discovery/withdrawals              instances gone on a clean shutdown

``control`` and ``withdrawals`` are ours: SAM has no counterpart (one agent instance there owns a
request topic queue, so a cancel always reaches the instance running the task).
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from ..core.names import safe_name

__all__ = [
    "DEFAULT_PORT",
    "MeshURL",
    "Topics",
    "check_name",
    "mesh_name",
    "parse_mesh_url",
    "topic_problem",
]

DEFAULT_PORT = 1883
DEFAULT_TLS_PORT = 8883

# A topic level may not hold the separator or a wildcard; names are kept to a
# safe set so that they are also fine in client ids and URLs.
_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")


def mesh_name(name: str) -> str:
    """An agent's name as one topic level: characters a level cannot hold become ``_``
    (``core.names.safe_name``, the rule of the gateway's paths too)."""
    return safe_name(name)


def check_name(kind: str, value: str) -> str:
    """``value`` when it can be one topic level; ``ValueError`` saying why not."""
    if not _NAME.match(value):
        raise ValueError(
            f"{kind} {value!r} cannot be a topic level: use 1-128 letters, digits, "
            "'_', '-' or '.'"
        )
    return value


def topic_problem(topic: str) -> str | None:
    """Why ``topic`` cannot be published to (None: it can). A wildcard in a reply
    topic a request names would otherwise fail only when the answer is published."""
    if not topic:
        return "is empty"
    if "+" in topic or "#" in topic:
        return "holds an MQTT wildcard (+ or #)"
    if "\x00" in topic:
        return "holds a NUL character"
    if len(topic.encode("utf-8", "surrogatepass")) > 65535:
        return "is longer than 65535 bytes"
    return None


def check_task_id(task_id: str) -> None:
    """``InvalidRequest`` for the id a send names its new task by (SAM's request id,
    v0.1's ``params.id``) when it cannot be a topic level: it names the task's topics."""
    why = topic_problem(task_id)
    if why is not None:
        from ..core.errors import InvalidRequest

        raise InvalidRequest(f"Invalid Request: the id of a send names its task (and "
                             f"topics): {task_id!r} {why}")


@dataclass(frozen=True)
class Topics:
    """Every topic of one namespace."""

    namespace: str

    @property
    def base(self) -> str:
        return f"{self.namespace}/a2a/v1"

    def request(self, agent: str) -> str:
        return f"{self.base}/agent/request/{agent}"

    def shared_request(self, agent: str, group: str) -> str:
        """The request topic as a shared subscription: each request goes to one member."""
        return f"$share/{group}/{self.request(agent)}"

    def control(self, agent: str) -> str:
        return f"{self.base}/agent/control/{agent}"

    def discovery(self) -> str:
        return f"{self.base}/discovery/agentcards"

    def withdrawals(self) -> str:
        """Where an instance says, on a clean shutdown, that it is gone (ours)."""
        return f"{self.base}/discovery/withdrawals"

    def discovery_filter(self) -> str:
        return f"{self.base}/discovery/#"

    def gateway_response(self, gateway: str, task: str | None = None) -> str:
        return f"{self.base}/gateway/response/{gateway}" + (f"/{task}" if task else "")

    def gateway_status(self, gateway: str, task: str | None = None) -> str:
        return f"{self.base}/gateway/status/{gateway}" + (f"/{task}" if task else "")

    def client_response(self, client: str, task: str | None = None) -> str:
        return f"{self.base}/client/response/{client}" + (f"/{task}" if task else "")

    def client_status(self, client: str, task: str | None = None) -> str:
        return f"{self.base}/client/status/{client}" + (f"/{task}" if task else "")


@dataclass(frozen=True)
class MeshURL:
    """Where a broker is (``mqtt://`` or ``mqtts://``), and optionally a namespace
    and agent named in the path: ``mqtt://host:1883/NS/agent``."""

    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = None
    namespace: str | None = None
    agent: str | None = None
    #: the A2A-over-MQTT profile's org and unit (a path of three levels, mesh/emqx/)
    org: str | None = None
    unit: str | None = None
    #: how an ``mqtts://`` connection is made (None: the system's CAs); every
    #: connection to this broker that is given this URL uses it
    tls_context: ssl.SSLContext | None = field(default=None, compare=False, repr=False)

    @property
    def profile(self) -> str:
        """The topic layout the path names: ``emqx`` for ``/ORG/UNIT/AGENT``, else ``sam``."""
        return "emqx" if self.org is not None else "sam"

    @property
    def broker(self) -> str:
        """The URL of the broker alone (no credentials, no path)."""
        scheme = "mqtts" if self.tls else "mqtt"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"


def parse_mesh_url(url: str) -> MeshURL:
    """``mqtt://[user:pass@]host[:port][/namespace[/agent]]`` (the SAM layout), or
    ``…/org/unit/agent``, three levels (the A2A-over-MQTT profile); ``ValueError`` if not."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # ("Invalid IPv6 URL": a bracket left open)
        raise ValueError(f"{url!r} is not a URL: {exc}") from None
    if parts.scheme not in ("mqtt", "mqtts"):
        raise ValueError(f"{url!r} is not an mqtt:// or mqtts:// URL")
    if not parts.hostname:
        raise ValueError(f"{url!r} names no broker host")
    tls = parts.scheme == "mqtts"
    try:
        port = parts.port or (DEFAULT_TLS_PORT if tls else DEFAULT_PORT)
    except ValueError:
        raise ValueError(f"{url!r} has no valid port (0-65535)") from None
    levels = [unquote(p) for p in parts.path.split("/") if p]
    if len(levels) > 3:
        raise ValueError(f"{url!r}: the path is /namespace or /namespace/agent (SAM layout), "
                         "or /org/unit/agent (A2A over MQTT), no more")
    org: str | None = None
    unit: str | None = None
    namespace: str | None
    agent: str | None
    if len(levels) == 3:
        org, unit = check_name("org", levels[0]), check_name("unit", levels[1])
        namespace, agent = None, check_name("agent name", levels[2])
    else:
        namespace = check_name("namespace", levels[0]) if levels else None
        agent = check_name("agent name", levels[1]) if len(levels) > 1 else None
    return MeshURL(
        host=parts.hostname,
        port=port,
        tls=tls,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        namespace=namespace,
        agent=agent,
        org=org,
        unit=unit,
    )
