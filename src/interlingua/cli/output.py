"""How the ``interlingua`` command shows cards, tasks, messages and errors.

Agent-supplied text is printed as plain text, never as rich markup: a task
that says "[red]" must not recolour the terminal. Nor may its control characters:
each piece of it goes through ``safe_text`` (ids, names and headings as one line;
message and artifact text as lines), so an agent can neither send escape sequences
to the terminal nor forge or overwrite a line of the command's own.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import click
import msgspec
from click.core import ParameterSource
from rich.console import Console
from rich.status import Status
from rich.table import Table
from rich.text import Text

from ..client import Endpoint, StreamEvent
from ..core.calls import ListTasksResult
from ..core.model import (
    AgentCard,
    APIKeyScheme,
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    HTTPAuthScheme,
    Message,
    MutualTLSScheme,
    OAuth2Scheme,
    OpenIdConnectScheme,
    Part,
    SecurityScheme,
    StatusUpdate,
    Task,
    TaskState,
    TextPart,
)
from .safe_text import lines, one_line, with_newlines

__all__ = [
    "STATE_STYLES",
    "StreamPrinter",
    "console",
    "format_json",
    "print_card",
    "print_message",
    "print_result",
    "print_task",
    "print_tasks",
]

STATE_STYLES = {
    TaskState.SUBMITTED: "cyan",
    TaskState.WORKING: "blue",
    TaskState.INPUT_REQUIRED: "magenta",
    TaskState.AUTH_REQUIRED: "magenta",
    TaskState.COMPLETED: "green",
    TaskState.CANCELED: "yellow",
    TaskState.FAILED: "red",
    TaskState.REJECTED: "red",
    TaskState.UNKNOWN: "dim",
}


def console(file: TextIO | None = None) -> Console:
    out = file or sys.stdout
    # Piped output keeps whole lines (task ids, URLs) instead of wrapping at 80.
    width = None if out.isatty() else 200
    return Console(file=out, markup=False, highlight=False, width=width, soft_wrap=False)


def format_json(raw: bytes) -> str:
    """JSON bytes, indented for reading (the content is left as it is)."""
    return msgspec.json.format(raw, indent=2).decode()


def _label(text: str) -> Text:
    return Text(one_line(text), style="bold")


def _t(text: str, style: str = "") -> Text:
    """Text from the agent (or holding some), on one line."""
    return Text(one_line(text), style=style)


def _state(state: TaskState) -> Text:
    return Text(state.value, style=STATE_STYLES.get(state, ""))


def _size(n: int) -> str:
    return f"{n} byte" if n == 1 else f"{n} bytes"


def _part_lines(part: Part) -> list[Text]:
    if isinstance(part, TextPart):
        return [Text(line) for line in lines(part.text)]
    if isinstance(part, DataPart):
        try:
            pretty = format_json(msgspec.json.encode(part.data))
        except (TypeError, ValueError):
            pretty = repr(part.data)
        return [Text(line, style="cyan") for line in lines(pretty)]
    return [_t(describe_file(part), style="yellow")]


def describe_file(part: FilePart) -> str:
    name = part.filename or "(unnamed file)"
    kind = part.media_type or "unknown type"
    if part.raw is not None:
        return f"file {name} ({kind}, {_size(len(part.raw))})"
    return f"file {name} ({kind}) at {part.uri}"


def _print_parts(out: Console, parts: list[Part], indent: int) -> None:
    pad = " " * indent
    for part in parts:
        for line in _part_lines(part):
            out.print(Text(pad) + line)


def print_message(out: Console, message: Message, *, title: str | None = None) -> None:
    out.print(_label(title or f"Message from {message.role.value}"))
    _print_parts(out, message.parts, 2)


def _print_artifact(out: Console, artifact: Artifact) -> None:
    head = Text("  ") + _label(artifact.name or artifact.artifact_id)
    if artifact.name:
        head += _t(f"  ({artifact.artifact_id})", style="dim")
    out.print(head)
    if artifact.description:
        out.print(Text("    ") + _t(artifact.description, style="italic"))
    _print_parts(out, artifact.parts, 4)


def _context(out: Console, context_id: str) -> None:
    # a v0.1 stream's events name no session: no line then, rather than an empty one
    if context_id:
        out.print(Text("  context: ", style="dim") + _t(context_id))


def print_task(out: Console, task: Task, *, history: bool = False) -> None:
    out.print(_label("Task ") + _t(task.id) + Text("  ") + _state(task.status.state))
    _context(out, task.context_id)
    if task.status.timestamp:
        out.print(Text("  updated: ", style="dim") + _t(task.status.timestamp))
    status_message = task.status.message
    if status_message is not None and status_message.parts:
        out.print(_label("Status message"))
        _print_parts(out, status_message.parts, 2)
    if task.artifacts:
        out.print(_label(f"Artifacts ({len(task.artifacts)})"))
        for artifact in task.artifacts:
            _print_artifact(out, artifact)
    if history and task.history:
        out.print(_label(f"History ({len(task.history)})"))
        for message in task.history:
            out.print(Text(f"  {message.role.value}:", style="dim"))
            _print_parts(out, message.parts, 4)


def print_task_line(out: Console, task: Task) -> None:
    """One line for a task that moved on: its state, generation and status message."""
    line = _label("Task ") + _t(task.id) + Text("  ") + _state(task.status.state)
    if task.generation:
        line += Text(f"  generation {task.generation}", style="dim")
    status_message = task.status.message
    if status_message is not None:
        text = " ".join(p.text for p in status_message.parts if isinstance(p, TextPart))
        if text:
            line += Text("  ") + _t(text)
    out.print(line)


#: the options that say how to reach an agent: a command a hint names needs them again
_REACHING = ("headers", "dialect", "binding", "insecure", "ca_bundle", "client_cert",
             "client_key")


def again(command: str) -> str:
    """``command``, a command a hint tells the user to run next, with a note naming the
    options of this one it needs too (its credentials, its dialect…), which the hint
    does not repeat: a header's value may be a secret, not to be printed."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return command
    given = [param.opts[-1] if param.name == "headers" else param.opts[0]
             for param in ctx.command.params
             if param.name in _REACHING
             and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE]
    if not given:
        return command
    return f"{command} (with this command's {', '.join(dict.fromkeys(given))} too)"


