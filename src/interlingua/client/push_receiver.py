"""The receiving side of push notifications: a webhook app and a registration helper.

``Receiver`` is an ASGI app that takes webhook POSTs from an agent:

1. checks the notification token (``X-A2A-Notification-Token``) and, when
   configured, the ``Authorization`` header;
2. verifies the detached JWS in ``X-A2A-Signature`` against the agent's
   JWKS (fetched, cached, fetched again when a key id is unknown), checks
   that its ``nid`` is the ``X-A2A-Notification-Id`` sent and that its
   ``iat`` is recent;
3. drops a notification whose id it has already taken (agents deliver at
   least once);
4. reads the body in whichever dialect it is (v1.0 ``StreamResponse``, v0.3
   Task, v0.1 ``taskUpdate``) and hands a ``PushEvent`` to the callback.

A refused notification gets 401 (bad token, credentials or signature) or 400
(not JSON); an accepted one 200. A callback that raises makes it 500, so the
agent tries again.

``register_receiver`` creates a push config for a task over JSON-RPC in the
chosen dialect, with the codec's own request encoding.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import inspect
import itertools
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx
import msgspec
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from ..core import codings
from ..core.asgi_json import send_json
from ..core.calls import GetTask, SetPushConfig
from ..core.dialects import StreamItem, get_codec
from ..core.errors import A2AError, InvalidAgentResponse
from ..core.fetching import fetch_document, fetchable_url
from ..core.model import AuthInfo, PushConfig, StatusUpdate, Task
from ..core.origins import CrossOrigin, Origins
from ..core.push_wire import (
    ALGORITHMS,
    JWS_REGISTRY,
    NOTIFICATION_ID_HEADER,
    SIGNATURE_HEADER,
    TOKEN_HEADER,
)
from ..core.reading import past_bom

__all__ = ["JWKSCache", "PushEvent", "Receiver", "register_receiver"]

log = logging.getLogger("interlingua.push.receiver")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Callback = Callable[["PushEvent"], Awaitable[None] | None]

_MAX_BODY = 10 * 1024 * 1024

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode
_V1_MEMBERS = frozenset({"task", "message", "statusUpdate", "artifactUpdate"})


class PushEvent(msgspec.Struct, kw_only=True):
    """One notification as received."""

    notification_id: str | None
    #: the body's dialect: "1.0", "0.3", "0.1", or "unknown"
    dialect: str
    task_id: str | None
    #: the task state it reports ("completed" ...), when it reports one
    state: str | None
    #: the body, decoded JSON
    body: Any
    #: the body in canonical form (a Task or an update), when it could be read
    item: StreamItem | None = None
    #: request headers, names lower-cased
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    #: True when the signature was checked and is good
    verified: bool = False
    kid: str | None = None
    received_at: float = 0.0


class _Reject(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ----------------------------------------------------------------------- JWKS


class JWKSCache:
    """An agent's JWKS, fetched when first needed and again when a key id is new."""

    def __init__(self, url: str, *, http: httpx.AsyncClient | None = None, ttl: float = 300.0,
                 min_refresh: float = 1.0, clock: Callable[[], float] = time.monotonic,
                 timeout: float = 10.0) -> None:
        self.url = fetchable_url(url, "jwks_url")
        #: seconds a fetch may take, its whole answer (notifications wait for it)
        self.timeout = timeout
        self._http = http
        self._own_http = http is None
        self.ttl = ttl
        self.min_refresh = min_refresh
        self._clock = clock
        self._keys: KeySet | None = None
        self._kids: set[str] = set()
        self._fetched_at = -float("inf")
        self._lock = asyncio.Lock()

    async def keyset(self, kid: str | None) -> KeySet:
        async with self._lock:
            now = self._clock()
            stale = now - self._fetched_at > self.ttl
            unknown = kid is not None and kid not in self._kids
            if self._keys is None or stale or (unknown and now - self._fetched_at >= self.min_refresh):
                await self._fetch()
            assert self._keys is not None
            return self._keys

    async def _fetch(self) -> None:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.timeout)
        try:
            doc = _decode(past_bom(await fetch_document(self._http, self.url, timeout=self.timeout)))
            if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list):
                raise ValueError("the JWKS is not an object with a list of keys")
            keys = KeySet.import_key_set(doc)  # type: ignore[arg-type]
        # (joserfc raises TypeError and KeyError too, for a key of an unknown curve, say;
        # json a RecursionError for a document nested too deeply)
        except (httpx.HTTPError, ValueError, JoseError, TypeError, KeyError,
                RecursionError, TimeoutError, msgspec.DecodeError) as exc:
            if self._keys is not None:
                log.warning("could not refresh the JWKS at %s: %s", self.url, exc)
                return
            raise _Reject(401, f"cannot verify: the JWKS at {self.url} is unavailable") from None
        self._keys = keys
        self._kids = {str(k.get("kid")) for k in doc.get("keys", []) if isinstance(k, dict)}
        self._fetched_at = self._clock()

    async def aclose(self) -> None:
        if self._own_http and self._http is not None:
            await self._http.aclose()
            self._http = None


