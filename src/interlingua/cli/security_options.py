"""Command-line options for TLS, client certificates, signed cards and server security.

Client-side options are stored in the click context (``ctx.meta``) rather
than passed to every command, so each command keeps its own signature:
``client_kwargs()`` turns them into ``Client`` keyword arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..client import CardVerifier
from ..client.errors import ClientError
from ..client.tls import ClientKeyEncrypted, ClientKeyMissing, tls_context

__all__ = [
    "card_verify_options",
    "client_kwargs",
    "insecure_interfaces_option",
    "load_object",
    "serve_security_options",
    "tls_client_options",
    "usable_binding",
]

F = TypeVar("F", bound=Callable[..., Any])

_META = "interlingua.client_tls"


def _remember(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None and value != ():
            ctx.meta.setdefault(_META, {})[name] = value
        return value

    return callback


_FILE = click.Path(exists=True, dir_okay=False, path_type=str)


def tls_client_options(f: F) -> F:
    """``--ca-bundle``, ``--client-cert``, ``--client-key`` (kept in the context)."""
    options = [
        click.option("--ca-bundle", type=_FILE, default=None, expose_value=False,
                     callback=_remember("ca_bundle"), metavar="PEM",
                     help="Trust the certificates in this CA bundle instead of the system's."),
        click.option("--client-cert", type=_FILE, default=None, expose_value=False,
                     callback=_remember("client_cert"), metavar="PEM",
                     help="Present this client certificate (mutual TLS)."),
        click.option("--client-key", type=_FILE, default=None, expose_value=False,
                     callback=_remember("client_key"), metavar="PEM",
                     help="The private key of --client-cert, if not in the same file."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def insecure_interfaces_option(f: F) -> F:
    """``--allow-insecure-interfaces`` for commands that read an agent's card."""
    return click.option(
        "--allow-insecure-interfaces", is_flag=True, expose_value=False,
        callback=_remember("allow_insecure_interfaces"),
        help="Send to the interfaces a card read over HTTPS names on plain HTTP (or gRPC "
             "without TLS) on another host, whose traffic, credentials included, is not "
             "encrypted (default: passed over, or refused when the card names no other).",
    )(f)


def card_verify_options(f: F) -> F:
    """``--verify``, ``--jwks URL``, ``--key FILE`` for commands that read a card."""
    options = [
        click.option("--verify", "verify_card", is_flag=True, expose_value=False,
                     callback=_remember("verify_card"),
                     help="Refuse the card unless one of its signatures verifies."),
        click.option("--jwks", default=None, expose_value=False, callback=_remember("jwks"),
                     metavar="URL", help="Verify with the keys at this JWKS URL "
                     "(default: /.well-known/jwks.json at the card's origin)."),
        click.option("--key", "keys", multiple=True, type=_FILE, expose_value=False,
                     callback=_remember("keys"), metavar="FILE",
                     help="Verify with this public key: a PEM, or a JWK in JSON (a JWKS "
                          "file: each of its keys) (repeatable); implies --verify."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def client_kwargs(insecure: bool) -> dict[str, Any]:
    """``Client`` keyword arguments from the options of the current command."""
    ctx = click.get_current_context(silent=True)
    meta: dict[str, Any] = ctx.meta.get(_META, {}) if ctx is not None else {}
    kwargs: dict[str, Any] = {}
    if insecure:
        kwargs["verify"] = False
    elif meta.get("ca_bundle"):
        kwargs["verify"] = meta["ca_bundle"]
    cert = meta.get("client_cert")
    if cert:
        key = meta.get("client_key")
        kwargs["cert"] = (cert, key) if key else cert
    elif meta.get("client_key"):
        raise click.UsageError("--client-key needs --client-cert")
    if "verify" in kwargs or "cert" in kwargs:
        # read now, as the mesh's commands read them: a file that is no PEM is the
        # option's fault, said before any connection (it was a traceback)
        try:
            tls_context(kwargs.get("verify", True), kwargs.get("cert"))
        except ClientKeyEncrypted as exc:
            raise click.UsageError(
                f"{_key_option(meta)} {exc.key_file}: the key is encrypted; the client takes "
                f"an unencrypted key (openssl pkey -in {exc.key_file} -out PLAIN_KEY, kept "
                "readable by you alone)") from None
        except ClientKeyMissing as exc:
            said = f"{_key_option(meta)} {exc.key_file} holds no private key"
            if not meta.get("client_key"):
                said += ": the private key is missing; give it with --client-key KEY"
            raise click.UsageError(said) from None
        except ClientError as exc:
            raise click.UsageError(str(exc)) from None
    if meta.get("allow_insecure_interfaces"):
        kwargs["allow_insecure_interfaces"] = True
    keys = meta.get("keys")
    if meta.get("verify_card") or keys or meta.get("jwks"):
        pems = [_pem_text(p) for p in keys] if keys else None
        try:
            kwargs["card_verifier"] = CardVerifier(keys=pems, jwks_url=meta.get("jwks"))
        except ValueError as exc:
            hint = "'--jwks'" if str(exc).startswith("jwks_url") else "'--key'"
            raise click.BadParameter(str(exc), param_hint=hint) from None
    return kwargs


def _key_option(meta: dict[str, Any]) -> str:
    """The option that named the client certificate's key file."""
    return "--client-key" if meta.get("client_key") else "--client-cert"


def _pem_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise click.BadParameter(f"{path} is not a PEM file (text) nor a JWK in JSON; a DER "
                                 "key is binary: convert it with openssl",
                                 param_hint="'--key'") from None
    except OSError as exc:
        raise click.BadParameter(f"cannot read {path}: {exc.strerror or exc}",
                                 param_hint="'--key'") from None


def load_object(spec: str, what: str) -> Any:
    """``FILE_OR_MODULE:ATTR`` -> that attribute (for ``--auth``, ``--limits``)."""
    import inspect

    from .serve import LoadError, built, load_module

    target, sep, attr = spec.partition(":")
    if not sep or not attr:
        raise LoadError(f"{what} must be given as FILE_OR_MODULE:ATTR, not {spec!r}")
    module = load_module(target)
    obj = getattr(module, attr, None)
    if obj is None:
        raise LoadError(f"{target} has no attribute {attr!r}")
    # a function builds it (so secrets can be read from the environment at start)
    return built(obj, spec) if inspect.isfunction(obj) else obj


def serve_security_options(f: F) -> F:
    """TLS and security options of ``interlingua serve``."""
    options = [
        click.option("--certfile", type=_FILE, default=None, metavar="PEM",
                     help="Serve HTTPS with this certificate (chain)."),
        click.option("--keyfile", type=_FILE, default=None, metavar="PEM",
                     help="The private key of --certfile."),
        click.option("--client-ca", type=_FILE, default=None, metavar="PEM",
                     help="Ask clients for certificates signed by this CA (mutual TLS)."),
        click.option("--auth", "auth_spec", default=None, metavar="FILE_OR_MODULE:ATTR",
                     help="An AuthConfig (or a function returning one) saying which "
                          "credentials are accepted; the card declares the same."),
        click.option("--limits", "limits_spec", default=None, metavar="FILE_OR_MODULE:ATTR",
                     help="A Limits object (rate limit, executor cap, timeouts ...)."),
        click.option("--sign-card", is_flag=True,
                     help="Sign the agent card (ES256); the public key is published at "
                          "/.well-known/jwks.json."),
        click.option("--card-key", type=click.Path(dir_okay=False, path_type=str), default=None,
                     metavar="PATH", help="Keep the card signing key in this file "
                                          "(made on first start); implies --sign-card."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def usable_binding(binding: str | None, dialect: str | None) -> None:
    """``--binding`` with ``--dialect`` as a client command takes them: an impossible
    pair, or gRPC without its extra, is a usage error."""
    from ..client.bindings import GRPC_MISSING, check_binding

    try:
        spec = check_binding(binding, dialect)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if spec is not None and not spec.available():
        raise click.UsageError(GRPC_MISSING)