def print_result(out: Console, result: Task | Message, *, url: str | None = None,
                 history: bool = False) -> None:
    """A send's answer; ``history``: the task's messages too (what ``--history`` asked
    for: an agent that answers only in status updates has its answer there)."""
    if isinstance(result, Message):
        print_message(out, result, title="Reply")
        return
    print_task(out, result, history=history)
    if result.status.state in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED) and url:
        out.print(
            _t(
                "The agent waits for an answer: "
                + again(f"interlingua send {url} TEXT --task-id {result.id}"),
                style="dim",
            )
        )


def print_tasks(out: Console, page: ListTasksResult, *, artifacts: bool = False) -> None:
    """A table of tasks; the artifact column only when they were asked for."""
    if not page.tasks:
        out.print("No tasks.")
    else:
        table = Table(show_edge=False, pad_edge=False, header_style="bold")
        table.add_column("ID", no_wrap=True)
        table.add_column("State", no_wrap=True)
        table.add_column("Context", no_wrap=True)
        table.add_column("Updated", no_wrap=True)
        if artifacts:
            table.add_column("Artifacts", justify="right")
        for task in page.tasks:
            row: list[str | Text] = [
                _t(task.id),
                _state(task.status.state),
                _t(task.context_id),
                _t(task.status.timestamp or ""),
            ]
            if artifacts:
                row.append(str(len(task.artifacts)))
            table.add_row(*row)
        out.print(table)
    summary = f"{len(page.tasks)} shown of {page.total_size}"
    out.print(Text(summary, style="dim"))
    if page.next_page_token:
        out.print(_t(f"More: --page-token {page.next_page_token}", style="dim"))


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _scheme(scheme: SecurityScheme) -> str:
    if isinstance(scheme, APIKeyScheme):
        return f"API key {scheme.name!r} in {scheme.location}"
    if isinstance(scheme, HTTPAuthScheme):
        return f"HTTP {scheme.scheme}"
    if isinstance(scheme, OAuth2Scheme):
        return "OAuth 2 (" + ", ".join(scheme.flows) + ")"
    if isinstance(scheme, OpenIdConnectScheme):
        return f"OpenID Connect {scheme.url}"
    assert isinstance(scheme, MutualTLSScheme)
    return "mutual TLS"


#: the bindings as the Dialects line names them (else as the card does)
_NAMES = {"JSONRPC": "JSON-RPC"}
#: ... and as a line naming the one used
_USED_NAMES = {**_NAMES, "GRPC": "gRPC"}


