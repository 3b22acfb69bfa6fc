"""What a push notification's sender (``server/push``) and its receiver
(``client/push_receiver.py``) agree on: the headers of a notification and how
its signature is made."""

from __future__ import annotations

from joserfc import jws
from joserfc.registry import HeaderParameter

__all__ = [
    "ALGORITHMS",
    "JWS_REGISTRY",
    "NOTIFICATION_ID_HEADER",
    "SIGNATURE_HEADER",
    "SIGNATURE_TYPE",
    "SIGNING_EXTENSION_URI",
    "TOKEN_HEADER",
]

NOTIFICATION_ID_HEADER = "X-A2A-Notification-Id"
TOKEN_HEADER = "X-A2A-Notification-Token"
SIGNATURE_HEADER = "X-A2A-Signature"
SIGNATURE_TYPE = "a2a-push+jws"
ALGORITHMS = ("ES256", "RS256")
#: the card extension that says notifications are signed, and where the keys are
SIGNING_EXTENSION_URI = "https://interlingua.dev/ext/push-signing/v1"

#: JWS header parameters the signature uses beyond the registered ones
JWS_REGISTRY = jws.JWSRegistry(
    header_registry={
        "nid": HeaderParameter("A2A notification id", "str"),
        "iat": HeaderParameter("Issued at, seconds since the epoch", "int"),
    },
    algorithms=list(ALGORITHMS),
)
