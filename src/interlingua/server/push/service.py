"""The push service: push config calls, configs given in a send, and delivery.

The engine hands it the four config calls (``SetPushConfig``,
``GetPushConfig``, ``ListPushConfigs``, ``DeletePushConfig``) of every
dialect, asks it to check the config a ``SendMessage`` carries (registered in
the transaction that creates the task), and starts and stops it with itself.

Rules:

* an agent whose card says ``pushNotifications: false`` answers every push
  request with ``PushNotSupported``;
* a task the caller's scope does not own is ``TaskNotFound``;
* a config's URL must pass the SSRF guard, and its token and credentials must
  be sendable as headers, else ``InvalidParams`` saying why;
* a task has several configs, each with an id; one is made when absent. A v0.1
  client knows no config ids and has one config per task, so its config gets
  the task's id, and setting it again replaces it;
* each config keeps the dialect it was registered in, which decides the body
  of its notifications (``payloads.py``);
* ``GetPushConfig`` without an id (v0.1, v0.2 ``TaskIdParams``) answers the
  config whose id is the task id, else the task's first config.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ...core.calls import (
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfigsPage,
    SendMessage,
    SetPushConfig,
)
from ...core.dialects import get_codec
from ...core.errors import InvalidParams, PushNotSupported, no_push_config
from ...core.ids import id_fault
from ...core.model import AgentCard, AgentExtension, PushConfig
from ...core.parts import new_id
from ...core.push_wire import SIGNING_EXTENSION_URI
from ...hooks import Hooks
from ...stores import data_file
from ...stores.base import Delivery, PushPort, Scope, TooManyPushConfigs
from ..jwks import JWKS_PATH
from ..keyring import SIGNATURE_HEADER, KeyRing
from .dispatcher import Dispatcher
from .headers import NOTIFICATION_ID_HEADER, check_authentication, check_token
from .sender import WebhookSender
from .settings import PushSettings
from .ssrf import Refused, UrlGuard

if TYPE_CHECKING:
    from ..context import RequestInfo

__all__ = [

    "SIGNING_EXTENSION_URI",
    "PushCall",
    "PushService",
    "default_key_path",
]

log = logging.getLogger("interlingua.push")

PushCall = SetPushConfig | GetPushConfig | ListPushConfigs | DeletePushConfig


def default_key_path(store_url: str) -> Path | None:
    """Where a store's signing keys live: beside its file, else nowhere (memory)."""
    path = data_file(store_url)
    return None if path is None else path.with_suffix(".push-keys.json")


def _fed_in(request: RequestInfo) -> str:
    """The dialect a config the caller registers is fed in: the minor version it
    asked for (A2A 1.1: its bodies carry generations), else its dialect's."""
    return request.minor or request.dialect


