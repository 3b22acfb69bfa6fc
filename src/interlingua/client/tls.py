"""TLS options of the client: which servers to trust, which certificate to present.

``tls_context(verify, cert)`` turns the ``verify`` / ``cert`` options into
what httpx takes: certificates are verified by default (the system's CA
bundle via certifi), a CA bundle path replaces it, ``False`` turns checking
off, and ``cert`` (a PEM holding key and certificate, or a (cert, key) pair)
is presented for mutual TLS.
"""

from __future__ import annotations

import ssl

from .errors import ClientError

__all__ = ["CertLike", "ssl_context", "tls_context"]

#: a PEM with key and certificate, or (certificate, key[, password])
CertLike = str | tuple[str, str] | tuple[str, str, str]



def tls_context(verify: bool | str | ssl.SSLContext = True,
                cert: CertLike | None = None) -> bool | ssl.SSLContext:
    """What to give httpx for ``verify`` (a path becomes a context, as httpx now wants)."""
    if isinstance(verify, ssl.SSLContext):
        ctx = verify
    elif verify is False:
        if cert is None:
            return False
        ctx = _unchecked()
    elif isinstance(verify, str):
        try:
            ctx = ssl.create_default_context(cafile=verify)
        except (OSError, ssl.SSLError) as exc:
            raise ClientError(f"cannot read the CA bundle {verify}: {exc}") from None
    else:
        if cert is None:
            return True
        import certifi

        ctx = ssl.create_default_context(cafile=certifi.where())
    if cert is not None:
        try:
            if isinstance(cert, str):
                ctx.load_cert_chain(cert)
            else:
                ctx.load_cert_chain(*cert)
        except (OSError, ssl.SSLError) as exc:
            raise ClientError(f"cannot load the client certificate: {exc}") from None
    return ctx


def ssl_context(verify: bool | str | ssl.SSLContext = True,
                cert: CertLike | None = None) -> ssl.SSLContext:
    """``tls_context``'s answer as a context in every case (an MQTT connection takes
    no ``True``/``False``): the system's CAs for ``True``, no checks for ``False``."""
    made = tls_context(verify, cert)
    if made is True:
        return ssl.create_default_context()
    if made is False:
        return _unchecked()
    return made


def _unchecked() -> ssl.SSLContext:
    """A client context that checks neither the certificate nor the host name."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx
