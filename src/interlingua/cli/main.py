"""The ``interlingua`` command: serve an agent, or talk to any A2A agent.

Exit codes: 0 done; 1 the agent answered with an error (or an invalid
answer); 2 bad usage (a port that is taken too, a file --save cannot write, a
call the dialect or binding spoken cannot carry);
3 the agent could not be reached (or did not answer in time); 4 the task
ended failed, rejected or canceled; 130 a client command interrupted (Ctrl-C: a server
command stopped with it exits 0).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar
from urllib.parse import urlsplit

import click
import msgspec

from .. import __version__
from ..client import (
    AgentUnreachable,
    Client,
    ClientError,
    DialectMismatch,
    Endpoint,
    StreamEvent,
    StreamInterrupted,
    StreamTimeout,
    TaskNotSettled,
)
from ..client.bindings import BINDINGS
from ..client.card import interface_of
from ..client.client import make_message
from ..clients import AnyClient, client_for
from ..core.calls import SendMessage
from ..core.dialects import V1_CODECS, get_codec
from ..core.errors import A2AError, TaskNotFound
from ..core.lifecycle import LISTABLE_STATES, RETURN_STATES
from ..core.model import (
    TERMINAL_STATES,
    DataPart,
    FilePart,
    Message,
    Part,
    PushConfig,
    StatusUpdate,
    Task,
    TaskState,
    TextPart,
)
from ..core.parts import data_part
from ..core.urls import http_url
from ..mesh import mesh_name
from ..mesh.profiles import profile_of
from ..server.agent import Agent
from ..stores import shown_url
from ..tools import send_within
from . import output
from .answered_hosts import allow_host_option, allow_origin_option, answered_hosts
from .db_commands import db_group
from .errors import cannot_listen, fail, file_in_the_way, json_errors, say_error
from .follow import follow_task
from .headers import parse_headers
from .inspect_command import inspect_command
from .mcp_command import mcp_command
from .mesh_commands import gateway_command, mesh_group
from .mesh_options import mesh_serve_options, mesh_settings
from .push_commands import listen_command, push_group
from .safe_text import one_line
from .seconds import Seconds
from .security_options import (
    card_verify_options,
    client_kwargs,
    insecure_interfaces_option,
    load_object,
    serve_security_options,
    tls_client_options,
    usable_binding,
)
from .serve import (
    ListenError,
    LoadError,
    ServeSettings,
    StoreError,
    host_port,
    load_agent,
    public_url_for,
    serve,
)
from .stores import store_problem
from .subscription import to_where_it_stands
from .urls import check_agent_url, check_http_url

if TYPE_CHECKING:
    from ..server.push import PushSettings

__all__ = ["EXIT_A2A_ERROR", "EXIT_OK", "EXIT_TASK_UNSUCCESSFUL", "EXIT_UNREACHABLE",
           "EXIT_USAGE", "main"]

EXIT_OK = 0
EXIT_A2A_ERROR = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_TASK_UNSUCCESSFUL = 4

#: states a task may end in that mean it did not do what was asked
_UNSUCCESSFUL = frozenset({TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED})

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


# ------------------------------------------------------------------ helpers


class _Text(click.ParamType):  # type: ignore[type-arg]
    """Text sent to an agent: UTF-8, which the wire carries. A byte of the command
    line that is not UTF-8 reaches Python as a lone surrogate (surrogateescape)."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError as exc:
                code = ord(value[exc.start])
                what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF \
                    else f"U+{code:04X}"
                self.fail(f"is not UTF-8 text ({what} at position {exc.start}); check the "
                          "terminal's or the shell's encoding", param, ctx)
        return value


TEXT = _Text()


def _keep_binding(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    # read by _run: kept out of every command's signature
    ctx.meta["interlingua.binding"] = value


def _client_options(f: F) -> F:
    """Options every command that talks to an agent takes."""
    options = [
        click.option("--json", "as_json", is_flag=True, help="Print the agent's raw JSON answer."),
        click.option(
            "--dialect",
            type=click.Choice(["1.1", "1.0", "0.3", "0.1"]),
            default=None,
            help="Speak this A2A dialect to URL as an endpoint (JSON-RPC unless --binding "
                 "says otherwise), without reading the card.",
        ),
        click.option(
            "--binding",
            type=click.Choice(list(BINDINGS)),
            default=None,
            expose_value=False,
            callback=_keep_binding,
            is_eager=True,  # read before URL, which a bare HOST:PORT is only for gRPC
            help="Use this binding only (default: the card's choice; JSON-RPC with --dialect). "
                 "With grpc, URL may be a bare HOST:PORT (plain text).",
        ),
        click.option(
            "-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
            help="An HTTP header to send (repeatable), e.g. for authentication.",
        ),
        click.option(
            "--timeout", type=Seconds(min=0, min_open=True), default=60.0,
            show_default=True, help="Seconds to wait for an answer.",
        ),
        click.option("--insecure", is_flag=True, help="Do not verify TLS certificates."),
    ]
    for option in reversed(options):
        f = option(f)
    return tls_client_options(insecure_interfaces_option(f))


def _fail(message: str, code: int, *, as_json: bool, error_code: int | None = None,
          error_message: str | None = None, data: Any = None) -> NoReturn:
    """Exit with ``code`` after one line on stderr (and, with --json, the error as JSON)."""
    fail(message, code, as_json=as_json, code=error_code, json_message=error_message,
         data=data)


def _exit(message: str, code: int) -> NoReturn:
    fail(message, code)


def _run(
    url: str,
    *,
    dialect: str | None,
    headers: tuple[str, ...],
    timeout: float,
    insecure: bool,
    as_json: bool,
    work: Callable[[AnyClient], Awaitable[T]],
    on_interrupt: Callable[[], str | None] | None = None,
) -> T:
    """Open a client for ``url``, run ``work`` with it, and turn failures into exits.
    ``on_interrupt`` says what to run to pick up where Ctrl-C left off."""
    parsed_headers = parse_headers(headers)
    # TLS trust, client certificate, card verification
    security = client_kwargs(insecure)
    binding = click.get_current_context().meta.get("interlingua.binding")
    usable_binding(binding, dialect)

    async def go() -> T:
        try:
            opened = client_for(url, dialect=dialect, binding=binding, headers=parsed_headers,
                                timeout=timeout, **security)
        except ValueError as exc:  # what the address allows (a gRPC one, gRPC alone)
            raise click.UsageError(str(exc)) from None
        async with opened as client:
            try:
                return await work(client)
            except A2AError as exc:
                # the code as this dialect spells it (an unknown code is kept as sent)
                code = get_codec(client.dialect or "1.0").code_of(exc)
                _fail(f"{type(exc).__name__} ({code}): {exc.message}", EXIT_A2A_ERROR,
                      as_json=as_json, error_code=code, error_message=exc.message,
                      data=exc.data)
            except AgentUnreachable as exc:
                # a stream cut for good: where to pick it up, as after Ctrl-C
                hint = on_interrupt() if isinstance(exc, StreamInterrupted) \
                    and on_interrupt is not None else None
                _fail(f"{exc}; {hint}" if hint else str(exc), EXIT_UNREACHABLE,
                      as_json=as_json)
            except DialectMismatch as exc:
                # refused here, before anything was sent: what the dialect or binding
                # spoken cannot carry is the command's asking, as a bad --binding is
                _fail(str(exc), EXIT_USAGE, as_json=as_json)
            except ClientError as exc:
                _fail(str(exc), EXIT_A2A_ERROR, as_json=as_json)

    try:
        return asyncio.run(go())
    except KeyboardInterrupt:
        hint = on_interrupt() if on_interrupt is not None else None
        _exit(f"interrupted; {hint}" if hint else "interrupted", 130)
    except OSError as exc:  # a socket error the transport did not map (a bad address)
        _fail(f"cannot reach {url}: {exc}", EXIT_UNREACHABLE, as_json=as_json)


def _print_raw(raw: bytes | None) -> None:
    click.echo(output.format_json(raw if raw is not None else b"null"))


# ------------------------------------------------------------------- commands


class _Group(click.Group):
    """click's group, with usage errors on one line (``error: …``) like every other error."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        extra["windows_expand_args"] = windows_expand_args
        # (read before click parses it: its own errors are said as JSON too)
        with json_errors(sys.argv[1:] if args is None else args):
            if not standalone_mode:
                return super().main(args, prog_name, complete_var, standalone_mode=False,
                                    **extra)
            try:
                code = super().main(args, prog_name, complete_var, standalone_mode=False,
                                    **extra)
            except click.exceptions.NoArgsIsHelpError as exc:
                exc.show()  # the help text itself
                sys.exit(EXIT_USAGE)
            except click.UsageError as exc:
                hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
                say_error(exc.format_message() + hint, json_message=exc.format_message())
                sys.exit(EXIT_USAGE)
            except click.ClickException as exc:
                # one form for every error line: "error: …", as _exit and usage errors write
                say_error(exc.format_message())
                sys.exit(exc.exit_code)
            except click.Abort:
                say_error("aborted")
                sys.exit(130)
        sys.exit(code if isinstance(code, int) else EXIT_OK)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="interlingua")
def main() -> None:
    """Serve A2A agents and talk to any of them, whichever A2A version they speak."""
    # gRPC's C core logs at INFO to stderr (a failed TLS handshake, say) before the
    # command's own one-line error: its errors alone, unless the user asks for more.
    # (Read when grpc is first imported, which no command has done yet.)
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


@main.command("serve")
@click.argument("specs", metavar="[FILE_OR_MODULE[:ATTR]]...", nargs=-1)
@click.option("--openai-model", default=None, metavar="NAME",
              help="Instead of a file: serve a chat agent backed by this model on an "
                   "OpenAI-compatible server (needs interlingua[openai]).")
@click.option("--openai-base-url", default=None, callback=check_http_url, metavar="URL",
              help="The model server's API root, e.g. http://localhost:11434/v1 "
                   "[default: OPENAI_BASE_URL, else the OpenAI API; key from OPENAI_API_KEY].")
@click.option("--openai-timeout", type=Seconds(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="How long the model server may stay silent (before the first token, or "
                   "between two) before the try fails; tried 3 times [default: 120].")
@click.option("--system", "system_prompt", default=None, metavar="PROMPT",
              help="The chat agent's system prompt.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--store", default=None,
              help="Where tasks are kept: sqlite:///PATH, postgresql://USER@HOST/DB or memory:// "
                   "[default: sqlite:///.interlingua/<agent-name>.db].")
@click.option("--bus", default="local://", show_default=True, metavar="URL",
              help="How readers hear of new events: local:// (this process) or "
                   "redis://HOST:PORT/DB (replicas sharing a postgresql:// store).")
@click.option("--public-url", default=None, callback=check_http_url,
              help="The base URL clients reach this server at (used in the card).")
@click.option("--rpc-path", default="/", show_default=True, help="Where JSON-RPC is served.")
@allow_host_option
@allow_origin_option
@click.option("--grpc-port", type=click.IntRange(0, 65535), default=None,
              help="Serve gRPC (interlingua[grpc]) on this port; 0: a free port [default: "
                   "no gRPC].")
@click.option("--bindings", "bindings_spec", default=None, metavar="LIST",
              help="Comma-separated bindings to serve: jsonrpc,rest,grpc (jsonrpc is always "
                   "served; grpc needs --grpc-port) [default: jsonrpc,rest, and grpc with "
                   "--grpc-port].")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug", "trace"]))
@click.option("--json", "as_json", is_flag=True, help="Print where it listens as JSON.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text",
              show_default=True,
              help="json: every log line one JSON object, with the task, context and trace "
                   "ids where known.")
@click.option("--metrics", "with_metrics", is_flag=True,
              help="Serve Prometheus metrics at /metrics.")
@click.option("--otel", is_flag=True,
              help="Trace with OpenTelemetry's SDK (interlingua[otel]): spans go to an OTLP "
                   "collector (OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318), "
                   "or to stdout with --otel-exporter console.")
@click.option("--otel-exporter", type=click.Choice(["auto", "otlp", "console"]),
              default=None, show_default="auto",
              help="Where --otel sends spans (auto: OTLP when its exporter is installed).")
@serve_security_options
@click.option("--push-allow-http", is_flag=True,
              help="Accept http:// webhook URLs (development only: tokens travel in clear).")
@click.option("--push-allow-private", is_flag=True,
              help="Accept webhooks on loopback and private networks (development and tests).")
@click.option("--push-allow-host", "push_allow_hosts", multiple=True, metavar="HOST_OR_NET",
              help="A host, IP address or network (10.1.0.0/16) whose webhooks are always "
                   "accepted; may be repeated.")
@click.option("--push-signing-key", "push_signing_key", default=None, metavar="PEM_FILE",
              type=click.Path(exists=True, dir_okay=False),
              help="Sign push notifications with this private key (EC P-256 or RSA): give "
                   "every replica the same one, so that each serves the same JWKS.")
@click.option("--push-claim-seconds", type=Seconds(1, 86400), default=None,
              metavar="SECONDS",
              help="How long a claimed delivery is reserved: a replica that dies while "
                   "delivering leaves it to the others after this [default: 120].")
@click.option("--lease-timeout", type=Seconds(0.5, 3600), default=None,
              metavar="SECONDS",
              help="Seconds without a heartbeat after which another process on the same "
                   "store ends this one's running tasks [default: 10].")
@click.option("--submit-grace", type=Seconds(0, 3600), default=None,
              metavar="SECONDS",
              help="Seconds a new task's executor has to say something before the task is "
                   "written (and streamed) as submitted without it; 0 writes it before the "
                   "executor runs [default: 0.05].")
@click.option("--message-ids", type=click.Choice(["content", "strict"]), default="content",
              show_default=True,
              help="What a message id names: 'content', a message by its id and content (a "
                   "known id with other content is a new message); 'strict', one message "
                   "per id (other content under a known id is refused, -32602). Give every "
                   "replica of a store the same.")
@click.option("--long-poll-max-wait", type=Seconds(0, 3600), default=None,
              metavar="SECONDS",
              help="A2A 1.1 (draft): how long a GetTask with currentGeneration is held at "
                   "most before it is answered with the task as it is [default: 30].")
@click.option("--offer-1.1", "offer_1_1", is_flag=True, default=False,
              help="Name protocol version 1.1 (draft) on the card's v1.0 interfaces "
                   "(docs/versions.md). Requests asking for 1.1 are served 1.1 without it.")
@click.option("--max-head-bytes", type=click.IntRange(min=1024), default=64 * 1024,
              show_default=True, help="The largest request head accepted (else 431).")
@click.option("--head-timeout", type=Seconds(min=0, min_open=True), default=10.0,
              show_default=True, help="Seconds a client has to send a request head (else 408).")
@click.option("--body-timeout", type=Seconds(min=0, min_open=True), default=30.0,
              show_default=True, help="Seconds a client has to send a request body.")
@click.option("--max-connections-per-ip", type=click.IntRange(min=1), default=512,
              show_default=True, help="Open connections one client address may hold (else 503).")
@click.option("--max-batch-items", type=click.IntRange(min=1), default=100, show_default=True,
              help="Requests one JSON-RPC batch may hold (a larger batch is refused whole).")
@click.option("--max-answer-bytes", type=click.IntRange(min=1024), default=16 * 1024 * 1024,
              show_default=True,
              help="The largest answer written, a JSON-RPC batch's answers together (what "
                   "would pass it is an error naming the limit).")
@click.option("--http", "http_parser", type=click.Choice(["auto", "httptools", "h11"]),
              default="auto", show_default=True, help="uvicorn's HTTP/1.1 parser.")
@click.option("--drain-seconds", type=Seconds(0, 3600), default=30.0,
              show_default=True, metavar="SECONDS",
              help="On SIGTERM, how long running turns may finish while new sends are "
                   "refused (503) before the process stops; 0 stops at once.")
@mesh_serve_options
def serve_command(**options: Any) -> None:
    """Serve the agent defined in a Python file or module, or a chat model.

    Without :ATTR, the module's `agent` (or its only Agent) is served. With
    --openai-model instead of a file, a chat agent backed by that model.
    Several files serve several agents, each at /agents/NAME/ (listed at /agents).
    """
    # click hands over every option by name; they become one ServeSettings
    o = options
    specs: tuple[str, ...] = o["specs"]
    if len(specs) > 1:
        _serve_several(specs, o)
        return
    spec: str | None = specs[0] if specs else None
    if o["no_http"]:
        _no_http_alone(o)
    host: str = o["host"]
    port: int = o["port"]
    no_http: bool = o["no_http"]
    public_url: str | None = o["public_url"]
    certfile: str | None = o["certfile"]
    try:
        agent = _agent_to_serve(spec, o["openai_model"], o["openai_base_url"],
                                o["system_prompt"], o["openai_timeout"])
    except LoadError as exc:
        _exit(str(exc), EXIT_USAGE)
    scheme = "https" if certfile else "http"
    rpc_path: str = o["rpc_path"]
    path = rpc_path if rpc_path.startswith("/") else "/" + rpc_path
    settings = _serve_settings(o)
    traces = _traces(agent, o)
    bindings = _bindings_to_serve(o["bindings_spec"], o["grpc_port"])
    grpc_at: list[int] = []
    mesh = mesh_settings(o["mesh_url"], o["namespace"], no_http, o["mesh_agent_name"],
                         o["mesh_instance"], o["mesh_group"], o["mesh_session_expiry"],
                         o["mesh_card_interval"], o["mesh_profile"], o["org"], o["unit"],
                         tls={"ca_bundle": o["mesh_ca_bundle"],
                              "client_cert": o["mesh_client_cert"],
                              "client_key": o["mesh_client_key"],
                              "insecure": o["mesh_insecure"]})
    on_mesh = o["mesh_agent_name"] or mesh_name(agent.name)

    def listening(store_url: str, bound_port: int) -> None:
        # said only once the socket is bound: a process that cannot listen says so instead
        _check_store(store_url)
        info: dict[str, Any] = {}
        base = (public_url or public_url_for(host, bound_port, scheme)).rstrip("/")
        if not no_http:
            info.update({
                "listen": f"{scheme}://{host_port(host, bound_port)}",
                "card": base + "/.well-known/agent-card.json",
                "jsonrpc": base + path,
            })
            if "rest" in bindings:
                info["rest"] = base + "/"
        info["store"] = shown_url(store_url)
        if grpc_at:
            info["grpc"] = host_port(urlsplit(base).hostname or "", grpc_at[0])
        off = _bindings_off(bindings) if not no_http else {}
        if off:
            info["off"] = off
        if mesh is not None:
            info["mesh"] = mesh.broker_url().broker
            profile = profile_of(mesh)
            info["request_topic"] = profile.request_topic(mesh, on_mesh)
            # the agent's own URL, as send, stream and Client(...) take it
            info["mesh_url"] = profile.address(mesh, on_mesh)
        if traces is not None:
            info["traces"] = {"exporter": traces.exporter, "endpoint": traces.endpoint}
        warnings = [NO_SKILLS] if not agent.skills else []
        warnings += _push_warnings(settings.push)
        if warnings:
            info["warnings"] = warnings
        if o["as_json"] or o["log_format"] == "json":  # a JSON log stream gets a JSON banner
            click.echo(msgspec.json.encode(info).decode())
            return
        where = info.get("listen", info.get("mesh_url"))
        click.echo(f"Serving {spec or agent.name} on {where} (store {info['store']})")
        if not no_http:
            click.echo(f"  agent card: {info['card']}")
            click.echo(f"  JSON-RPC:   {info['jsonrpc']}")
            if "rest" in info:
                click.echo(f"  HTTP+JSON:  {info['rest']}  (v0.3 under {info['rest']}v1/)")
        if grpc_at:
            click.echo(f"  gRPC:       {'grpcs' if certfile else 'grpc'}://{info['grpc']}")
        for name, why in off.items():
            click.echo(f"  {_BINDING_NAMES[name] + ':':<11} off: {why}")
        if mesh is not None:
            click.echo(f"  mesh:       {info['mesh_url']}  (requests on {info['request_topic']})")
        if traces is not None:
            click.echo(f"  traces:     {traces.shown}")
        for warning in info.get("warnings", ()):
            click.echo(f"  warning:    {warning}")

    try:
        serve(agent, settings.replace(on_listening=listening, bindings=bindings,
                                      on_grpc_listening=grpc_at.append, mesh=mesh))
    except ValueError as exc:  # a store URL no store understands, a config that leaks a secret
        _exit(str(exc), EXIT_USAGE)
    except ConnectionError as exc:  # the store's database or the bus cannot be reached
        _exit(str(exc), EXIT_UNREACHABLE)
    except StoreError as exc:  # a schema this version cannot use
        _exit(str(exc), EXIT_USAGE)
    except ListenError as exc:  # a port that is taken: name the option that chose it
        _exit(_cannot_listen(exc), EXIT_USAGE)
    except OSError as exc:  # the address cannot be listened on
        _exit(f"cannot listen on {host}:{port}: {exc.strerror or exc}", EXIT_USAGE)
    except KeyboardInterrupt:
        pass


def _cannot_listen(exc: ListenError) -> str:
    """The option at fault (--host, --port or --grpc-port), the address and why."""
    return cannot_listen(exc.host, exc.port, exc.cause,
                         port_flag="--grpc-port" if exc.binding == "grpc" else "--port")


def _no_http_alone(o: dict[str, Any]) -> None:
    """``--no-http`` with an option only an HTTP (or gRPC) port has: refused, as
    nothing would serve it (gRPC was not served, the metrics not either)."""
    source = click.get_current_context().get_parameter_source
    given = [flag for flag, key in (("--grpc-port", "grpc_port"), ("--bindings", "bindings_spec"),
                                    ("--metrics", "with_metrics"))
             if o[key] is not None and o[key] is not False]
    if source("port") is click.core.ParameterSource.COMMANDLINE:
        given.append("--port")
    if given:
        _exit(f"--no-http serves the agent on the mesh alone: {', '.join(given)} "
              "would have nothing to serve it", EXIT_USAGE)


def _serve_several(specs: Sequence[str], o: dict[str, Any]) -> None:
    """``serve a.py b.py``: each agent at /agents/NAME/, the listing at /agents."""
    from ..host.agents import PREFIX, path_name

    if o["openai_model"] or o["no_http"] or o["mesh_url"]:
        _exit("several agents are served over HTTP (and gRPC) only: --openai-model, "
              "--mesh and --no-http serve one", EXIT_USAGE)
    if o["openai_base_url"] or o["system_prompt"] or o["openai_timeout"] is not None:
        # as one agent's serve refuses them
        _exit(_OPENAI_ONLY, EXIT_USAGE)
    # the mesh's options without --mesh: refused as for one agent (raises UsageError)
    mesh_settings(None, o["namespace"], False, o["mesh_agent_name"], o["mesh_instance"],
                  o["mesh_group"], o["mesh_session_expiry"], o["mesh_card_interval"],
                  o["mesh_profile"], o["org"], o["unit"],
                  tls={"ca_bundle": o["mesh_ca_bundle"], "client_cert": o["mesh_client_cert"],
                       "client_key": o["mesh_client_key"], "insecure": o["mesh_insecure"]})
    try:
        agents = [load_agent(spec) for spec in specs]
    except LoadError as exc:
        _exit(str(exc), EXIT_USAGE)
    traces = _traces(None, o)
    bindings = _bindings_to_serve(o["bindings_spec"], o["grpc_port"])
    scheme = "https" if o["certfile"] else "http"
    grpc_at: list[int] = []

    settings = _serve_settings(o)

    def listening(stores: str, bound_port: int) -> None:
        for store in stores.split(", "):
            _check_store(store)
        base = (o["public_url"] or public_url_for(o["host"], bound_port, scheme)).rstrip("/")
        names = [path_name(a.name) for a in agents]
        info: dict[str, Any] = {
            "listen": f"{scheme}://{host_port(o['host'], bound_port)}",
            "agents": base + PREFIX.rstrip("/"),
            "served": {n: {"name": a.name, "url": f"{base}{PREFIX}{n}/",
                           "card": f"{base}{PREFIX}{n}/.well-known/agent-card.json"}
                       for n, a in zip(names, agents, strict=True)},
            "store": [shown_url(x) for x in stores.split(", ")]}
        warnings = _push_warnings(settings.push)
        if warnings:
            info["warnings"] = warnings
        if grpc_at:
            info["grpc"] = host_port(urlsplit(base).hostname or "", grpc_at[0])
        if traces is not None:
            info["traces"] = {"exporter": traces.exporter, "endpoint": traces.endpoint}
        if o["as_json"] or o["log_format"] == "json":
            click.echo(msgspec.json.encode(info).decode())
            return
        click.echo(f"Serving {len(agents)} agents on {info['listen']} (listed at "
                   f"{info['agents']})")
        for n, row in info["served"].items():
            click.echo(f"  {n}: {row['url']}  (store {shown_url(stores.split(', ')[names.index(n)])})")
        if grpc_at:
            click.echo(f"  gRPC:       {'grpcs' if o['certfile'] else 'grpc'}://{info['grpc']}  "
                       "(tenant: the agent's name above)")
        if traces is not None:
            click.echo(f"  traces:     {traces.shown}")
        for warning in warnings:
            click.echo(f"  warning:    {warning}")

    try:
        serve(agents, settings.replace(on_listening=listening, bindings=bindings,
                                       on_grpc_listening=grpc_at.append))
    except ValueError as exc:  # two agents with one name, a store URL no store understands
        _exit(str(exc), EXIT_USAGE)
    except ConnectionError as exc:
        _exit(str(exc), EXIT_UNREACHABLE)
    except StoreError as exc:
        _exit(str(exc), EXIT_USAGE)
    except ListenError as exc:
        _exit(_cannot_listen(exc), EXIT_USAGE)
    except OSError as exc:
        _exit(f"cannot listen on {host_port(o['host'], o['port'])}: {exc.strerror or exc}",
              EXIT_USAGE)
    except KeyboardInterrupt:
        pass


class _EncryptedKey(Exception):
    """A TLS key that asks for a pass phrase."""


def _check_key_files(o: dict[str, Any]) -> None:
    """The TLS files and the card's key file, read before anything is served: a file
    that is no PEM, or a key file that cannot be made, said naming its option (they
    were said as the port that could not be listened on)."""
    import ssl

    from ..server.keyring import KeyRing

    certfile, keyfile, client_ca = o["certfile"], o["keyfile"], o["client_ca"]

    def asked_for_a_pass_phrase() -> str:
        # an encrypted key: OpenSSL would prompt on the terminal (here, and again in
        # uvicorn), and gRPC cannot read it at all
        raise _EncryptedKey

    if certfile:
        try:
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
                certfile, keyfile, password=asked_for_a_pass_phrase)
        except _EncryptedKey:
            _exit(f"--keyfile {keyfile or certfile}: the key is encrypted; serve takes an "
                  "unencrypted key (openssl pkey -in KEY -out PLAIN_KEY), kept readable "
                  "by the server alone", EXIT_USAGE)
        except (OSError, ssl.SSLError) as exc:
            named = f"--certfile {certfile}" + (f" with --keyfile {keyfile}" if keyfile else "")
            _exit(f"{named}: no certificate and key can be read: {exc}", EXIT_USAGE)
    if client_ca:
        try:
            ssl.create_default_context().load_verify_locations(cafile=client_ca)
        except (OSError, ssl.SSLError) as exc:
            _exit(f"--client-ca {client_ca}: no CA certificate can be read: {exc}", EXIT_USAGE)
    if o["card_key"]:
        try:  # (made there when it is not there yet, as the server would)
            KeyRing(path=o["card_key"]).load()
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            blocked = file_in_the_way(Path(o["card_key"])) if isinstance(exc, OSError) else None
            _exit(f"--card-key {o['card_key']}: {blocked or reason}", EXIT_USAGE)


def _push_warnings(push: PushSettings | None) -> list[str]:
    """What the start-up lines warn of in the push settings: a claim that runs out
    before the webhook's timeout, which refusing would take from a test of a killed
    replica (the receiver sees the repeats, by their notification ids)."""
    if push is None or push.lease > push.timeout:
        return []
    return [f"--push-claim-seconds {push.lease:g} is not above the webhook timeout "
            f"({push.timeout:g} s): a delivery still in flight may be claimed and sent "
            "again by another replica"]


def _serve_settings(o: dict[str, Any]) -> ServeSettings:
    """``interlingua serve``'s options as the ``ServeSettings`` it serves with."""
    from ..server.auth import AuthConfig, CardSigning, Limits
    from ..server.connections import ConnectionLimits
    from ..server.push import PushSettings

    auth_spec, limits_spec = o["auth_spec"], o["limits_spec"]
    try:
        auth = load_object(auth_spec, "--auth") if auth_spec is not None else None
        limits = load_object(limits_spec, "--limits") if limits_spec is not None else None
    except LoadError as exc:
        _exit(str(exc), EXIT_USAGE)
    # (a function that gives None, say when a variable is unset, gives no security:
    # refused, not served open)
    if auth_spec is not None and not isinstance(auth, AuthConfig):
        _exit(f"--auth {auth_spec} is a {type(auth).__name__}, not an AuthConfig", EXIT_USAGE)
    if limits_spec is not None and not isinstance(limits, Limits):
        _exit(f"--limits {limits_spec} is a {type(limits).__name__}, not Limits", EXIT_USAGE)
    _check_key_files(o)
    card_key = o["card_key"]
    signing = CardSigning(key_path=card_key) if o["sign_card"] or card_key else None
    push = None
    push_signing_key = o["push_signing_key"]
    if o["push_allow_http"] or o["push_allow_private"] or o["push_allow_hosts"] \
            or push_signing_key or o["push_claim_seconds"]:
        pem = None
        if push_signing_key:
            from ..server.keyring import check_signing_pem

            try:
                pem = Path(push_signing_key).read_text(encoding="ascii")
                check_signing_pem(pem)
            except UnicodeDecodeError:
                _exit(f"--push-signing-key {push_signing_key}: not a PEM file (text); a DER "
                      "key is binary: convert it with openssl", EXIT_USAGE)
            except (ValueError, OSError) as exc:
                _exit(f"--push-signing-key {push_signing_key}: {exc}", EXIT_USAGE)
        claim = {"lease": o["push_claim_seconds"]} if o["push_claim_seconds"] else {}
        push = PushSettings(allow_http=o["push_allow_http"],
                            allow_private_networks=o["push_allow_private"],
                            allow_hosts=list(o["push_allow_hosts"]), signing_key_pem=pem,
                            **claim)
    public_url = o["public_url"]
    message_ids = o["message_ids"]
    return ServeSettings(
        host=o["host"], port=o["port"], store=o["store"], bus=o["bus"],
        public_url=public_url.rstrip("/") if public_url else None,
        rpc_path=o["rpc_path"], log_level=o["log_level"], certfile=o["certfile"],
        keyfile=o["keyfile"], client_ca=o["client_ca"], auth=auth, limits=limits,
        card_signing=signing, push=push, lease_timeout=o["lease_timeout"],
        submit_grace=o["submit_grace"],
        message_ids=None if message_ids == "content" else message_ids,
        drain_seconds=o["drain_seconds"], http=o["http_parser"], grpc_port=o["grpc_port"],
        connections=ConnectionLimits(max_head_bytes=o["max_head_bytes"],
                                     head_timeout=o["head_timeout"],
                                     body_timeout=o["body_timeout"],
                                     max_per_ip=o["max_connections_per_ip"]),
        mesh_agent_name=o["mesh_agent_name"], no_http=o["no_http"],
        metrics=o["with_metrics"], log_format=o["log_format"],
        max_batch_items=o["max_batch_items"], max_answer_bytes=o["max_answer_bytes"],
        long_poll_max_wait=o["long_poll_max_wait"], offer_1_1=o["offer_1_1"],
        allowed_origins=o["allowed_origins"],
        allowed_hosts=answered_hosts(o["host"], public_url, o["allowed_hosts"]))



def _traces(agent: Agent | None, o: dict[str, Any]) -> Any:
    """OpenTelemetry's SDK set up as ``--otel`` asks (None: not asked for); the service
    named after the agent (several agents: ``interlingua``)."""
    if not o["otel"]:
        if o["otel_exporter"] is not None:  # refused as every option that goes with another
            _exit("--otel-exporter goes with --otel", EXIT_USAGE)
        return None
    from ..observability.tracing import configure_sdk

    try:
        return configure_sdk(service_name=agent.name if agent is not None else "interlingua",
                             exporter=o["otel_exporter"] or "auto")
    except (RuntimeError, ValueError) as exc:  # no SDK; a bad OTEL_* value
        _exit(str(exc), EXIT_USAGE)


#: the bindings as the banner names them
_BINDING_NAMES = {"jsonrpc": "JSON-RPC", "rest": "HTTP+JSON", "grpc": "gRPC"}
#: said at start-up when the agent declares no skill (the card lists a default one)
NO_SKILLS = ("the agent declares no skills: its card lists one made from its name and "
             "description; declare them with Agent(..., skills=[AgentSkill(id=..., "
             "name=..., description=..., tags=[...])])")


def _bindings_to_serve(spec: str | None, grpc_port: int | None) -> list[str]:
    """``--bindings`` and ``--grpc-port`` as a list of bindings: gRPC only when
    asked for, and then with a port, so that no port is taken unasked."""
    if spec is None:
        return ["jsonrpc", "rest"] + (["grpc"] if grpc_port is not None else [])
    bindings = [b.strip().lower() for b in spec.split(",") if b.strip()]
    if "grpc" in bindings and grpc_port is None:
        _exit("--bindings grpc needs --grpc-port PORT (0: any free port)", EXIT_USAGE)
    if "grpc" not in bindings and grpc_port is not None:
        _exit(f"--grpc-port serves gRPC, which --bindings {spec} leaves out", EXIT_USAGE)
    return bindings


def _bindings_off(bindings: Sequence[str]) -> dict[str, str]:
    """The bindings not served, each with what would serve it."""
    from ..bindings.grpc import INSTALL, available

    off: dict[str, str] = {}
    if "rest" not in bindings:
        off["rest"] = "not in --bindings"
    if "grpc" not in bindings:
        off["grpc"] = ("--grpc-port PORT serves it" if available()
                       else f"needs the grpc extra: {INSTALL}")
    return off


def _check_store(store: str) -> None:
    """Exit with one line when an SQLite store cannot be opened where its URL says (a
    folder that is a file, no permission), before the server starts."""
    problem = store_problem(store)
    if problem is not None:
        _exit(problem, EXIT_USAGE)


#: the options that only a chat model's serve takes
_OPENAI_ONLY = "--openai-base-url, --openai-timeout and --system go with --openai-model"


def _agent_to_serve(spec: str | None, openai_model: str | None, openai_base_url: str | None,
                    system_prompt: str | None, openai_timeout: float | None = None) -> Agent:
    if openai_model is None:
        if spec is None:
            _exit("name an agent (FILE_OR_MODULE[:ATTR]) or a model (--openai-model NAME)",
                  EXIT_USAGE)
        if openai_base_url or system_prompt or openai_timeout is not None:
            _exit(_OPENAI_ONLY, EXIT_USAGE)
        return load_agent(spec)
    if spec is not None:
        _exit(f"serve either {spec} or --openai-model {openai_model}, not both", EXIT_USAGE)
    try:
        from ..adapters.openai import DEFAULT_TIMEOUT, chat_agent
    except ImportError as exc:
        _exit(str(exc), EXIT_USAGE)
    from_env = os.environ.get("OPENAI_BASE_URL")
    if openai_base_url is None and from_env:
        try:  # the option's default, held to the option's rule
            http_url(from_env)
        except ValueError as exc:
            _exit(f"OPENAI_BASE_URL {from_env!r} {exc}", EXIT_USAGE)
    try:
        return chat_agent(openai_model, base_url=openai_base_url, system=system_prompt,
                          timeout=DEFAULT_TIMEOUT if openai_timeout is None else openai_timeout)
    except ValueError as exc:
        _exit(f"--openai-model: {exc}", EXIT_USAGE)


def _older_readers(document: bytes | None) -> list[str]:
    """Generations the card document also serves besides its interfaces: a card
    that carries v0.1's ``authentication`` member is meant for v0.1 readers too."""
    if not document:
        return []
    try:
        doc = msgspec.json.decode(document)
    except msgspec.DecodeError:
        return []
    return ["0.1"] if isinstance(doc, dict) and "authentication" in doc else []


@main.command("card")
@click.argument("url", callback=check_agent_url)
@_client_options
@card_verify_options
def card_command(url: str, as_json: bool, dialect: str | None, headers: tuple[str, ...],
                 timeout: float, insecure: bool) -> None:
    """Show an agent's card: what it does and which dialects it speaks.

    A gRPC address (grpc://HOST:PORT) has no well-known card: the card is asked
    for over gRPC (v0.3's GetAgentCard; with --dialect 1.0, the extended card)."""
    if url.startswith(("grpc://", "grpcs://")):
        _card_over_grpc(url, as_json=as_json, dialect=dialect, headers=headers,
                        timeout=timeout, insecure=insecure)
        return

    async def work(client: AnyClient) -> None:
        card = await client.get_card()
        if as_json:
            _print_raw(client.card_document)
        else:
            used = await _used_endpoint(client)
            output.print_card(output.console(), card, endpoints=client.endpoints,
                              card_url=client.card_url,
                              also=_older_readers(client.card_document), used=used,
                              interface=None if used is None
                              else interface_of(card, used, client.card_url))
        verifier = getattr(client, "card_verifier", None)
        if verifier is not None:
            # said, as a refusal is: beside the card's JSON, on stderr
            keys = f"keys from {verifier.keys_url}" if verifier.keys_url \
                else "a key given with --key"
            click.echo(one_line(f"Verified: signed by key {verifier.kid!r} ({keys})"),
                       err=as_json)

    _run(url, dialect=dialect, headers=headers, timeout=timeout, insecure=insecure,
         as_json=as_json, work=work)


async def _used_endpoint(client: AnyClient) -> Endpoint | None:
    """The endpoint the other commands use with this command's options, as the client
    chooses it (None: the card names none it speaks)."""
    if not isinstance(client, Client):  # a mesh client: the agent's one address
        return next(iter(client.endpoints), None)
    with contextlib.suppress(DialectMismatch):
        return await client.resolve()
    return None


def _card_over_grpc(url: str, *, as_json: bool, dialect: str | None,
                    headers: tuple[str, ...], timeout: float, insecure: bool) -> None:
    from ..client.card import dialect_of_version
    from ..client.grpc import rpc_of
    from ..core.calls import GetExtendedCard
    from ..core.errors import AuthenticationRequired, AuthorizationFailed
    from ..core.model import AgentCard

    async def work(client: AnyClient) -> None:
        if client_kwargs(insecure).get("card_verifier") is not None:
            await client.get_card()  # (which says why it cannot be verified here)
        try:
            card = await client.call(GetExtendedCard())
        except (AgentUnreachable, AuthenticationRequired, AuthorizationFailed):
            # nothing answered there (exit 3), or the credentials were refused (which
            # the HTTP URL refuses alike): said as for any other command
            raise
        except (A2AError, ClientError) as exc:
            # (asked in a dialect already: told only what it has not tried)
            other = "" if dialect else ", or with --dialect 1.0 ask for the extended card"
            _fail(f"{url} gave no card over gRPC ({exc}); a gRPC address has no well-known "
                  "card: read it at the agent's HTTP URL (interlingua card "
                  f"http://HOST:PORT){other}", EXIT_A2A_ERROR, as_json=as_json)
        if not isinstance(card, AgentCard):
            _fail(f"{url} answered GetAgentCard with a {type(card).__name__}", EXIT_A2A_ERROR,
                  as_json=as_json)
        if as_json:
            _print_raw(client.last_result)
            return
        spoken = [Endpoint(d, url, "GRPC") for d in dict.fromkeys(
            dialect_of_version(i.protocol_version) for i in card.interfaces
            if i.binding.upper() == "GRPC") if d in BINDINGS["grpc"].dialects]
        used = client.dialect or ""
        rpc = f"v{used} {rpc_of(used, GetExtendedCard())}"
        # without --dialect, commands speak v1.0 where the agent serves it, which its
        # v0.3 card does not list: no interface of it is marked as theirs
        default = None if dialect else "gRPC v1.0 where the agent serves it, else v0.3 " \
            "(--dialect chooses)"
        at = await _used_endpoint(client)
        output.print_card(output.console(), card, endpoints=spoken,
                          card_url=f"{url} (over gRPC: {rpc})", default=default, used=at,
                          interface=None if at is None else interface_of(card, at, None))

    # v0.3's GetAgentCard answers with the public card; v1.0 has only the extended one
    _run(url, dialect=dialect or "0.3", headers=headers, timeout=timeout, insecure=insecure,
         as_json=as_json, work=work)


def _data_part(ctx: click.Context, param: click.Parameter,
               value: str | None) -> DataPart | None:
    """``--data``'s JSON as the part it is sent as (None: no --data). Made here, not
    from the value later: ``null`` is a value to send, not "no --data"."""
    if value is None:
        return None
    TEXT.convert(value, param, ctx)
    try:
        return data_part(msgspec.json.decode(value))
    except msgspec.DecodeError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise click.BadParameter("JSON nested too deeply") from None


def _message(text: str, *, task_id: str | None, context_id: str | None,
             data: DataPart | None, files: tuple[FilePart, ...]) -> Message:
    """The message ``send`` and ``stream`` send: TEXT, then --data's part and the files."""
    parts: list[Part] = [TextPart(text=text)]
    if data is not None:
        parts.append(data)
    return make_message(parts, task_id=task_id, context_id=context_id, files=files)


def _read_files(ctx: click.Context, param: click.Parameter,
                value: tuple[Path, ...]) -> tuple[FilePart, ...]:
    """Each ``--file`` read now, as the part it is sent as: a file that cannot be read
    is the option's fault (it was said as the agent that could not be reached)."""
    from ..client.messages import file_from_path

    parts = []
    for path in value:
        try:
            parts.append(file_from_path(path))
        except OSError as exc:
            raise click.BadParameter(f"cannot read {path}: {exc.strerror or exc}") from None
    return tuple(parts)


def _message_options(f: F) -> F:
    """The message ``send`` and ``stream`` make: TEXT and what goes with it."""
    options = [
        click.argument("text", type=TEXT),
        click.option("--task-id", default=None, type=TEXT,
                     help="Continue this task (e.g. one waiting for input)."),
        click.option("--context-id", default=None, type=TEXT,
                     help="Send within this context (conversation)."),
        click.option("--data", default=None, callback=_data_part, metavar="JSON",
                     help="Also send this JSON value as a data part."),
        click.option("--file", "files", multiple=True, callback=_read_files,
                     type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="Also send this file inline (repeatable)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


_save_option = click.option(
    "--save", "save_dir", default=None, metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Save the answer's file parts (inline ones) in DIR.")


def _follow(client: AnyClient, url: str, task_id: str) -> str:
    """The command that follows the task ``task_id``, as the client itself followed
    it: ``subscribe`` where the card says the agent streams, else ``get --wait``,
    which polls (every agent answers it; one that does not stream refuses subscribe)."""
    card = getattr(client, "card", None)
    if card is not None and card.capabilities.streaming:
        return output.again(f"interlingua subscribe {url} {task_id}")
    return output.again(f"interlingua get {url} {task_id} --wait")


@main.command("send")
@click.argument("url", callback=check_agent_url)
@_message_options
@click.option("--no-wait", is_flag=True, help="Return at once instead of when the task settles.")
@click.option("--history", "history_length", type=click.IntRange(min=0), default=None,
              help="Ask for at most N messages of history in the answer.")
@click.option("--push-url", default=None, callback=check_http_url, metavar="URL",
              help="Register this webhook for the task's updates (see 'interlingua listen').")
@click.option("--push-token", default=None, metavar="TOKEN", type=TEXT,
              help="The token the agent sends with each notification to --push-url.")
@_save_option
@_client_options
def send_command(url: str, text: str, task_id: str | None, context_id: str | None,
                 data: DataPart | None,
                 files: tuple[FilePart, ...], no_wait: bool, history_length: int | None,
                 push_url: str | None, push_token: str | None, save_dir: Path | None,
                 as_json: bool, dialect: str | None, headers: tuple[str, ...], timeout: float,
                 insecure: bool) -> None:
    """Send TEXT to the agent at URL and show the task or the reply.

    Waits until the task finishes or waits for input; if that takes longer than
    --timeout, says which task it is and how to follow it.
    """
    if push_token is not None and push_url is None:
        _exit("--push-token needs --push-url", EXIT_USAGE)
    push = PushConfig(url=push_url, token=push_token) if push_url else None

    async def work(client: AnyClient) -> TaskState | None:
        message = _message(text, task_id=task_id, context_id=context_id, data=data,
                           files=files)
        try:
            if no_wait:
                result = await client.send(message, blocking=False,
                                           history_length=history_length, push=push)
            else:
                # Sent without waiting, then followed to its end: past --timeout the
                # task the send started is named as it is then. The message is never
                # sent again to learn it: most agents take a repeated message id as a
                # new task.
                followed: list[Task] = []
                result = await send_within(client, message, None, timeout,
                                           seen=followed.append,
                                           history_length=history_length, push=push)
                if followed and as_json:
                    # the task as it ended (read with GetTask), shown as the send's answer
                    client.last_result = _as_send_answer(client, message, result)
        except TaskNotSettled as exc:
            task = exc.task
            assert isinstance(task, Task)
            _fail(f"no answer within {timeout:g} s; task {task.id} is "
                  f"{task.status.state.value}; follow it with: "
                  f"{_follow(client, url, task.id)}", EXIT_UNREACHABLE, as_json=as_json)
        if as_json:
            _print_raw(client.last_result)
        else:
            output.print_result(output.console(), result, url=url,
                                history=history_length is not None)
        if save_dir is not None:
            _save_files(result, save_dir, as_json=as_json)
        return result.status.state if isinstance(result, Task) else None

    state = _run(url, dialect=dialect, headers=headers, timeout=timeout, insecure=insecure,
                 as_json=as_json, work=work)
    _exit_for(state)


def _as_send_answer(client: AnyClient, message: Message, result: Task | Message) -> bytes:
    """``result`` as the agent's answer to a send, in its dialect (1.1's, with the
    task's generation, when spoken in 1.1) and binding."""
    version = getattr(client, "version", None)
    newer = V1_CODECS.get(version) if isinstance(version, str) else None
    codec = get_codec(newer or client.dialect or "1.0")
    endpoint = getattr(client, "endpoint", None)
    if endpoint is not None and endpoint.binding != "JSONRPC" and codec.protojson \
            and codec.protojson != codec.dialect:
        codec = get_codec(codec.protojson)  # (HTTP+JSON and gRPC answer in ProtoJSON)
    return codec.encode_result(SendMessage(message=message), result)


def _exit_for(state: TaskState | None) -> None:
    if state in _UNSUCCESSFUL:
        raise click.exceptions.Exit(EXIT_TASK_UNSUCCESSFUL)


def _save_files(result: Task | Message, folder: Path, *, as_json: bool) -> None:
    """Write the inline file parts of ``result`` into ``folder``; say where each went."""
    parts: list[Any] = []
    if isinstance(result, Message):
        parts.extend(result.parts)
    else:
        for artifact in result.artifacts:
            parts.extend(artifact.parts)
        if result.status.message is not None:
            parts.extend(result.status.message.parts)
    files = [p for p in parts if isinstance(p, FilePart)]
    if any(p.raw is not None for p in files):  # made only for a file to save in it
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _exit(f"cannot save into {folder}: {exc.strerror or exc}", EXIT_USAGE)
    for n, part in enumerate(files, 1):
        if part.raw is None:
            click.echo(one_line(f"not saved (a link, not inline): {part.uri}"), err=as_json)
            continue
        # only the last component of an agent-chosen name: never outside the folder
        name = Path((part.filename or "").replace("\\", "/")).name
        if name in ("", ".", "..") or "\0" in name:  # (no file name holds a NUL)
            name = f"file-{n}"
        target = folder / name
        stem, suffix, k = target.stem, target.suffix, 1
        try:
            while target.exists():
                k += 1
                target = folder / f"{stem}-{k}{suffix}"
            target.write_bytes(part.raw)
        except OSError as exc:  # a name too long here, a folder not ours to write
            # (said here: the agent answered, and the failure is this machine's)
            _exit(f"cannot save {target}: {exc.strerror or exc}", EXIT_USAGE)
        click.echo(one_line(f"saved {target} ({len(part.raw)} bytes)"), err=as_json)


@main.command("get")
@click.argument("url", callback=check_agent_url)
@click.argument("task_id", type=TEXT)
@click.option("--history", "history_length", type=click.IntRange(min=0), default=None,
              help="Show at most N messages of the task's history.")
@click.option("--wait", is_flag=True,
              help="Follow the task until it finishes or waits for input, showing each new "
                   "state (long polls with an A2A 1.1 agent, else asking every few seconds); "
                   "--timeout bounds the whole wait.")
@_save_option
@_client_options
def get_command(url: str, task_id: str, history_length: int | None, wait: bool,
                save_dir: Path | None, as_json: bool, dialect: str | None,
                headers: tuple[str, ...], timeout: float, insecure: bool) -> None:
    """Show a task (with --wait: follow it, for agents that do not stream)."""

    shown: list[Task] = []

    def show(task: Task, raw: bytes | None) -> None:
        if as_json:
            # one answer per line, as 'stream --json' prints events
            click.echo(raw.decode("utf-8", "replace") if raw is not None else "null")
        elif shown and task.status.state not in RETURN_STATES:
            output.print_task_line(output.console(), task)  # a step on: one line
        else:  # the task as found, and as it ends: whole
            output.print_task(output.console(), task, history=history_length is not None)
        shown.append(task)

    def note(text: str) -> None:
        click.echo(f"note: {one_line(text)}", err=True)

    async def work(client: AnyClient) -> TaskState:
        if wait:
            found = await follow_task(client, task_id, history_length=history_length,
                                      within=timeout, show=show, note=note)
            if found is None:
                _fail(f"task {task_id} has not finished within {timeout:g} s; go on with: "
                      + output.again(f"interlingua get {url} {task_id} --wait"), EXIT_UNREACHABLE,
                      as_json=as_json)
            task = found
        else:
            task = await client.get_task(task_id, history_length=history_length)
            if as_json:
                _print_raw(client.last_result)
            else:
                output.print_task(output.console(), task, history=history_length is not None)
        if save_dir is not None:
            _save_files(task, save_dir, as_json=as_json)
        return task.status.state

    _exit_for(_run(url, dialect=dialect, headers=headers, timeout=timeout, insecure=insecure,
                   as_json=as_json, work=work))


@main.command("tasks")
@click.argument("url", callback=check_agent_url)
@click.option("--context-id", default=None, type=TEXT, help="Only tasks of this context.")
@click.option("--status", type=click.Choice([s.value for s in LISTABLE_STATES]), default=None,
              help="Only tasks in this state.")
@click.option("--page-size", type=click.IntRange(1, 100), default=None,
              help="Tasks per page (the agent's default if not given).")
@click.option("--page-token", default=None, help="The page to show, from a previous listing.")
@click.option("--include-artifacts", is_flag=True, help="Ask for the tasks' artifacts too.")
@_client_options
def tasks_command(url: str, context_id: str | None, status: str | None, page_size: int | None,
                  page_token: str | None, include_artifacts: bool, as_json: bool,
                  dialect: str | None, headers: tuple[str, ...], timeout: float,
                  insecure: bool) -> None:
    """List the agent's tasks (A2A 1.0 agents)."""

    async def work(client: AnyClient) -> None:
        page = await client.list_tasks(
            context_id=context_id, status=status, page_size=page_size, page_token=page_token,
            include_artifacts=include_artifacts,
        )
        if as_json:
            _print_raw(client.last_result)
        else:
            output.print_tasks(output.console(), page, artifacts=include_artifacts)

    _run(url, dialect=dialect, headers=headers, timeout=timeout, insecure=insecure,
         as_json=as_json, work=work)


@main.command("cancel")
@click.argument("url", callback=check_agent_url)
@click.argument("task_id", type=TEXT)
@_client_options
def cancel_command(url: str, task_id: str, as_json: bool, dialect: str | None,
                   headers: tuple[str, ...], timeout: float, insecure: bool) -> None:
    """Cancel a task."""

    async def work(client: AnyClient) -> None:
        task = await client.cancel(task_id)
        if as_json:
            _print_raw(client.last_result)
        else:
            output.print_task(output.console(), task)

    _run(url, dialect=dialect, headers=headers, timeout=timeout, insecure=insecure,
         as_json=as_json, work=work)


class _Progress:
    """Where a followed task stands: its id, last event and state (for Ctrl-C and the exit code)."""

    def __init__(self, url: str, task_id: str | None = None) -> None:
        self.url = url
        self.task_id = task_id
        self.seq: int | None = None
        self.state: TaskState | None = None

    def see(self, event: StreamEvent) -> None:
        item = event.item
        self.task_id = event.task_id or self.task_id
        if event.seq is not None:
            self.seq = event.seq
        if isinstance(item, Task):
            self.state = item.status.state
        elif isinstance(item, StatusUpdate):
            self.state = item.status.state

    def resume_hint(self) -> str | None:
        if self.task_id is None:
            return None
        after = f" --last-event-id {self.seq}" if self.seq is not None else ""
        return "resume with: " + output.again(
            f"interlingua subscribe {self.url} {self.task_id}{after}")

    def no_answer(self, timeout: float) -> str:
        """What a stream quiet for ``timeout`` seconds ends with: where the task stands
        and how to go on, in the words of ``send`` past its timeout."""
        state = f"; task {self.task_id} is {self.state.value}" \
            if self.task_id is not None and self.state is not None else ""
        hint = self.resume_hint()
        return f"no answer within {timeout:g} s{state}" + (f"; {hint}" if hint else "")


async def _show_stream(events: AsyncGenerator[StreamEvent, None], *, as_json: bool,
                       url: str, progress: _Progress, timeout: float,
                       name_the_task: bool = False) -> TaskState | None:
    """Print a stream as it arrives: each event's raw JSON on a line, or for people
    (``name_the_task``: a send's stream, whose first lines name its task). A stream
    quiet for ``timeout`` seconds ends the command as ``send`` past it does (exit 3)."""
    try:
        return await _print_stream(events, as_json=as_json, url=url, progress=progress,
                                   name_the_task=name_the_task)
    except StreamTimeout:
        _fail(progress.no_answer(timeout), EXIT_UNREACHABLE, as_json=as_json)


async def _print_stream(events: AsyncGenerator[StreamEvent, None], *, as_json: bool,
                        url: str, progress: _Progress,
                        name_the_task: bool) -> TaskState | None:
    async with contextlib.aclosing(events):
        if as_json:
            async for event in events:
                progress.see(event)
                click.echo(event.raw.decode("utf-8", "replace"))
            return progress.state
        printer = output.StreamPrinter(output.console(), url=url, name_the_task=name_the_task)
        try:
            async for event in events:
                progress.see(event)
                printer.show(event)
        finally:
            printer.close()
    return progress.state


@main.command("stream")
@click.argument("url", callback=check_agent_url)
@_message_options
@click.option("--history", "history_length", type=click.IntRange(min=0), default=None,
              help="Ask for at most N messages of history in the task snapshot.")
@_client_options
def stream_command(url: str, text: str, task_id: str | None, context_id: str | None,
                   data: DataPart | None,
                   files: tuple[FilePart, ...], history_length: int | None, as_json: bool,
                   dialect: str | None, headers: tuple[str, ...], timeout: float,
                   insecure: bool) -> None:
    """Send TEXT to the agent at URL and show what it does as it happens.

    A broken connection is resumed where it broke; an agent silent for --timeout
    ends the command, naming how to go on. With --json, each event's raw JSON is
    printed on a line of its own.
    """

    progress = _Progress(url, task_id)

    async def work(client: AnyClient) -> TaskState | None:
        message = _message(text, task_id=task_id, context_id=context_id, data=data,
                           files=files)
        events = client.stream(message, history_length=history_length)
        return await _show_stream(events, as_json=as_json, url=url, progress=progress,
                                  timeout=timeout, name_the_task=True)

    _exit_for(_run(url, dialect=dialect, headers=headers, timeout=timeout, insecure=insecure,
                   as_json=as_json, work=work, on_interrupt=progress.resume_hint))


async def _after(first: StreamEvent | None, events: AsyncGenerator[StreamEvent, None],
                 ) -> AsyncGenerator[StreamEvent, None]:
    """``first`` (read ahead; None: the stream was empty), then the rest of ``events``."""
    async with contextlib.aclosing(events):
        if first is None:
            return
        yield first
        async for event in events:
            yield event


@main.command("subscribe")
@click.argument("url", callback=check_agent_url)
@click.argument("task_id", type=TEXT)
@click.option("--last-event-id", type=click.IntRange(min=0), default=None, metavar="N",
              help="Start after event N of the task (the events you have), finished or not.")
@_client_options
def subscribe_command(url: str, task_id: str, last_event_id: int | None, as_json: bool,
                      dialect: str | None, headers: tuple[str, ...], timeout: float,
                      insecure: bool) -> None:
    """Follow a task's events as they happen, until it finishes or waits for input."""

    progress = _Progress(url, task_id)
    progress.seq = last_event_id

    async def ended(client: AnyClient) -> TaskState | None:
        """The task as it ended, shown as ``send`` would have; None: it has not."""
        task = await client.get_task(task_id)
        if task.status.state not in TERMINAL_STATES:
            return None
        if as_json:
            click.echo((client.last_result or b"null").decode("utf-8", "replace"))
        else:
            output.print_result(output.console(), task, url=url)
        return task.status.state

    async def work(client: AnyClient) -> TaskState | None:
        events = to_where_it_stands(client, task_id, last_event_id)
        try:
            if last_event_id is None and not as_json:
                first = await anext(events, None)
                if first is not None and isinstance(first.item, StatusUpdate) \
                        and first.state in TERMINAL_STATES:
                    # A v0.3 (v0.1) agent answers for a finished task with its final
                    # status alone: shown whole, artifacts too, as in v1.0 (below)
                    await events.aclose()
                    return await ended(client) or first.state
                events = _after(first, events)
            return await _show_stream(events, as_json=as_json, url=url, progress=progress,
                                      timeout=timeout)
        except TaskNotFound:
            raise
        except A2AError:
            # A v1.0 agent refuses a fresh subscription to a finished task: the command
            # `send` names past its --timeout, run once the task is done, shows how it
            # ended, as `send` would have. (A resume from an event id is not refused.)
            if last_event_id is not None or progress.state is not None:
                raise
            state = await ended(client)
            if state is None:
                raise
            return state

    _exit_for(_run(url, dialect=dialect, headers=headers, timeout=timeout, insecure=insecure,
                   as_json=as_json, work=work, on_interrupt=progress.resume_hint))


main.add_command(listen_command)
main.add_command(mcp_command)
main.add_command(push_group)
main.add_command(db_group)
main.add_command(mesh_group)
main.add_command(gateway_command)
main.add_command(inspect_command)


if __name__ == "__main__":  # pragma: no cover
    main()