def _protected_header(signature: str) -> dict[str, Any]:
    head = signature.split(".", 1)[0]
    try:
        doc = _decode(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (binascii.Error, ValueError, msgspec.DecodeError, RecursionError):
        raise _Reject(401, "the signature header is not a JWS") from None
    if not isinstance(doc, dict):
        raise _Reject(401, "the signature header is not a JWS")
    return doc


# ------------------------------------------------------------------- receiver


class Receiver:
    """An ASGI webhook endpoint for push notifications (any path)."""

    def __init__(
        self,
        callback: Callback | None = None,
        *,
        token: str | None = None,
        jwks_url: str | None = None,
        require_signature: bool | None = None,
        authorization: str | None = None,
        max_age: float = 300.0,
        dedupe: int = 10_000,
        keep: int = 1_000,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.callback = callback
        self.token = token
        self.authorization = authorization
        self.jwks = JWKSCache(jwks_url, http=http) if jwks_url else None
        self.require_signature = bool(jwks_url) if require_signature is None else require_signature
        if self.require_signature and self.jwks is None:
            raise ValueError("require_signature needs the agent's jwks_url")
        self.max_age = max_age
        self._clock = clock
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._dedupe = dedupe
        #: the latest notifications taken, oldest first
        self.events: deque[PushEvent] = deque(maxlen=keep)
        self.duplicates = 0
        self.refused = 0
        #: the pages whose browsers may post here: none but the receiver's own
        self._origins = Origins()
        self._changed: asyncio.Condition | None = None
        self._locks: dict[str, asyncio.Lock] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope["method"] == "GET":
            await send_json(send, 200, {"status": "listening"})
            return
        if scope["method"] != "POST":
            await send_json(send, 405, {"error": "webhooks are POSTed"})
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", ())}
        try:
            origin = headers.get("origin")
            if origin is not None:
                # a web page's notification: an agent sends none (core/origins.py)
                try:
                    self._origins.check(origin.encode("latin-1"),
                                        headers.get("host", "").encode("latin-1") or None)
                except CrossOrigin as exc:
                    raise _Reject(403, str(exc)) from None
            body = await _read(receive, headers.get("content-encoding"))
            event = await self.accept(body, headers)
        except _Reject as exc:
            self.refused += 1
            await send_json(send, exc.status, {"error": str(exc)},
                          [codings.ACCEPT_ENCODING] if exc.status == 415 else [])
            return
        if event is None:
            await send_json(send, 200, {"duplicate": True})
            return
        await send_json(send, 200, {"ok": True})

    async def accept(self, body: bytes, headers: dict[str, str]) -> PushEvent | None:
        """Check and take one notification; None for a duplicate. Raises
        ``_Reject`` (with an HTTP status) for one that is refused."""
        if self.token is not None:
            got = headers.get(TOKEN_HEADER.lower(), "")
            if not hmac.compare_digest(got.encode(), self.token.encode()):
                raise _Reject(401, "wrong or missing notification token")
        if self.authorization is not None:
            got = headers.get("authorization", "")
            if not hmac.compare_digest(got.encode(), self.authorization.encode()):
                raise _Reject(401, "wrong or missing Authorization")
        nid = headers.get(NOTIFICATION_ID_HEADER.lower())
        verified, kid = await self._verify(body, headers, nid)
        if nid is not None and nid in self._seen:
            self.duplicates += 1
            return None
        body = past_bom(body)  # (RFC 8259 §8.1: a reader may ignore one)
        try:
            doc = _decode(body)
        except msgspec.DecodeError:
            raise _Reject(400, "the body is not JSON") from None
        except RecursionError:
            raise _Reject(400, "the body is JSON nested too deeply to read") from None
        dialect, item, task_id, state = _interpret(doc, body)
        event = PushEvent(
            notification_id=nid, dialect=dialect, task_id=task_id, state=state, body=doc,
            item=item, headers=headers, verified=verified, kid=kid, received_at=self._clock(),
        )
        # One notification id at a time: a retry racing its original runs the callback once.
        lock = self._locks.setdefault(nid or "", asyncio.Lock())
        async with lock:
            if nid is not None and nid in self._seen:
                self.duplicates += 1
                return None
            if self.callback is not None:
                try:
                    out = self.callback(event)
                    if inspect.isawaitable(out):
                        await out
                except Exception as exc:
                    log.exception("the push callback failed")
                    raise _Reject(500, f"the receiver's callback failed: {exc}") from None
            if nid is not None:
                self._seen[nid] = None
                if len(self._seen) > self._dedupe:
                    self._seen.popitem(last=False)
        self._locks.pop(nid or "", None)
        self.events.append(event)
        await self._notify()
        return event

    async def _verify(self, body: bytes, headers: dict[str, str],
                      nid: str | None) -> tuple[bool, str | None]:
        signature = headers.get(SIGNATURE_HEADER.lower())
        if signature is None or self.jwks is None:
            if self.require_signature:
                raise _Reject(401, f"missing {SIGNATURE_HEADER}")
            return False, None
        if signature.count(".") != 2 or signature.split(".")[1]:
            # A detached JWS has an empty payload segment: the body received is what
            # it signs. (joserfc checks a payload carried in the token in place of
            # ``payload=``: a signed body of another notification would verify.)
            raise _Reject(401, "bad signature: not a detached JWS (its payload segment "
                               "must be empty: the body is what is signed)")
        header = _protected_header(signature)
        kid = header.get("kid")
        keys = await self.jwks.keyset(kid if isinstance(kid, str) else None)
        try:
            jws.deserialize_compact(signature, keys, algorithms=list(ALGORITHMS),
                                    registry=JWS_REGISTRY, payload=body)
        except (JoseError, ValueError) as exc:
            raise _Reject(401, f"bad signature: {exc}") from None
        except Exception:
            # joserfc raises TypeError and KeyError too for some headers a sender writes
            # (a "crit" that is no list of names): refused, as any other bad signature
            raise _Reject(401, "bad signature: a malformed protected header") from None
        if header.get("nid") != nid:
            raise _Reject(401, "the signature is for another notification id")
        iat = header.get("iat")
        if not isinstance(iat, int) or abs(self._clock() - iat) > self.max_age:
            raise _Reject(401, "the signature is too old (or from the future)")
        return True, kid if isinstance(kid, str) else None

    # ---------------------------------------------------------------- waiting

    async def _notify(self) -> None:
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[PushEvent], bool],
                       timeout: float = 30.0) -> PushEvent:
        """The first event (already taken or still to come) that matches.

        Call it on the event loop the receiver serves on.
        """
        if self._changed is None:
            self._changed = asyncio.Condition()

        async def find() -> PushEvent:
            assert self._changed is not None
            async with self._changed:
                while True:
                    for event in self.events:
                        if predicate(event):
                            return event
                    await self._changed.wait()

        async with asyncio.timeout(timeout):
            return await find()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.jwks is not None:
                    await self.jwks.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _interpret(doc: Any, raw: bytes) -> tuple[str, StreamItem | None, str | None, str | None]:
    """(dialect, canonical item, task id, state) of a body."""
    if not isinstance(doc, dict):
        return "unknown", None, None, None
    item: StreamItem | None = None
    if "eventType" in doc:
        raw_id = doc.get("taskId")
        task_id = raw_id if isinstance(raw_id, str) else None
        status = doc.get("status")
        state = status.get("state") if isinstance(status, dict) else None
        task_doc = doc.get("task")
        if isinstance(task_doc, dict) and task_id is not None:
            query = GetTask(id=task_id)
            item = _try(lambda: get_codec("0.1").decode_result(query, _encode(task_doc)))
        return ("0.1", item if isinstance(item, Task) else None, task_id,
                state if isinstance(state, str) else None)
    if doc.get("kind") == "task":
        item = _try(lambda: get_codec("0.3").decode_stream_item(raw))
        dialect = "0.3"
    elif _V1_MEMBERS.intersection(doc):
        item = _try(lambda: get_codec("1.0").decode_stream_item(raw))
        dialect = "1.0"
    else:
        return "unknown", None, None, None
    if isinstance(item, Task):
        return dialect, item, item.id, item.status.state.value
    if isinstance(item, StatusUpdate):
        return dialect, item, item.task_id, item.status.state.value
    task_id = getattr(item, "task_id", None)
    return dialect, item, task_id if isinstance(task_id, str) else None, None


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except (A2AError, ValueError, msgspec.MsgspecError, RecursionError):
        return None


