"""One browser's inspector session: the agent it talks to, and all it saw.

A session holds the ``Client`` (with the credentials, which stay here), the
frames that client exchanged, the events of the tasks it followed and the
push notifications its webhook took, as one numbered log. The page reads
the log through an SSE endpoint whose event ids are the log's numbers, so
a reconnecting page gets what it missed. Work that outlives a request (a
stream, a subscription) runs as a background task of the session, and ends
in the log as ``turn-end`` or ``error``: never as a traceback.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import msgspec

from ..client import Client, ClientError, StreamEvent
from ..client.card import FetchedCard, card_urls, dialect_of_version, fetch_card, interface_url
from ..client.errors import InvalidCard
from ..client.push_receiver import PushEvent, Receiver
from ..client.security import JWKS_PATH, CardVerifier, UnverifiedCard
from ..client.transport import HTTPXTransport, Transport
from ..core.calls import SetPushConfig
from ..core.dialects.card_checks import check_card
from ..core.errors import A2AError
from ..core.model import AgentCard, DataPart, FilePart, Part, PushConfig, TextPart
from ..core.urls import http_url, masked_url, password_unescaped
from .credentials import CredentialError, headers_for
from .describe import item_json, to_json
from .recorder import MASK, Frame, RecordingTransport

__all__ = ["PUSH_SIGNING_URI", "InspectorError", "Session", "error_text"]

log = logging.getLogger("interlingua.inspector")

PUSH_SIGNING_URI = "https://interlingua.dev/ext/push-signing/v1"
#: log entries kept per session; a page that fell further behind starts again
_KEEP = 2000
#: webhook receivers kept per session, one for each agent connected to lately
_RECEIVERS = 16
_decode = msgspec.json.Decoder().decode


class InspectorError(Exception):
    """A request the inspector cannot carry out; the message is for the page."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _agent_url(url: str) -> None:
    """InspectorError unless ``url`` is an http(s) URL without a user or password: httpx
    would call the agent with those (Basic) in place of the credentials chosen in the form,
    and the URL is shown in the page, its frames and their curl lines."""
    try:
        netloc = urlsplit(url).netloc
    except ValueError:  # (said by http_url below)
        netloc = ""
    if "@" in netloc or password_unescaped(netloc, url):
        raise InspectorError(f"{masked_url(url)!r} carries credentials; give them in the "
                             "form's Credentials instead")
    try:
        http_url(url)
    except ValueError as exc:
        raise InspectorError(f"{url!r} {exc}") from None


def error_text(exc: BaseException) -> str:
    """One line that says what went wrong, for people."""
    if isinstance(exc, A2AError):
        return f"{exc.message} ({type(exc).__name__}, A2A error {exc.code})"
    if isinstance(exc, ClientError):
        return f"{exc} ({type(exc).__name__})"
    return str(exc) or type(exc).__name__


def _raw_text(raw: bytes | None) -> str | None:
    return raw.decode("utf-8", "replace") if raw else None


def _unread(url: str, text: str, problem: str) -> dict[str, Any]:
    """A document that could not be read at all, as the page shows a card's checks."""
    return {"url": url, "document": text,
            "checks": [{"version": "?", "ok": False, "problems": [problem]}]}