class PushService:
    """Push notifications of one engine."""

    def __init__(self, store: PushPort, settings: PushSettings | None = None, *,
                 enabled: bool = True, shared: Callable[[], bool] = lambda: False,
                 now: Callable[[], str] = lambda: "", hooks: Hooks | None = None) -> None:
        self.store = store
        #: handed to the dispatcher (deliveries, attempts, webhook headers)
        self.hooks = hooks if hooks is not None else Hooks()
        self._enabled = enabled
        #: whether other live processes serve the store (their claims are theirs)
        self._shared = shared
        self._now = now
        self.settings = s = settings or PushSettings()
        self.guard = UrlGuard(
            allow_http=s.allow_http,
            allow_private_networks=s.allow_private_networks,
            allow_hosts=s.allow_hosts,
            resolver=s.resolver,
        )
        key_path = s.key_path if s.key_path is not None else default_key_path(store.url)
        self.keys = KeyRing(alg=s.signing_alg, path=key_path, pem=s.signing_key_pem,
                            grace=s.key_grace, clock=s.clock)
        self._sender: WebhookSender | None = None
        self._dispatcher: Dispatcher | None = None

    @property
    def enabled(self) -> bool:
        """What the card says: ``capabilities.pushNotifications``."""
        return self._enabled

    def withdraw(self) -> None:
        """Offer no push notifications, whatever the agent says: for an agent served on
        a mesh alone, whose card offers none. Before the service starts."""
        if self._dispatcher is not None:
            raise RuntimeError("push notifications are delivered already")
        self._enabled = False

    @property
    def dispatcher(self) -> Dispatcher | None:
        return self._dispatcher

    # ------------------------------------------------------------------ life

    async def start(self) -> None:
        """Load (or make) the signing keys and start delivering, when push is on."""
        if not self.enabled:
            return
        if not self.keys.loaded:
            await asyncio.to_thread(self.keys.load)
        if not self.settings.dispatch or self._dispatcher is not None:
            return
        store = self.store
        # With no other live process on the store, this dispatcher is its only
        # one: claims left by a process that died are void. Another live
        # process's claims are left to lapse by themselves.
        if not self._shared():
            released = await store.release_claims()
            if released:
                log.info("push: %d delivery claim(s) of an earlier run released", released)
        s = self.settings
        self._sender = WebhookSender(self.guard, timeout=s.timeout, max_redirects=s.max_redirects,
                                     max_connections=max(s.concurrency, 1),
                                     network_backend=s.network_backend)
        self._dispatcher = Dispatcher(store, self._sender, self.keys, s, self.hooks)
        store.on_outbox = self._dispatcher.wake
        self._dispatcher.start()

    async def stop(self) -> None:
        dispatcher, sender = self._dispatcher, self._sender
        self._dispatcher = self._sender = None
        if dispatcher is not None:
            self.store.on_outbox = None
            await dispatcher.stop()
        if sender is not None:
            await sender.aclose()

    # ----------------------------------------------------------------- calls

    async def handle(self, call: PushCall, request: RequestInfo
                     ) -> PushConfig | list[PushConfig] | PushConfigsPage | None:
        """Carry out a push config call for the caller's scope."""
        self._require()
        scope = request.scope
        store = self.store
        if isinstance(call, SetPushConfig):
            return await self._put(scope, call.task_id, call.config, _fed_in(request))
        if isinstance(call, GetPushConfig):
            # a config the task has not: TaskNotFound, as v1.0 §3.1.8 lists it ("the push
            # notification configuration does not exist"), in every dialect
            if call.config_id:
                found = await store.get_push_config(scope, call.task_id, call.config_id)
                if found is None:
                    raise no_push_config(call.task_id, call.config_id)
                return found.config
            records = await store.list_push_configs(scope, call.task_id)
            if not records:
                raise no_push_config(call.task_id)
            own = next((r for r in records if r.config.id == call.task_id), records[0])
            return own.config
        if isinstance(call, ListPushConfigs):
            if call.page_size is not None and call.page_size < 0:
                raise InvalidParams("Invalid params: pageSize must not be negative")
            configs = [r.config for r in await store.list_push_configs(scope, call.task_id)]
            return page_of(configs, call.page_size, call.page_token) if call.paged \
                else configs
        await store.delete_push_config(scope, call.task_id, call.config_id)
        return None

    async def send_configs(self, call: SendMessage, request: RequestInfo,
                           task_id: str) -> list[PushConfig]:
        """The checked config a send carries, for ``Store.create_task(push_configs=)``."""
        push = call.config.push_config
        if push is None:
            return []
        self._require()
        return [await self.prepare(push, task_id, _fed_in(request))]

    async def add_send_configs(self, scope: Scope, task_id: str, call: SendMessage,
                               request: RequestInfo) -> None:
        """Register the config a send to an existing task carries (as a set would)."""
        push = call.config.push_config
        if push is not None:
            self._require()
            await self._put(scope, task_id, push, _fed_in(request))

    async def _put(self, scope: Scope, task_id: str, config: PushConfig,
                   dialect: str) -> PushConfig:
        """``config`` checked and kept for the task ``task_id``, within the number of
        configs a task may have: by a set and by a send to the task alike."""
        # the task first: one the caller has not (an id no task could have, say) is
        # TaskNotFound, whatever the config says
        existing = await self.store.list_push_configs(scope, task_id)
        config = await self.prepare(config, task_id, dialect)
        limit = self.settings.max_configs_per_task
        if len(existing) >= limit and all(r.config.id != config.id for r in existing):
            raise InvalidParams(
                f"Invalid params: task {task_id} already has "
                f"{len(existing)} push notification configs (the limit)")
        try:  # counted again in the write: puts made at once do not pass it either
            record = await self.store.put_push_config(scope, task_id, config, dialect=dialect,
                                                      now=self._now(), at_most=limit)
        except TooManyPushConfigs as exc:
            raise InvalidParams(f"Invalid params: {exc}") from None
        return record.config

    async def prepare(self, config: PushConfig, task_id: str, dialect: str) -> PushConfig:
        """The config checked, with its id (made when absent) and task id."""
        self._require()
        url = (config.url or "").strip()
        if not url:
            raise InvalidParams("Invalid params: the push notification config needs a url")
        # (its length is held where the request is read: core/bounds.py)
        try:
            await self.guard.check_url_resolved(url)
        except Refused as exc:
            raise InvalidParams(f"Invalid params: url refused: {exc}") from None
        try:
            check_token(config.token)
            check_authentication(config.authentication)
        except ValueError as exc:
            raise InvalidParams(f"Invalid params: {exc}") from None
        config_id = config.id or (
            task_id if get_codec(dialect).push_config_id_is_task_id else new_id())
        fault = id_fault(config_id)  # the rule every id a caller gives is held to
        if fault is not None:
            raise InvalidParams(f"Invalid params: the push notification config id {fault}")
        return msgspec.structs.replace(config, url=url, id=config_id, task_id=task_id)

    def _require(self) -> None:
        if not self.enabled:
            raise PushNotSupported(
                "Push notifications are not supported by this agent "
                "(its card says pushNotifications: false)")

    # ------------------------------------------------------------- the card

    def card_with_extension(self, card: AgentCard, public_url: str) -> AgentCard:
        """``card`` naming the JWKS that verifies webhook signatures (when push is on)."""
        if not card.capabilities.push_notifications:
            return card
        if any(e.uri == SIGNING_EXTENSION_URI for e in card.capabilities.extensions):
            return card
        ext = AgentExtension(
            uri=SIGNING_EXTENSION_URI,
            description="Push notifications are signed: a detached JWS of the body in the "
                        f"{SIGNATURE_HEADER} header, verifiable with the keys at jwksUrl.",
            required=False,
            params={
                "jwksUrl": public_url.rstrip("/") + JWKS_PATH,
                "header": SIGNATURE_HEADER,
                "notificationIdHeader": NOTIFICATION_ID_HEADER,
                "algorithms": ["ES256", "RS256"],
            },
        )
        caps = msgspec.structs.replace(
            card.capabilities, extensions=[*card.capabilities.extensions, ext])
        return msgspec.structs.replace(card, capabilities=caps)

    # ------------------------------------------------- operating the outbox

    async def dead_letters(self, scope: Scope | None = None, task_id: str | None = None,
                           limit: int = 100) -> list[Delivery]:
        """Deliveries given up on, oldest first (each says its attempts and last error)."""
        return await self.store.dead_deliveries(scope, task_id, limit)

    async def redrive(self, delivery_id: int) -> bool:
        """Queue a dead delivery again (its attempts start over)."""
        return await self.store.revive_delivery(delivery_id)

    async def outbox_counts(self) -> dict[str, int]:
        return await self.store.outbox_counts()

    async def idle(self, timeout: float = 10.0, interval: float = 0.02) -> bool:
        """Wait (real time) until no delivery is pending; False on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if (await self.store.outbox_counts()).get("pending", 0) == 0:
                return True
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(interval)

    def rotate_signing_key(self, alg: str | None = None) -> str:
        """Sign with a new key from now on; returns its kid. The old public key
        stays in the JWKS for ``key_grace`` and while deliveries use it."""
        return self.keys.rotate(alg).kid

    def describe(self) -> dict[str, Any]:
        """What is configured (no secrets): for health pages and logs."""
        s = self.settings
        return {
            "enabled": self.enabled,
            "dispatching": self._dispatcher is not None,
            "allow_http": s.allow_http,
            "allow_private_networks": s.allow_private_networks,
            "allow_hosts": list(s.allow_hosts),
            "max_attempts": s.max_attempts,
            "signing_alg": self.keys.current.alg if self.keys.loaded else s.signing_alg,
            "signing_kid": self.keys.current.kid if self.keys.loaded else None,
        }


#: what a push config page token says before the id it continues after
_TOKEN_MARK = b"pc1:"


def page_of(configs: list[PushConfig], size: int | None, token: str | None) -> PushConfigsPage:
    """A page of ``configs``: those whose id sorts after the one ``token`` names (all,
    without one), ``size`` of them at most (all for None or 0). By id, so that a config
    set or deleted between two pages moves no other across a page's edge."""
    ordered = sorted(configs, key=lambda config: config.id or "")
    if token:
        after = _token_id(token)
        ordered = [config for config in ordered if (config.id or "") > after]
    page = ordered[:size] if size else ordered
    more = len(page) < len(ordered)
    next_token = base64.urlsafe_b64encode(_TOKEN_MARK + (page[-1].id or "").encode()).decode() \
        if more and page else ""
    return PushConfigsPage(configs=page, next_page_token=next_token)


def _token_id(token: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(token.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        raw = b""
    if not raw.startswith(_TOKEN_MARK):
        raise InvalidParams(_NOT_OURS)
    try:
        return raw[len(_TOKEN_MARK):].decode()
    except UnicodeDecodeError:
        raise InvalidParams(_NOT_OURS) from None


#: a page token refused, named by its path in the params, as the codecs name a member:
#: each binding renames it as its caller sent it (gRPC: ``page_token``)
_NOT_OURS = ("Invalid params: params.pageToken is not a token from a previous "
             "ListTaskPushNotificationConfigs response")