def print_card(
    out: Console,
    card: AgentCard,
    *,
    endpoints: list[Endpoint],
    card_url: str | None,
    also: list[str] | None = None,
    default: str | None = None,
    used: Endpoint | None = None,
    interface: int | None = None,
) -> None:
    """``used``: the endpoint commands with the same options use, the card's interface
    ``interface`` (its index; None: one the card does not list, said on a line of its
    own). ``default``: what commands at this address speak without --dialect, said
    instead where no interface of the card is it (a gRPC address, whose v0.3 card
    lists its v0.3 interfaces alone)."""
    out.print(_label(card.name) + _t(f"  version {card.version}", style="dim"))
    if card.description:
        out.print(Text("  ") + _t(card.description))
    if card.provider is not None:
        provider = card.provider.organization + (f" ({card.provider.url})" if card.provider.url else "")
        out.print(_label("Provider: ") + _t(provider))
    if card.documentation_url:
        out.print(_label("Documentation: ") + _t(card.documentation_url))

    out.print(_label("Interfaces"))
    marked = interface if default is None and used is not None else None
    for n, iface in enumerate(card.interfaces):
        line = Text("  ") + _t(f"{iface.binding:<10} {iface.protocol_version:<5} {iface.url}")
        if n == marked:
            line += Text("  (used by default)", style="green")
        out.print(line)
    if endpoints:
        by_binding: dict[str, list[str]] = {}
        for e in endpoints:
            # the version spoken there: 1.1 where the card offers it, not its 1.0 dialect
            by_binding.setdefault(e.binding, []).append(e.a2a_version)
        if "JSONRPC" in by_binding:
            by_binding["JSONRPC"] += also or []
        spoken = "; ".join(f"{_NAMES.get(b, b)} {', '.join(dict.fromkeys(d))}"
                           for b, d in by_binding.items())
        out.print(_label("Dialects: ") + _t(spoken))
    else:
        out.print(_label("Dialects: ") + Text("none this client speaks"))
    if default is None and used is not None and marked is None:
        # (--dialect: URL itself, which the card need not list)
        default = (f"{_USED_NAMES.get(used.binding, used.binding)} v{used.a2a_version} at "
                   f"{used.url} (the URL given, not an interface of this card)")
    if default is not None:
        out.print(_label("Used by default: ") + _t(default))

    caps = card.capabilities
    out.print(
        _label("Capabilities: ")
        + Text(
            f"streaming {_yes(caps.streaming)}, push notifications {_yes(caps.push_notifications)}, "
            f"extended card {_yes(caps.extended_card)}"
            # a v0.x flag that v1.0 cards no longer carry: shown only when set
            + (", state history yes" if caps.state_transition_history else "")
        )
    )
    for ext in caps.extensions:
        out.print(Text("  extension ") + _t(ext.uri + (" (required)" if ext.required else "")))
    out.print(
        _label("Modes: ")
        + _t(
            f"in {', '.join(card.default_input_modes) or '-'}; "
            f"out {', '.join(card.default_output_modes) or '-'}"
        )
    )
    if card.security_schemes:
        out.print(_label("Security"))
        for name, scheme in card.security_schemes.items():
            out.print(Text("  ") + _t(f"{name}: {_scheme(scheme)}"))

    if card.skills:
        out.print(_label(f"Skills ({len(card.skills)})"))
        table = Table(show_edge=False, pad_edge=False, header_style="bold")
        table.add_column("ID", no_wrap=True)
        table.add_column("Name")
        table.add_column("Description")
        table.add_column("Tags")
        for skill in card.skills:
            table.add_row(_t(skill.id), _t(skill.name), _t(skill.description),
                          _t(", ".join(skill.tags)))
        out.print(table)
    else:
        out.print(_label("Skills: ") + Text("none listed"))
    if card_url:
        out.print(_t(f"Card: {card_url}", style="dim"))


def error_json(code: int | None, message: str, data: Any = None) -> bytes:
    body: dict[str, Any] = {"message": message}
    if code is not None:
        body["code"] = code
    if data is not None:
        body["data"] = data
    try:
        return msgspec.json.encode({"error": body})
    except (TypeError, ValueError):
        body.pop("data", None)
        return msgspec.json.encode({"error": body})


# ------------------------------------------------------------------ streams


