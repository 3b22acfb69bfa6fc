"""Security of an agent server: authentication, authorization, limits, signed cards, TLS.

One ``AuthConfig`` says which credentials the server accepts; the card's
security declarations are written from it, so they cannot disagree with
what is enforced. See docs/security.md.
"""

from __future__ import annotations

from ..cards.signer import CardSigner, CardSigning
from ..turns import ExecutorTimeout
from .config import AuthConfig, Operation, Policy, allow_owner
from .hashing import hash_secret, verify_secret
from .jwt import BearerAuth
from .limits import Limits, RateLimit, RateLimited, RateLimiter
from .principal import ANONYMOUS, Principal
from .runtime import AuthenticatedRequest, Forbidden, Security, Unauthenticated, identity_of
from .schemes import APIKeyAuth, Authenticator, BasicAuth, MutualTLSAuth, Presented
from .tls import ClientCertificate, client_certificate, tls_protocol_class, uvicorn_tls_options

__all__ = [
    "ANONYMOUS",
    "APIKeyAuth",
    "AuthConfig",
    "AuthenticatedRequest",
    "Authenticator",
    "BasicAuth",
    "BearerAuth",
    "CardSigner",
    "CardSigning",
    "ClientCertificate",
    "ExecutorTimeout",
    "Forbidden",
    "Limits",
    "MutualTLSAuth",
    "Operation",
    "Policy",
    "Presented",
    "Principal",
    "RateLimit",
    "RateLimited",
    "RateLimiter",
    "Security",
    "Unauthenticated",
    "allow_owner",
    "client_certificate",
    "hash_secret",
    "identity_of",
    "tls_protocol_class",
    "uvicorn_tls_options",
    "verify_secret",
]