async def _read(receive: Receive, coding: str | None) -> bytes:
    """The body, its Content-Encoding (``coding``) undone."""
    body = await _read_all(receive)
    if coding is None:
        return body
    try:
        return codings.decode(body, coding, _MAX_BODY)
    except codings.TooLarge:
        raise _Reject(413, "the body is too large") from None
    except codings.CodingNotSupported as exc:
        raise _Reject(415, str(exc)) from None
    except codings.BadCoding as exc:
        raise _Reject(400, str(exc)) from None


async def _read_all(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Reject(400, "the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > _MAX_BODY:
            raise _Reject(413, "the body is too large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)




# --------------------------------------------------------------- registration

_request_ids = itertools.count(1)


class _RPCResponse(msgspec.Struct):
    result: msgspec.Raw = msgspec.Raw(b"null")
    error: Any = None


async def register_receiver(
    client: httpx.AsyncClient,
    agent_url: str,
    task_id: str,
    url: str,
    *,
    token: str | None = None,
    dialect: str = "1.0",
    config_id: str | None = None,
    authentication: AuthInfo | None = None,
    tenant: str | None = None,
) -> PushConfig:
    """Ask the agent at ``agent_url`` (its JSON-RPC URL) to push ``task_id``'s
    updates to ``url``; returns the config as the agent stored it.

    ``dialect`` is the codec the request is written in ("1.1", "1.0", "0.3",
    "0.1"): it also decides the body the agent will post (1.1's: each event with
    its task's generation). The agent's error comes back
    as the matching ``A2AError``.
    """
    codec = get_codec(dialect)
    call = SetPushConfig(
        task_id=task_id,
        config=PushConfig(url=url, id=config_id, token=token, authentication=authentication),
        tenant=tenant,
    )
    method, params = codec.encode_call(call)
    body = (b'{"jsonrpc":"2.0","id":' + str(next(_request_ids)).encode() + b',"method":'
            + _encode(method) + b',"params":' + params + b"}")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if codec.needs_version_header:
        # the version asked for: 1.1's codec records its tasks as 1.0, but a config
        # registered in 1.0 would be fed 1.0's bodies, without generations
        headers["A2A-Version"] = codec.name if codec.name in codec.versions else codec.dialect
    resp = await client.post(agent_url, content=body, headers=headers)
    try:
        answer = msgspec.json.decode(resp.content, type=_RPCResponse)
    except msgspec.MsgspecError:
        raise InvalidAgentResponse(
            f"the agent answered HTTP {resp.status_code} without a JSON-RPC response") from None
    if answer.error is not None:
        raise codec.decode_error(answer.error)
    result = codec.decode_result(call, bytes(answer.result))
    if not isinstance(result, PushConfig):
        raise InvalidAgentResponse("the agent did not answer with a push notification config")
    return result
