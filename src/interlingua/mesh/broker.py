"""A thin layer over aiomqtt: MQTT 5 connections, publishes with user
properties, and inbound messages as plain values.

User properties are string pairs on the wire: a dict or an int given here is
sent JSON-encoded (``callDepth: "1"``, ``a2aUserConfig: "{…}"``), as SAM does.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import math
import socket
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .topics import MeshURL

__all__ = ["MQTT_MISSING", "PUBLISH_WAIT", "Broker", "Inbound", "MeshUnavailable",
           "PacketTooLarge", "Will", "available", "encode_properties", "ping", "publish_wait"]

log = logging.getLogger("interlingua.mesh")

#: seconds a publish waits for the broker's acknowledgement, unless told otherwise
PUBLISH_WAIT = 10.0


def publish_wait(timeout: float | None) -> float:
    """How long a requester whose calls wait ``timeout`` s (None: for ever) waits for
    the broker to acknowledge a request: no longer than its calls do."""
    return PUBLISH_WAIT if timeout is None else min(timeout, PUBLISH_WAIT)


#: what a command that needs the mesh says when its extra is not installed
MQTT_MISSING = "the mesh needs the mqtt extra: pip install 'interlingua[mqtt]'"


def available() -> bool:
    """aiomqtt (the ``mqtt`` extra) can be imported: checked before anything is
    started, since it is imported only once a connection is made."""
    try:
        return importlib.util.find_spec("aiomqtt") is not None
    except ValueError:  # in sys.modules without a spec
        return True


class _ClosingTLS:
    """An SSL context as paho uses it, whose sockets are closed when their handshake
    fails. paho makes the TLS socket in a worker thread and drops it, unclosed, when
    the handshake raises: the descriptor stayed open until that thread let go of the
    failure, and was then reported as an unclosed socket."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context
        self.check_hostname = context.check_hostname

    def wrap_socket(self, sock: socket.socket, **options: Any) -> ssl.SSLSocket:
        wrapped = self._context.wrap_socket(sock, **options)
        if not options.get("do_handshake_on_connect", True):
            # the handshake paho makes next: made here, so that a failure closes the
            # socket (paho's own call then finds it done)
            try:
                wrapped.do_handshake()
            except BaseException:
                wrapped.close()
                raise
        return wrapped


class MeshUnavailable(ConnectionError):
    """The broker cannot be reached, or the connection to it was lost."""


class PacketTooLarge(ValueError):
    """A publish larger than the broker's Maximum Packet Size (from its CONNACK): not
    sent, since the broker would end the connection on receiving it."""

    def __init__(self, size: int, limit: int, broker: str) -> None:
        super().__init__(f"{size} bytes would pass the maximum packet size of {limit} bytes "
                         f"that the broker at {broker} takes")
        self.size = size
        self.limit = limit


@dataclass
class Inbound:
    """One message as it arrived: topic, payload and its MQTT 5 properties."""

    topic: str
    payload: bytes
    properties: dict[str, str] = field(default_factory=dict)
    response_topic: str | None = None
    correlation: bytes | None = None
    #: the packet id and QoS it came with (what ``Broker.ack`` acknowledges)
    mid: int = 0
    qos: int = 0


@dataclass(frozen=True)
class Will:
    """A last will: published by the broker when a connection ends without a DISCONNECT."""

    topic: str
    payload: bytes
    properties: Mapping[str, str] = field(default_factory=dict)
    qos: int = 1
    retain: bool = False


