"""The push dispatcher: takes due deliveries from the store's outbox and sends them.

The outbox is the source of truth, so the dispatcher keeps no queue of its
own. It loops: claim the due queue heads (as many as it has free slots),
deliver each in its own asyncio task, and sleep until the next one is due, a
write queues new deliveries (the store's ``on_outbox`` wakes it), a delivery
finishes, or ``poll_interval`` passes (writes of other processes).

A claimed delivery is reserved for ``lease`` seconds. A failed attempt is
due again after an exponential backoff with jitter:
``min(backoff_max, backoff_base * 2 ** (attempt - 1))``, less up to
``jitter`` of it at random, and never less than a ``Retry-After``. After
``max_attempts`` attempts, or at a final refusal (a 4xx other than 408/429,
an SSRF refusal), the delivery is dead and its queue moves on. Time comes
from the injected ``clock`` and ``sleep``, so tests can run a backoff
schedule without waiting for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

from ...core.errors import TaskNotFound
from ...hooks import Hooks, ended, notify, started
from ...stores.base import Delivery, PushPort, StoreUnavailable
from ..keyring import SIGNATURE_HEADER, KeyRing
from .headers import build_request, notification_id
from .payloads import build_body
from .sender import SendResult, WebhookSender
from .settings import Attempt, PushSettings

__all__ = ["Attempt", "Dispatcher"]

log = logging.getLogger("interlingua.push")


class Dispatcher:
    """Sends the outbox's deliveries; ``start()`` and ``stop()`` with the engine."""

    def __init__(
        self, store: PushPort, sender: WebhookSender, keys: KeyRing, settings: PushSettings,
        hooks: Hooks | None = None,
    ) -> None:
        self.store = store
        self.sender = sender
        self.keys = keys
        self.settings = settings
        #: around each delivery, its attempts' outcomes, its POST's headers
        self.hooks = hooks if hooks is not None else Hooks()
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._in_flight: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._store_down = False  # said once per outage, not at every poll

    # ------------------------------------------------------------------ life

    @property
    def running(self) -> bool:
        return self._loop_task is not None and not self._loop_task.done()

    def start(self) -> None:
        if self.running:
            return
        self._stopping = False
        self._loop_task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self, grace: float = 2.0) -> None:
        """Stop claiming; give deliveries in flight ``grace`` seconds, then cancel
        them (their claims are released when a dispatcher starts again)."""
        self._stopping = True
        self._wake.set()
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None
        if self._in_flight:
            _, pending = await asyncio.wait(set(self._in_flight), timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    def wake(self) -> None:
        """New deliveries were queued: look at the outbox now."""
        self._wake.set()

    # ------------------------------------------------------------------ loop

    async def _run(self) -> None:
        s = self.settings
        while not self._stopping:
            self._wake.clear()
            try:
                free = s.concurrency - len(self._in_flight)
                if free > 0:
                    now = s.clock()
                    batch = await self.store.claim_deliveries(now, now + s.lease, free)
                    hooked = bool(self.hooks.deliveries)
                    for delivery in batch:
                        work = self._hooked_deliver(delivery) if hooked \
                            else self._deliver(delivery)
                        task = asyncio.get_running_loop().create_task(work)
                        self._in_flight.add(task)
                        task.add_done_callback(self._finished)
                    if batch:
                        continue
                    nxt = await self.store.next_delivery_at()
                    wait = s.poll_interval if nxt is None else nxt - s.clock()
                    wait = min(max(wait, 0.001), s.poll_interval)
                else:
                    wait = s.poll_interval  # a finishing delivery wakes the loop
            except asyncio.CancelledError:
                raise
            except StoreUnavailable as exc:  # an outage: one line, then quiet retries
                self._outage(exc)
                wait = s.poll_interval
            except Exception:  # the loop must outlive a transient store failure
                log.exception("push dispatcher: reading the outbox failed")
                wait = s.poll_interval
            else:
                if self._store_down:
                    self._store_down = False
                    log.warning("push dispatcher: the store is back; delivering again")
            await self._pause(wait)

    def _outage(self, exc: StoreUnavailable) -> None:
        if not self._store_down:
            self._store_down = True
            log.warning("push dispatcher: the store is unavailable (%s); trying again "
                        "every %g s", exc, self.settings.poll_interval)

    async def _pause(self, seconds: float) -> None:
        if self._wake.is_set():
            return
        sleeper = asyncio.ensure_future(self.settings.sleep(seconds))
        waker = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for f in (sleeper, waker):
                if not f.done():
                    f.cancel()
            await asyncio.gather(sleeper, waker, return_exceptions=True)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        self._wake.set()  # the next delivery of its queue may go now
        if not task.cancelled() and task.exception() is not None:
            log.error("push delivery failed unexpectedly", exc_info=task.exception())

    # -------------------------------------------------------------- delivery

    async def _hooked_deliver(self, d: Delivery) -> None:
        ends = started(self.hooks.deliveries, d)
        try:
            await self._deliver(d)
        except BaseException as exc:
            ended(ends, exc)
            raise
        ended(ends, None)

    async def _deliver(self, d: Delivery) -> None:
        s = self.settings
        started = s.clock()
        attempt = d.attempts + 1
        nid = notification_id(d.task_id, d.config_id, d.seq, d.nonce)
        try:
            record = await self.store.get_push_config(d.scope, d.task_id, d.config_id)
            body = None if record is None else await build_body(self.store, d, record)
        except TaskNotFound:
            record = body = None
        except StoreUnavailable as exc:
            # nothing was sent; the claim runs out and the delivery is taken again
            self._outage(exc)
            return
        except Exception as exc:
            log.exception("push: building notification %s failed", nid)
            await self._failed(d, attempt, started, nid,
                               SendResult(None, f"could not build the notification: {exc}"))
            return
        if record is None or body is None:
            # The config was deleted or the event is gone: nothing to send.
            self._report(Attempt(delivery_id=d.id, task_id=d.task_id, config_id=d.config_id,
                                 seq=d.seq, attempt=attempt, at=started, outcome="dropped",
                                 notification_id=nid))
            await self._record(self.store.delivery_done(d.id), nid)
            return
        config = record.config
        signature, kid = self.keys.sign(body, notification_id=nid)
        try:
            request = build_request(
                config.url, dialect=record.dialect, token=config.token,
                authentication=config.authentication, nid=nid,
                signature=(SIGNATURE_HEADER, signature),
            )
        except ValueError as exc:
            # a config stored before it would be refused (an ApiKey header the server
            # sends itself): trying again cannot help; the dead letter says why
            await self._failed(d, attempt, started, nid, SendResult(None, str(exc), final=True))
            return
        headers = request.headers
        if self.hooks.webhook_headers:  # the delivery's trace context, say
            extra: dict[str, str] = {}
            notify(self.hooks.webhook_headers, extra)
            headers = [*headers, *extra.items()]
        with self.keys.in_use(kid):
            try:
                result = await self.sender.post(request.url, headers, body,
                                                sensitive=request.sensitive, now=started)
            except Exception as exc:
                # The sender answers every outcome it knows as a result; anything else
                # still counts as an attempt, or the delivery would be claimed again
                # and again, past max_attempts, each time its lease ran out.
                log.exception("push: sending notification %s failed", nid)
                result = SendResult(None, f"could not send: {type(exc).__name__}")
        if result.delivered:
            # counted first: the POST happened whether or not the store hears of it
            self._report(Attempt(delivery_id=d.id, task_id=d.task_id, config_id=d.config_id,
                                 seq=d.seq, attempt=attempt, at=started, outcome="delivered",
                                 status=result.status, notification_id=nid))
            await self._record(self.store.delivery_done(d.id), nid)
            return
        await self._failed(d, attempt, started, nid, result)

    async def _failed(self, d: Delivery, attempt: int, started: float, nid: str,
                      result: SendResult) -> None:
        s = self.settings
        error = result.error or "failed"
        retry_at = delay = None
        if not result.final and attempt < s.max_attempts:
            delay = self.backoff(attempt, result.retry_after)
            retry_at = s.clock() + delay
        self._report(Attempt(delivery_id=d.id, task_id=d.task_id, config_id=d.config_id,
                             seq=d.seq, attempt=attempt, at=started,
                             outcome="dead" if retry_at is None else "retry",
                             status=result.status, error=error, retry_at=retry_at,
                             delay=delay, notification_id=nid))
        recorded = await self._record(
            self.store.delivery_failed(d.id, error=error, attempted_at=started,
                                       retry_at=retry_at), nid)
        if recorded and retry_at is None:
            log.warning("push: notification %s to config %s is dead after %d attempt(s): %s",
                        nid, d.config_id, attempt, error)

    async def _record(self, write: Coroutine[Any, Any, None], nid: str) -> bool:
        """The store's note of an attempt; False when the store is down, where the
        claim runs out and the delivery is taken again (a receiver that was sent it
        tells the repeat by its notification id)."""
        try:
            await write
        except StoreUnavailable as exc:
            log.warning("push: the store did not record the attempt at notification %s "
                        "(%s); it will be tried again", nid, exc)
            return False
        return True

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        s = self.settings
        delay = min(s.backoff_max, s.backoff_base * 2.0 ** (attempt - 1))
        delay *= 1.0 - s.jitter * s.random()
        if retry_after is not None:
            delay = max(delay, min(retry_after, s.backoff_max))
        return delay

    def _report(self, attempt: Attempt) -> None:
        if self.hooks.attempts:
            notify(self.hooks.attempts, attempt)
        hook = self.settings.on_attempt
        if hook is not None:
            try:
                hook(attempt)
            except Exception:
                log.exception("push: the on_attempt hook failed")
