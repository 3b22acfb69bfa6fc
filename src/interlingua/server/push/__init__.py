"""Push notifications: configs, a durable outbox, signed and SSRF-guarded delivery.

``service.py``      the push config calls and the engine's hooks
``dispatcher.py``   sends the store's outbox, with backoff, dead letters
``payloads.py``     webhook bodies per dialect
``headers.py``      idempotency id, token, Authorization, content type
``../keyring.py``   signing keys, detached JWS (``../jwks.py``: the JWKS)
``ssrf.py``         which URLs and addresses may be called, checked at connect time
``sender.py``       one POST through the guard, redirects by hand
(the receiving side, a verifying webhook app, is the client's:
``client/push_receiver.py``; ``Receiver`` is re-exported here)
``admin.py``        dead letters, redrive and key rotation, for the CLI
"""

from __future__ import annotations

from ...client.push_receiver import PushEvent, Receiver, register_receiver
from ..jwks import JWKS_PATH
from ..keyring import SIGNATURE_HEADER, KeyRing
from .dispatcher import Dispatcher
from .headers import NOTIFICATION_ID_HEADER, TOKEN_HEADER
from .service import SIGNING_EXTENSION_URI, PushService
from .settings import Attempt, PushSettings
from .ssrf import Refused, UrlGuard

__all__ = [
    "JWKS_PATH",
    "NOTIFICATION_ID_HEADER",
    "SIGNATURE_HEADER",
    "SIGNING_EXTENSION_URI",
    "TOKEN_HEADER",
    "Attempt",
    "Dispatcher",
    "KeyRing",
    "PushEvent",
    "PushService",
    "PushSettings",
    "Receiver",
    "Refused",
    "UrlGuard",
    "register_receiver",
]