class Session:
    """What one browser is doing with one agent."""

    def __init__(self, sid: str, transport_factory: Callable[[], Transport] | None = None
                 ) -> None:
        self.id = sid
        #: the webhook's own name and token: the session id never leaves the cookie
        self.push_id = secrets.token_urlsafe(16)
        self.push_token = secrets.token_urlsafe(24)
        self.touched = time.monotonic()
        self._transport_factory = transport_factory or (lambda: HTTPXTransport(timeout=60.0))
        self._log: list[dict[str, Any]] = []
        self._first = 1  # the number of the oldest entry kept
        self._changed = asyncio.Event()
        self.client: Client | None = None
        #: the receiver of the agent connected to
        self.receiver: Receiver | None = None
        #: every agent's receiver, by the token its notifications carry: the tasks of an
        #: agent connected to before still notify, checked against that agent's JWKS
        self._receivers: OrderedDict[str, Receiver] = OrderedDict()
        self.info: dict[str, Any] | None = None
        self._work: set[asyncio.Task[None]] = set()
        self._turns = 0

    # ------------------------------------------------------------------ the log

    def emit(self, kind: str, **data: Any) -> dict[str, Any]:
        entry = {"n": self._first + len(self._log), "kind": kind, "at": time.time(), **data}
        self._log.append(entry)
        if len(self._log) > _KEEP:
            drop = len(self._log) - _KEEP
            del self._log[:drop]
            self._first += drop
        self._changed.set()
        self._changed = asyncio.Event()
        return entry

    def since(self, after: int) -> list[dict[str, Any]]:
        if after >= self._first + len(self._log):
            # a number this log has not reached: a page of a session the server had before
            # it restarted, which must be shown this one from its start
            return self._log
        start = max(0, after + 1 - self._first)
        return self._log[start:]

    async def follow(self, after: int, heartbeat: float = 15.0
                     ) -> AsyncIterator[dict[str, Any] | None]:
        """Log entries after ``after`` as they come; None for a quiet ``heartbeat``."""
        while True:
            changed = self._changed
            entries = self.since(after)
            for entry in entries:
                yield entry
                after = entry["n"]
            if entries:
                continue
            try:
                async with asyncio.timeout(heartbeat):
                    await changed.wait()
            except TimeoutError:
                yield None

    def _frame(self, frame: Frame) -> None:
        self.emit("frame", frame=frame.to_json())

    # ------------------------------------------------------------------ connect

    async def connect(self, url: str, *, dialect: str | None, binding: str | None,
                      auth: Any, webhook: str) -> dict[str, Any]:
        """Read the agent's card (unless a dialect is forced) and choose how to talk to it."""
        _agent_url(url)
        try:
            headers, secret = headers_for(auth)
        except CredentialError as exc:
            raise InspectorError(str(exc)) from None
        transport = RecordingTransport(self._transport_factory(), self._frame, secret)
        try:
            client = Client(url, dialect=dialect or None, binding=binding or None,
                            headers=headers, transport=transport)
        except ValueError as exc:
            await transport.aclose()
            raise InspectorError(str(exc)) from None
        # only once the new client is made: a connect refused keeps the one that works
        await self.close_client()
        self.client = client
        kind = auth.get("kind", "none") if isinstance(auth, dict) else "none"
        info: dict[str, Any] = {"url": url, "dialect": dialect or None, "binding": binding or None,
                                "credentials": kind, "webhook": webhook}
        fetched: FetchedCard | None = None
        try:
            if dialect:
                # a forced dialect needs no card; show one when there is one
                try:
                    fetched = await fetch_card(transport, url, headers)
                except ClientError as exc:
                    info["cardNote"] = f"no card read: {error_text(exc)}"
            else:
                card = await client.get_card()
                assert client.card_document is not None and client.card_url is not None
                fetched = FetchedCard(card=card, document=client.card_document,
                                      url=client.card_url)
        except InvalidCard as exc:
            info["error"] = error_text(exc)
            info["card"] = await self._unreadable_card(transport, url, headers)
            self.info = info
            return info
        except ClientError as exc:
            info["error"] = error_text(exc)
            self.info = info
            return info
        if fetched is not None:
            info["card"] = await self._card_info(fetched, transport, client)
        try:
            endpoint = await client.resolve()
            info["endpoint"] = {"url": endpoint.url, "dialect": endpoint.dialect,
                                "binding": endpoint.binding}
        except ClientError as exc:
            info["error"] = error_text(exc)
        await self._new_receiver(fetched.card if fetched else None,
                                 fetched.url if fetched else url)
        self.info = info
        self.emit("connected", info=info)
        return info

    async def _unreadable_card(self, transport: Transport, url: str,
                               headers: dict[str, str]) -> dict[str, Any] | None:
        """The document that failed to read as a card, with what is wrong with it."""
        for candidate in card_urls(url):
            try:
                reply = await transport.get(candidate, {"Accept": "application/json", **headers})
            except ClientError:
                return None
            if reply.ok:
                text = reply.content.decode("utf-8", "replace")
                try:
                    doc = _decode(reply.content)
                except msgspec.DecodeError:
                    return _unread(candidate, text, "the card is not JSON")
                except RecursionError:  # (as the client said: this is no card either)
                    return _unread(candidate, text, "the card is JSON nested too deeply to read")
                return {"url": candidate, "document": text, "checks": check_card(doc)}
        return None

    async def _card_info(self, fetched: FetchedCard, transport: Transport,
                         client: Client) -> dict[str, Any]:
        card = fetched.card
        try:
            doc = _decode(fetched.document)
        except msgspec.DecodeError:
            doc = None
        spoken = {(ep.url, ep.binding.upper(), ep.dialect) for ep in client.endpoints}
        interfaces = []
        for iface in card.interfaces:
            try:
                iurl = interface_url(iface.binding, iface.url, fetched.url)
            except InvalidCard:  # no agent at it: shown as the card says it (not spoken)
                iurl = iface.url
            d = dialect_of_version(iface.protocol_version)
            interfaces.append({"url": iurl, "binding": iface.binding,
                               "protocolVersion": iface.protocol_version,
                               "tenant": iface.tenant,
                               "spoken": (iurl, iface.binding.upper(), d) in spoken})
        schemes = {}
        for name, scheme in card.security_schemes.items():
            schemes[name] = to_json(scheme)
        return {
            "url": fetched.url,
            "document": fetched.document.decode("utf-8", "replace"),
            "name": card.name,
            "description": card.description,
            "version": card.version,
            "capabilities": to_json(card.capabilities),
            "skills": to_json(card.skills),
            "interfaces": interfaces,
            "securitySchemes": schemes,
            "security": card.security,
            "checks": check_card(doc),
            "signature": await self._signature(fetched, transport),
        }

    async def _signature(self, fetched: FetchedCard, transport: Transport) -> dict[str, Any]:
        if not fetched.card.signatures:
            return {"status": "unsigned", "message": "the card is not signed"}
        verifier = CardVerifier()
        refused: str | None = None
        try:
            await verifier.verify(fetched, transport)
        except UnverifiedCard as exc:
            refused = str(exc)
        except ClientError as exc:
            refused = f"cannot check the signature: {exc}"
        # the place whose keys were used, whether they verified the card or not; the
        # first place looked at when none gave keys
        jwks = verifier.keys_url or verifier.jwks_url_for(fetched.url, fetched.card)
        if refused is not None:
            return {"status": "invalid", "message": refused, "jwksUrl": jwks}
        count = len(fetched.card.signatures)
        return {"status": "verified", "jwksUrl": jwks,
                "message": f"signature verified with the keys at {jwks} "
                           f"({count} signature{'s' if count != 1 else ''})"}

    async def _new_receiver(self, card: AgentCard | None, card_url: str) -> None:
        jwks_url = None
        if card is not None:
            for ext in card.capabilities.extensions:
                if ext.uri == PUSH_SIGNING_URI and isinstance(ext.params, dict):
                    value = ext.params.get("jwksUrl")
                    jwks_url = value if isinstance(value, str) else None
        if jwks_url is None:
            parts = urlsplit(card_url)
            jwks_url = f"{parts.scheme}://{parts.netloc}{JWKS_PATH}"
        # a token of its own names this agent's receiver to the webhook
        self.push_token = secrets.token_urlsafe(24)
        # unsigned notifications are shown as such; a bad signature is refused
        self.receiver = Receiver(self._pushed, token=self.push_token, jwks_url=jwks_url,
                                 require_signature=False)
        self._receivers[self.push_token] = self.receiver
        while len(self._receivers) > _RECEIVERS:
            _, old = self._receivers.popitem(last=False)
            await _close_receiver(old)

    def receiver_for(self, token: str | None) -> Receiver | None:
        """The receiver of the agent whose notifications carry ``token``; else the
        current one (which refuses them)."""
        for known, receiver in self._receivers.items():
            if token is not None and hmac.compare_digest(known.encode(), token.encode()):
                return receiver
        return self.receiver

    def _pushed(self, event: PushEvent) -> None:
        headers = {k: (MASK if k in ("x-a2a-notification-token", "authorization") else v)
                   for k, v in event.headers.items()}
        self.emit("push", notificationId=event.notification_id, dialect=event.dialect,
                  taskId=event.task_id, state=event.state, verified=event.verified,
                  signed="x-a2a-signature" in event.headers, kid=event.kid,
                  body=event.body, headers=headers)

    def _need_client(self) -> Client:
        if self.client is None:
            raise InspectorError("connect to an agent first")
        return self.client

    # ------------------------------------------------------------------ calls

    def _start(self, run: Callable[[int], Any]) -> int:
        self._turns += 1
        turn = self._turns
        task = asyncio.get_running_loop().create_task(self._guarded(turn, run))
        self._work.add(task)
        task.add_done_callback(self._work.discard)
        return turn

    async def _guarded(self, turn: int, run: Callable[[int], Any]) -> None:
        try:
            await run(turn)
        except (ClientError, A2AError, ValueError) as exc:
            self.emit("error", turn=turn, message=error_text(exc))
        except asyncio.CancelledError:
            # (its connection closed): the page must not show it running still
            self.emit("error", turn=turn, message="stopped: the connection to the agent "
                                                  "was closed")
            raise
        except Exception as exc:  # the page gets a line, the log the traceback
            log.exception("inspector turn %s failed", turn)
            self.emit("error", turn=turn, message=f"unexpected failure: {error_text(exc)}")

    def _event(self, turn: int, event: StreamEvent) -> None:
        self.emit("event", turn=turn, seq=event.seq, final=event.final,
                  raw=_raw_text(event.raw), **item_json(event.item))

    def send(self, *, text: str, task_id: str | None, context_id: str | None, data: Any,
             files: list[FilePart], stream: bool | None, push: bool, webhook: str) -> int:
        """Start a turn: stream it, or send and wait (with a webhook: send and return)."""
        client = self._need_client()
        parts: list[Part] = []
        if text.strip():  # (spaces alone are no message; the text is sent as written)
            parts.append(TextPart(text=text))
        if data is not None:
            parts.append(DataPart(data=data))
        parts.extend(files)
        if not parts:
            raise InspectorError("the message is empty: write text, add data or a file")
        card = client.card
        if stream is None:
            stream = card.capabilities.streaming if card is not None else True
        config = PushConfig(url=webhook, token=self.push_token) if push else None

        async def run(turn: int) -> None:
            self.emit("turn", turn=turn, text=text, taskId=task_id, contextId=context_id,
                      data=data, files=[to_json(f) for f in files],
                      mode="push" if push else ("stream" if stream else "send"))
            if stream and not push:
                async for event in client.stream(parts, task_id=task_id, context_id=context_id):
                    self._event(turn, event)
            else:
                result = await client.send(parts, task_id=task_id, context_id=context_id,
                                           blocking=not push, push=config)
                self.emit("event", turn=turn, seq=None, final=True,
                          raw=_raw_text(client.last_result), **item_json(result))
            self.emit("turn-end", turn=turn)

        return self._start(run)

    def subscribe(self, task_id: str, last_event_id: int | None) -> int:
        client = self._need_client()

        async def run(turn: int) -> None:
            self.emit("turn", turn=turn, taskId=task_id, mode="subscribe",
                      lastEventId=last_event_id)
            async for event in client.subscribe(task_id, last_event_id=last_event_id):
                self._event(turn, event)
            self.emit("turn-end", turn=turn)

        return self._start(run)

    async def list_tasks(self, **filters: Any) -> dict[str, Any]:
        result = await self._need_client().list_tasks(**filters)
        return {"tasks": [item_json(t) for t in result.tasks],
                "nextPageToken": result.next_page_token or None,
                "totalSize": result.total_size}

    async def get_task(self, task_id: str, history_length: int | None) -> dict[str, Any]:
        client = self._need_client()
        task = await client.get_task(task_id, history_length=history_length)
        return {**item_json(task), "raw": _raw_text(client.last_result)}

    async def cancel(self, task_id: str) -> dict[str, Any]:
        client = self._need_client()
        task = await client.cancel(task_id)
        out = {**item_json(task), "raw": _raw_text(client.last_result)}
        self.emit("event", turn=None, seq=None, final=True, raw=out["raw"], **item_json(task))
        return out

    async def register_push(self, task_id: str, webhook: str) -> dict[str, Any]:
        client = self._need_client()
        config = await client.call(SetPushConfig(
            task_id=task_id, config=PushConfig(url=webhook, token=self.push_token)))
        self.emit("push-config", taskId=task_id, config=to_json(config))
        return {"config": to_json(config), "raw": _raw_text(client.last_result)}

    # ------------------------------------------------------------------ closing

    async def close_client(self) -> None:
        work = list(self._work)
        for task in work:
            task.cancel()
        # their ends logged before what the next connection logs
        await asyncio.gather(*work, return_exceptions=True)
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        self.receiver = None  # (kept for the tasks it was given to, until the session ends)

    async def aclose(self) -> None:
        await self.close_client()
        for receiver in self._receivers.values():
            await _close_receiver(receiver)
        self._receivers.clear()


async def _close_receiver(receiver: Receiver) -> None:
    if receiver.jwks is not None:
        await receiver.jwks.aclose()


def file_parts(files: Any) -> list[FilePart]:
    """``[{"name", "mediaType", "bytes": base64}]`` from the page -> file parts."""
    if files is None:
        return []
    if not isinstance(files, list):
        raise InspectorError("files must be a list")
    out = []
    for f in files:
        if not isinstance(f, dict) or not isinstance(f.get("bytes"), str):
            raise InspectorError("each file needs its bytes in base64")
        for key in ("name", "mediaType"):
            if not isinstance(f.get(key), str | None):
                raise InspectorError(f"a file's {key} must be text, not {f[key]!r}")
        try:
            raw = base64.b64decode(f["bytes"], validate=True)
        except (binascii.Error, ValueError):
            raise InspectorError(f"the bytes of {f.get('name')!r} are not base64") from None
        out.append(FilePart(raw=raw, filename=f.get("name") or None,
                            media_type=f.get("mediaType") or "application/octet-stream"))
    return out

