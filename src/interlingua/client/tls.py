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

__all__ = ["CertLike", "ClientKeyEncrypted", "ClientKeyMissing", "ssl_context", "tls_context"]

#: a PEM with key and certificate, or (certificate, key[, password])
CertLike = str | tuple[str, str] | tuple[str, str, str]


class ClientKeyEncrypted(ClientError):
    """The client certificate's key is encrypted and no password was given for it;
    ``key_file`` is the file that holds the key."""

    def __init__(self, message: str, key_file: str) -> None:
        super().__init__(message)
        self.key_file = key_file


class ClientKeyMissing(ClientError):
    """The file meant to hold the client certificate's private key holds none;
    ``key_file`` is that file."""

    def __init__(self, message: str, key_file: str) -> None:
        super().__init__(message)
        self.key_file = key_file


class _AskedForAPassPhrase(Exception):
    """OpenSSL asked for the pass phrase of an encrypted key."""


def _no_pass_phrase() -> str:
    # without a password callback OpenSSL prompts on the terminal (and blocks there,
    # or fails with EINVAL when there is none): an encrypted key is said instead
    raise _AskedForAPassPhrase


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
        _load_cert(ctx, cert)
    return ctx


def _load_cert(ctx: ssl.SSLContext, cert: CertLike) -> None:
    """Load ``cert`` into ``ctx``: never a pass-phrase prompt, and a key that is
    encrypted or absent said as such (OpenSSL says "PEM lib")."""
    chain, key, password = (cert, None, None) if isinstance(cert, str) else (
        cert[0], cert[1], cert[2] if len(cert) > 2 else None)
    key_file = key or chain
    try:
        ctx.load_cert_chain(chain, key, password=password or _no_pass_phrase)
    except _AskedForAPassPhrase:
        raise ClientKeyEncrypted(
            f"cannot load the client certificate: the key in {key_file} is encrypted; "
            f"give it decrypted (openssl pkey -in {key_file} -out PLAIN_KEY)",
            key_file) from None
    except (OSError, ssl.SSLError) as exc:
        if isinstance(exc, ssl.SSLError) and _holds(chain, b"CERTIFICATE-----") \
                and not _holds(key_file, b"PRIVATE KEY-----"):
            raise ClientKeyMissing(
                f"cannot load the client certificate: {key_file} holds no private key",
                key_file) from None
        raise ClientError(f"cannot load the client certificate: {exc}") from None


def _holds(path: str, marker: bytes) -> bool:
    """Whether the PEM file at ``path`` has a block ending in ``marker`` (True when it
    cannot be read: then OpenSSL's own reason is the one to give)."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20)
    except OSError:
        return True
    return marker in text


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