def encode_properties(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """User properties as string pairs: strings as they are, anything else as JSON."""
    out: list[tuple[str, str]] = []
    for key, value in values.items():
        if value is None:
            continue
        out.append((key, value if isinstance(value, str) else msgspec.json.encode(value).decode()))
    return out


class Broker:
    """One MQTT 5 connection. ``session_expiry`` > 0 with ``clean_start=False``
    keeps the session (subscriptions and queued QoS 1 messages) on the broker
    while the client is away, for that many seconds. With ``manual_ack`` a QoS 1
    message is acknowledged only by ``ack``: one never acknowledged is sent again
    when the session is resumed (what a stopping instance leaves for its restart)."""

    def __init__(self, url: MeshURL, client_id: str, *, clean_start: bool = True,
                 session_expiry: int = 0, keepalive: int = 30,
                 manual_ack: bool = False, will: Will | None = None) -> None:
        self.url = url
        self.client_id = client_id
        self.clean_start = clean_start
        self.session_expiry = session_expiry
        self.keepalive = keepalive
        self.manual_ack = manual_ack
        #: what the broker publishes when the connection ends without a DISCONNECT
        self.will = will
        #: the aiomqtt client of the current (or last) connection
        self._aio: Any = None
        #: the same, while connected
        self._client: Any = None
        #: the largest packet the broker takes, as its CONNACK said (None: no bound said)
        self.max_packet: int | None = None
        #: the bounds of the publishes waiting for their acknowledgement: cut short
        #: when the connection ends (its acknowledgement will never come)
        self._acks: set[asyncio.Timeout] = set()

    def _make(self) -> Any:
        import aiomqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        if self.session_expiry > 0:
            props.SessionExpiryInterval = self.session_expiry
        will = None
        if self.will is not None:
            will_props = None
            if self.will.properties:
                will_props = Properties(PacketTypes.WILLMESSAGE)  # type: ignore[no-untyped-call]
                will_props.UserProperty = encode_properties(self.will.properties)
            will = aiomqtt.Will(self.will.topic, self.will.payload, qos=self.will.qos,
                                retain=self.will.retain, properties=will_props)
        tls = None
        if self.url.tls:
            # (the URL's context: the TLS options its maker was given; else the system's CAs)
            tls = self.url.tls_context or ssl.create_default_context()
        client = aiomqtt.Client(
            self.url.host, self.url.port,
            username=self.url.username, password=self.url.password,
            identifier=self.client_id,
            protocol=aiomqtt.ProtocolVersion.V5,
            clean_start=self.clean_start,
            properties=props,
            keepalive=self.keepalive,
            tls_context=_ClosingTLS(tls) if tls is not None else None,  # type: ignore[arg-type]
            # a context that checks nothing (verify=False): paho would still match the
            # host name against the certificate it did not ask for, and fail
            # (None, not False, without TLS: aiomqtt refuses any value there)
            tls_insecure=True if tls is not None and tls.verify_mode == ssl.CERT_NONE else None,
            will=will,
            timeout=10,
            # small messages, one after another: no waiting for more to fill a segment
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )
        # updates of a stream are published without waiting for each one's ack
        client.pending_calls_threshold = 1000
        if self.manual_ack:
            client._client.manual_ack_set(True)
        self._hear_connack(client._client)
        return client

    def _hear_connack(self, paho: Any) -> None:
        """Keep the Maximum Packet Size of each CONNACK (aiomqtt drops its properties):
        a larger publish would make the broker end the connection."""
        on_connect = paho.on_connect

        def connected(client: Any, userdata: Any, flags: Any, reason: Any,
                      properties: Any = None) -> None:
            self.max_packet = getattr(properties, "MaximumPacketSize", None)
            on_connect(client, userdata, flags, reason, properties)

        paho.on_connect = connected

    async def connect(self) -> None:
        """Connect (a new aiomqtt client each time: after a lost connection the
        old one is closed and dropped)."""
        import aiomqtt

        self._aio = self._make()
        try:
            await self._aio.__aenter__()
        except aiomqtt.MqttError as exc:
            self._aio = None  # never connected: nothing to close
            raise MeshUnavailable(f"cannot reach the broker at {self.url.broker}: {exc}") from None
        self._client = self._aio
        # (aiomqtt's own future, done when this connection ends, lost or closed)
        self._client._disconnected.add_done_callback(self._cut_acks)

    def _cut_acks(self, _: object) -> None:
        now = asyncio.get_running_loop().time()
        for bound in self._acks:
            bound.reschedule(now)

    async def close(self) -> None:
        self._client = None
        client, self._aio = self._aio, None
        if client is not None:
            try:
                await client.__aexit__(None, None, None)
            except Exception as exc:  # already gone: nothing to close
                log.debug("closing the broker connection: %s", exc)

    async def __aenter__(self) -> Broker:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._client is not None

    def _live(self) -> Any:
        if self._client is None:
            raise MeshUnavailable("not connected to the broker")
        return self._client

    async def subscribe(self, *topics: str, qos: int = 1) -> None:
        import aiomqtt

        client = self._live()
        try:
            for topic in topics:
                await client.subscribe(topic, qos=qos)
        except aiomqtt.MqttError as exc:
            raise MeshUnavailable(f"subscribing at {self.url.broker}: {exc}") from None

    async def unsubscribe(self, *topics: str) -> None:
        import aiomqtt

        client = self._live()
        try:
            for topic in topics:
                await client.unsubscribe(topic)
        except aiomqtt.MqttError as exc:
            raise MeshUnavailable(f"unsubscribing at {self.url.broker}: {exc}") from None

    def ack(self, msg: Inbound) -> None:
        """Acknowledge ``msg`` (with ``manual_ack``; a no-op for QoS 0, or once the
        connection it came on is gone: the broker sends it again)."""
        if self.manual_ack and msg.qos > 0 and self._client is not None:
            self._client._client.ack(msg.mid, msg.qos)

    def fits(self, topic: str, payload: bytes, properties: Mapping[str, Any] | None = None,
             *, response_topic: str | None = None, correlation: bytes | None = None,
             qos: int = 1) -> None:
        """``PacketTooLarge`` when this publish would pass the broker's Maximum Packet
        Size (nothing is sent: a caller says so in a smaller answer)."""
        self._check(topic, payload, _properties(properties, response_topic, correlation), qos)

    def _check(self, topic: str, payload: bytes, props: Any, qos: int) -> None:
        limit = self.max_packet
        if limit is not None:
            size = _publish_size(topic, payload, props, qos)
            if size > limit:
                raise PacketTooLarge(size, limit, self.url.broker)

    async def publish(self, topic: str, payload: bytes, properties: Mapping[str, Any] | None = None,
                      *, response_topic: str | None = None, correlation: bytes | None = None,
                      qos: int = 1, retain: bool = False, expiry: int | None = None,
                      timeout: float = PUBLISH_WAIT) -> None:
        """Publish; ``PacketTooLarge`` (nothing sent) past the broker's Maximum Packet Size.
        ``expiry``: the MQTT 5 Message Expiry Interval, seconds after which the broker
        delivers the message to no one (one queued for a session that is away is dropped).
        ``MeshUnavailable`` when the broker has not acknowledged it within ``timeout`` s,
        or at once when the connection ends meanwhile."""
        import aiomqtt

        client = self._live()
        props = _properties(properties, response_topic, correlation, expiry)
        self._check(topic, payload, props, qos)
        ended = client._disconnected
        try:
            if ended.done():
                raise aiomqtt.MqttError("the connection has ended")
            async with asyncio.timeout(timeout) as bound:
                self._acks.add(bound)
                try:
                    # (bounded here: aiomqtt's own bound cannot be cut short)
                    await client.publish(topic, payload, qos=qos, properties=props,
                                         retain=retain, timeout=math.inf)
                finally:
                    self._acks.discard(bound)
        except TimeoutError:
            if ended.done():
                raise MeshUnavailable(f"the connection to the broker at {self.url.broker} "
                                      "was lost") from None
            raise MeshUnavailable(f"the broker at {self.url.broker} did not acknowledge a "
                                  f"publish within {timeout:g} s") from None
        except aiomqtt.MqttError as exc:
            raise MeshUnavailable(f"publishing at {self.url.broker}: {exc}") from None

    async def messages(self) -> AsyncIterator[Inbound]:
        """Every message of the subscriptions, until the connection ends
        (``MeshUnavailable`` when it is lost)."""
        import aiomqtt

        client = self._live()
        try:
            async for message in client.messages:
                yield _inbound(message)
        except aiomqtt.MqttError as exc:
            # nothing more is published on a connection known to be gone
            self._client = None
            raise MeshUnavailable(f"the connection to {self.url.broker} was lost: {exc}") from None


def _properties(properties: Mapping[str, Any] | None, response_topic: str | None,
                correlation: bytes | None, expiry: int | None = None) -> Any:
    """The PUBLISH properties of a message (None: it has none)."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    if not (properties or response_topic or correlation is not None or expiry is not None):
        return None
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    if properties:
        pairs = encode_properties(properties)
        if pairs:
            props.UserProperty = pairs
    if response_topic:
        props.ResponseTopic = response_topic
    if correlation is not None:
        props.CorrelationData = correlation
    if expiry is not None:
        props.MessageExpiryInterval = expiry
    return props


def _varint_size(n: int) -> int:
    size = 1
    while n >= 128:
        n //= 128
        size += 1
    return size


def _publish_size(topic: str, payload: bytes, props: Any, qos: int) -> int:
    """Bytes of the MQTT 5 PUBLISH packet paho sends for these (what the broker's
    Maximum Packet Size bounds): fixed header, topic, packet id, properties, payload."""
    packed = 1 if props is None else len(props.pack())
    rest = 2 + len(topic.encode("utf-8", "surrogatepass")) + (2 if qos > 0 else 0) + packed + len(payload)
    return 1 + _varint_size(rest) + rest


async def ping(url: MeshURL) -> None:
    """Connect and disconnect once: ``MeshUnavailable`` when the broker cannot be had."""
    import secrets

    async with Broker(url, "interlingua-ping-" + secrets.token_hex(4)):
        pass


def _inbound(message: Any) -> Inbound:
    payload = message.payload
    if isinstance(payload, str):
        payload = payload.encode()
    elif payload is None:
        payload = b""
    elif not isinstance(payload, bytes):
        payload = bytes(payload) if isinstance(payload, bytearray) else str(payload).encode()
    props: dict[str, str] = {}
    response_topic = correlation = None
    p = message.properties
    if p is not None:
        for key, value in getattr(p, "UserProperty", None) or ():
            props[key] = value
        response_topic = getattr(p, "ResponseTopic", None) or None
        correlation = getattr(p, "CorrelationData", None)
    return Inbound(message.topic.value, payload, props, response_topic, correlation,
                   mid=message.mid, qos=message.qos)