class StreamPrinter:
    """Shows a stream as it arrives: state changes one per line, artifact text
    as it comes (appended chunks run on in one line), and, on a terminal, a
    spinner while the agent works and nothing is being written."""

    def __init__(self, out: Console, *, url: str | None = None,
                 name_the_task: bool = False) -> None:
        self.out = out
        self.url = url
        self._spinner: Status | None = None
        self._mid_line = False
        # the artifact whose text is being written inline
        self._open: str | None = None
        self._names: dict[str, str] = {}
        self._last_status: tuple[TaskState, str | None] | None = None
        self._final: StreamEvent | None = None
        #: whether the task's id is still to be shown: the stream of a send begins with
        #: the Task over HTTP, and with a status update on the mesh
        self._task_shown = not name_the_task

    def show(self, event: StreamEvent) -> None:
        self._pause()
        item = event.item
        if isinstance(item, Task):
            self._task(item)
        elif isinstance(item, StatusUpdate):
            self._status(item)
        elif isinstance(item, ArtifactUpdate):
            self._artifact(item)
        else:
            self._end_line()
            print_message(self.out, item, title="Reply")
        if event.final:
            self._final = event
        elif not self._mid_line:
            self._spin()

    def close(self) -> None:
        """Stop the spinner and end an unfinished line (call once the stream ends)."""
        self._pause()
        self._end_line()
        final = self._final
        if (final is not None and self.url and final.task_id
                and final.state in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED)):
            self.out.print(_t(
                "The agent waits for an answer: "
                + again(f"interlingua stream {self.url} TEXT --task-id {final.task_id}"),
                style="dim"))

    # -------------------------------------------------------------- events

    def _task(self, task: Task) -> None:
        self._end_line()
        self._task_shown = True
        self.out.print(_label("Task ") + _t(task.id) + Text("  ") + _state(task.status.state))
        _context(self.out, task.context_id)
        self._last_status = (task.status.state, _message_id(task.status.message))
        if task.status.message is not None and task.status.message.parts:
            _print_parts(self.out, task.status.message.parts, 2)
        for artifact in task.artifacts:
            # what a subscriber missed so far: shown whole, then continued below
            self._names[artifact.artifact_id] = artifact.name or artifact.artifact_id
            _print_artifact(self.out, artifact)

    def _status(self, update: StatusUpdate) -> None:
        status = update.status
        if not self._task_shown:
            # the first word of a stream names the task, as a Task snapshot does
            self._task_shown = True
            self._end_line()
            self.out.print(_label("Task ") + _t(update.task_id) + Text("  ")
                           + _state(status.state))
            _context(self.out, update.context_id)
            self._last_status = (status.state, _message_id(status.message))
            if status.message is not None and status.message.parts:
                _print_parts(self.out, status.message.parts, 2)
            return
        key = (status.state, _message_id(status.message))
        if key == self._last_status:
            return  # nothing new to say
        self._last_status = key
        self._end_line()
        line = _state(status.state)
        parts = status.message.parts if status.message is not None else []
        texts = [p for p in parts if isinstance(p, TextPart)]
        if len(texts) == len(parts) == 1 and len(lines(texts[0].text)) == 1:
            self.out.print(Text.assemble(line, "  ", _t(texts[0].text)))
        else:
            self.out.print(line)
            _print_parts(self.out, parts, 2)

    def _artifact(self, update: ArtifactUpdate) -> None:
        artifact = update.artifact
        aid = artifact.artifact_id
        if artifact.name:
            self._names[aid] = artifact.name
        if self._open != aid or not update.append:
            self._end_line()
            name = self._names.setdefault(aid, aid)
            head = Text.assemble(_label("Artifact "), _t(name))
            if update.append:  # more of an artifact shown earlier, or before we joined
                head.append(" (continued)", style="dim")
            self.out.print(head)
            self._open = aid
        for part in artifact.parts:
            if isinstance(part, TextPart):
                text = with_newlines(part.text)
                if text:
                    # soft_wrap: the terminal wraps; no newline may go between chunks
                    self.out.print(Text(text), end="", soft_wrap=True)
                    self._mid_line = not text.endswith("\n")
            else:
                self._end_line()
                _print_parts(self.out, [part], 2)
        if update.last_chunk:
            self._end_line()
            self._open = None

    # ------------------------------------------------------------ display

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.print()
            self._mid_line = False

    def _spin(self) -> None:
        if not self.out.is_terminal:
            return
        state = self._last_status[0] if self._last_status is not None else None
        label = f"{state.value}..." if state is not None else "waiting..."
        self._spinner = self.out.status(label)
        self._spinner.start()

    def _pause(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None


def _message_id(message: Message | None) -> str | None:
    return message.message_id if message is not None else None
