"""The compatibility matrix: which pair spoke which operation in which dialect.

The rows (``ROWS``) and columns (``OPS``) are fixed here; each interop test
fills one cell, named by its row (the ``peer`` parameter) and its operation
(the test function's name, ``test_<op>``). ``conftest.py`` records every
outcome with ``record`` and, at the end of the session, ``render`` turns the
cells into Markdown: ``scripts/interop-matrix`` runs the tests and writes that to
``docs/interop.md`` when the run filled every cell and skipped none.

A test run never writes the document: ``test_the_matrix.py`` checks the committed
one is current, as far as the run can tell (``stale``): the cells it filled read as
committed, and the rest of the document (rows, columns, notes of the rows, prose) is
what ``render`` writes today. A cell the run did not fill is not checked.

Rows name their binding ("JSONRPC", "HTTP+JSON", "GRPC"). A test module fills
the rows of its ``DIRECTION`` and bindings (``rows(direction, bindings)``) with
a ``peer`` parameter; the recording in ``conftest.py`` needs nothing more (a
cell filled by several tests, say one per way of reaching the peer, keeps the
worst outcome and every note).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["BINDINGS", "OPS", "ROWS", "Cell", "Note", "Row", "complete", "parse", "record", "render",
           "results", "rows", "stale", "versions"]


@dataclass(frozen=True)
class Row:
    id: str
    #: "client" (an official client calls an interlingua agent) or
    #: "agent" (interlingua's client calls an official agent)
    direction: str
    #: the official SDK and its role, e.g. "a2a-sdk 1.3.0 client"
    peer: str
    #: the wire dialect of the pair: "1.0" or "0.3"
    dialect: str
    #: the peer environment under .interop/
    env: str
    #: how the dialect was chosen, when it needs saying
    how: str = ""
    #: the binding the pair speaks: "JSONRPC", "HTTP+JSON" or "GRPC"
    binding: str = "JSONRPC"

    @property
    def compat(self) -> bool:
        """A v0.3 row of a 1.x SDK: the SDK's own v0.3 compatibility layer."""
        return self.dialect == "0.3" and not self.env.rsplit("-", 1)[1].startswith("0.")


_PY1 = "a2a-sdk 1.3.0 (Python)"
_PY03 = "a2a-sdk 0.3.26 (Python)"
_JS1 = "@a2a-js/sdk 1.3.0 (JavaScript)"
_JS03 = "@a2a-js/sdk 0.3.14 (JavaScript)"
_PY_COMPAT = "the SDK's v0.3 compatibility transport, chosen from the card's 0.3 interface"
_JS_COMPAT = ("the SDK's v0.3 compatibility layer (`legacyCompat`), chosen from the card's 0.3 "
              "interface")

ROWS: list[Row] = [
    # official clients -> an interlingua agent
    Row("py-1.3.0", "client", f"{_PY1} client", "1.0", "py-a2a-1.3.0"),
    Row("py-1.3.0-v03", "client", f"{_PY1} client", "0.3", "py-a2a-1.3.0", _PY_COMPAT),
    Row("py-0.3.26", "client", f"{_PY03} client", "0.3", "py-a2a-0.3.26"),
    Row("js-1.3.0", "client", f"{_JS1} client", "1.0", "js-1.3.0"),
    Row("js-1.3.0-v03", "client", f"{_JS1} client", "0.3", "js-1.3.0", _JS_COMPAT),
    Row("js-0.3.14", "client", f"{_JS03} client", "0.3", "js-0.3.14"),
    Row("py-1.3.0-rest", "client", f"{_PY1} client", "1.0", "py-a2a-1.3.0",
        "chosen from the card's HTTP+JSON 1.0 interface", "HTTP+JSON"),
    Row("py-1.3.0-v03-rest", "client", f"{_PY1} client", "0.3", "py-a2a-1.3.0",
        "the SDK's v0.3 compatibility transport, chosen from the card's HTTP+JSON 0.3 "
        "interface", "HTTP+JSON"),
    Row("py-0.3.26-rest", "client", f"{_PY03} client", "0.3", "py-a2a-0.3.26",
        "chosen from the card's additionalInterfaces", "HTTP+JSON"),
    Row("js-1.3.0-rest", "client", f"{_JS1} client", "1.0", "js-1.3.0",
        "the SDK's REST transport, chosen from the card's HTTP+JSON 1.0 interface",
        "HTTP+JSON"),
    Row("js-1.3.0-v03-rest", "client", f"{_JS1} client", "0.3", "js-1.3.0",
        "the SDK's v0.3 REST transport (`legacyCompat`), chosen from the card's HTTP+JSON 0.3 "
        "interface", "HTTP+JSON"),
    Row("js-0.3.14-rest", "client", f"{_JS03} client", "0.3", "js-0.3.14",
        "the SDK's REST transport, preferred over the card's JSON-RPC one "
        "(`preferredTransports`)", "HTTP+JSON"),
    Row("py-1.3.0-grpc", "client", f"{_PY1} client", "1.0", "py-a2a-1.3.0",
        "chosen from the card's GRPC 1.0 interface", "GRPC"),
    Row("py-1.3.0-v03-grpc", "client", f"{_PY1} client", "0.3", "py-a2a-1.3.0",
        "the SDK's v0.3 compatibility transport (service `a2a.v1.A2AService`), chosen from the "
        "card's GRPC 0.3 interface", "GRPC"),
    Row("py-0.3.26-grpc", "client", f"{_PY03} client", "0.3", "py-a2a-0.3.26",
        "chosen from the card's additionalInterfaces", "GRPC"),
    # interlingua's client -> official agents
    Row("py-1.3.0", "agent", f"{_PY1} agent", "1.0", "py-a2a-1.3.0"),
    Row("py-1.3.0-v03", "agent", f"{_PY1} agent", "0.3", "py-a2a-1.3.0",
        "the SDK's v0.3 compatibility layer (`enable_v0_3_compat`)"),
    Row("py-0.3.26", "agent", f"{_PY03} agent", "0.3", "py-a2a-0.3.26"),
    Row("js-1.3.0", "agent", f"{_JS1} agent", "1.0", "js-1.3.0"),
    Row("js-1.3.0-v03", "agent", f"{_JS1} agent", "0.3", "js-1.3.0",
        "the SDK's v0.3 compatibility layer (`legacyCompat`)"),
    Row("js-0.3.14", "agent", f"{_JS03} agent", "0.3", "js-0.3.14"),
    Row("py-1.3.0-rest", "agent", f"{_PY1} agent", "1.0", "py-a2a-1.3.0",
        "the SDK's REST routes (`create_rest_routes`)", "HTTP+JSON"),
    Row("py-1.3.0-v03-rest", "agent", f"{_PY1} agent", "0.3", "py-a2a-1.3.0",
        "the SDK's v0.3 REST routes (`create_rest_routes(enable_v0_3_compat=True)`)",
        "HTTP+JSON"),
    Row("py-0.3.26-rest", "agent", f"{_PY03} agent", "0.3", "py-a2a-0.3.26",
        "the SDK's REST application (`A2ARESTFastAPIApplication`)", "HTTP+JSON"),
    Row("js-1.3.0-rest", "agent", f"{_JS1} agent", "1.0", "js-1.3.0",
        "the SDK's REST handler (`restHandler`)", "HTTP+JSON"),
    Row("js-1.3.0-v03-rest", "agent", f"{_JS1} agent", "0.3", "js-1.3.0",
        "the SDK's REST handler with its v0.3 compatibility layer (`legacyCompat`)",
        "HTTP+JSON"),
    Row("js-0.3.14-rest", "agent", f"{_JS03} agent", "0.3", "js-0.3.14",
        "the SDK's REST handler (`restHandler`)", "HTTP+JSON"),
    Row("py-1.3.0-grpc", "agent", f"{_PY1} agent", "1.0", "py-a2a-1.3.0",
        "the SDK's `GrpcHandler` (service `lf.a2a.v1.A2AService`), chosen from the card's "
        "GRPC 1.0 interface and dialed by address (`Client(\"grpc://host:port\", "
        "dialect=\"1.0\")`)", "GRPC"),
    Row("py-1.3.0-v03-grpc", "agent", f"{_PY1} agent", "0.3", "py-a2a-1.3.0",
        "the SDK's v0.3 compatibility handler (`CompatGrpcHandler`, service "
        "`a2a.v1.A2AService`) on the same server, dialed by the address the card's GRPC 0.3 "
        "interface names (`Client(\"grpc://host:port\", dialect=\"0.3\")`)",
        "GRPC"),
    Row("py-0.3.26-grpc", "agent", f"{_PY03} agent", "0.3", "py-a2a-0.3.26",
        "the SDK's `GrpcHandler` (service `a2a.v1.A2AService`), chosen from the card's "
        "additionalInterfaces and dialed by address (`Client(\"grpc://host:port\", "
        "dialect=\"0.3\")`)", "GRPC"),
]

#: the bindings a row may name; each test module takes the rows of its direction and
#: bindings (``rows``).
BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")


def rows(direction: str, bindings: tuple[str, ...] = BINDINGS) -> list[Row]:
    """The rows of ``direction`` in ``bindings``, in the matrix's order."""
    return [r for r in ROWS if r.direction == direction and r.binding in bindings]

#: operation -> column heading
OPS: dict[str, str] = {
    "card": "card",
    "send": "send (text, data, file)",
    "stream": "stream",
    "get": "get",
    "cancel": "cancel",
    "multi_turn": "multi-turn",
    "reply": "message reply",
    "subscribe": "resubscribe",
    "push": "push config set/get",
    "errors": "errors",
}


@dataclass(frozen=True)
class Note:
    #: "info", "peer-quirk", "peer-bug", "peer-aside" (a peer bug the tested setup
    #: avoids), "interlingua-bug" or "failure"
    kind: str
    text: str


@dataclass
class Cell:
    #: "passed", "bug" (a documented bug confirmed), "failed", "xfailed" (not yet
    #: supported by interlingua) or "skipped"
    outcome: str
    notes: list[Note] = field(default_factory=list)
    nodeid: str = ""


_cells: dict[tuple[str, str, str], Cell] = {}


def results() -> dict[tuple[str, str, str], Cell]:
    """Recorded cells by (direction, row id, op)."""
    return dict(_cells)


def record(direction: str, row_id: str, op: str, cell: Cell) -> None:
    key = (direction, row_id, op)
    old = _cells.get(key)
    # A cell keeps its worst outcome (a failed teardown after a passed call).
    if old is not None and _rank(old.outcome) > _rank(cell.outcome):
        old.notes.extend(cell.notes)
        return
    if old is not None:
        cell.notes[:0] = [n for n in old.notes if n not in cell.notes]
    _cells[key] = cell


def _rank(outcome: str) -> int:
    return {"passed": 0, "skipped": 1, "xfailed": 2, "bug": 3, "failed": 4}.get(outcome, 0)


def versions(node: str | None = None) -> dict[str, str]:
    """The peers' versions, from ``ROWS``; ``node``: the Node.js the JavaScript ones ran on."""
    envs = [r.env for r in ROWS]
    py = sorted({e.removeprefix("py-a2a-") for e in envs if e.startswith("py-")}, reverse=True)
    js = sorted({e.removeprefix("js-") for e in envs if e.startswith("js-")}, reverse=True)
    out = {"a2a-sdk": " and ".join(py), "@a2a-js/sdk": " and ".join(js)}
    if node:
        out["on Node.js"] = node
    return out


def complete() -> bool:
    """True when every cell of the matrix was filled by this run and none was skipped."""
    for row in ROWS:
        for op in OPS:
            cell = _cells.get((row.direction, row.id, op))
            if cell is None or cell.outcome == "skipped":
                return False
    return True


_SYMBOL = {"passed": "✅", "bug": "❌", "failed": "❌", "xfailed": "⏳", "skipped": "⬜",
           # only in the table of other implementations: the peer has no such operation
           "not-offered": "—"}

_DIRECTION = {
    "client": ("Official clients → an interlingua agent",
               "Each official client is a separate process driven over stdin/stdout "
               "(`tests/interop/peers/py_client_*.py`, `js_client_*.mjs`); it reads the card "
               "of an interlingua agent (`tests/interop/agent.py`, served in its own process "
               "by `tests/interop/serve_agent.py`: JSON-RPC and HTTP+JSON at one URL, gRPC on "
               "a port of its own, all named in the card) and makes the SDK's own client from "
               "it, for the row's binding. Rows marked v0.3 on a 1.x SDK use the SDK's own "
               "v0.3 compatibility layer."),
    "agent": ("interlingua's client → official agents",
              "`interlingua.Client` calls an agent built on each official SDK "
              "(`tests/interop/peers/py_agent_*.py`, `js_agent_*.mjs`), each in its own "
              "process on loopback, serving JSON-RPC at `/` and HTTP+JSON under `/rest` "
              "with the SDK's own routes (the Python agents also serve gRPC on a port of "
              "their own, named in their cards); the client keeps to the row's binding "
              "(`Client(url, binding=\"rest\")`). Rows marked v0.3 on a 1.x SDK talk to "
              "the SDK's v0.3 compatibility layer of that binding "
              "(`Client(url, dialect=\"0.3\")`)."),
}


_LABELS = {"peer-bug": "**Peer bug.** ", "interlingua-bug": "**interlingua bug.** ",
           "peer-quirk": "**Peer behaviour.** ", "failure": "**Test failure.** ",
           "peer-aside": "**Peer bug, outside the setup tested here.** "}
_PEERS = "Peers: "


def render(versions: dict[str, str],
           cells: dict[tuple[str, str, str], Cell] | None = None) -> str:
    """The matrix as Markdown: of ``cells``, or of the cells recorded in this process."""
    filled = _cells if cells is None else cells
    lines = [
        "# Interoperability with the official A2A SDKs",
        "",
        "Generated by `scripts/interop-matrix`, which runs the interoperability tests "
        "(`tests/interop`, with the peers `scripts/interop-setup` installs); do not edit by "
        "hand. Every peer runs as a real process on loopback. The test suite checks that each "
        "cell it fills reads as here.",
        "",
        _PEERS + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        "✅ works, content intact · ❌ fails: the note says why and on which side, with a "
        "request that reproduces it · ⏳ not yet supported by interlingua · ⬜ not run",
        "",
    ]
    footnotes: list[Note] = []

    def ref(note: Note) -> int:
        if note not in footnotes:
            footnotes.append(note)
        return footnotes.index(note) + 1

    for direction in ("client", "agent"):
        title, blurb = _DIRECTION[direction]
        lines += [f"## {title}", "", blurb, ""]
        lines.append("| pair | binding | dialect | " + " | ".join(OPS.values()) + " |")
        lines.append("|---|---|---|" + "---|" * len(OPS))
        for row in ROWS:
            if row.direction != direction:
                continue
            pair = row.peer
            if row.how:
                how = Note("info", f"{row.peer}, {row.binding} v{row.dialect}: {row.how}.")
                pair += f" [{ref(how)}]"
            cells = []
            for op in OPS:
                cell = filled.get((direction, row.id, op))
                if cell is None:
                    cells.append(_SYMBOL["skipped"])
                    continue
                # [1, 6], not [1][6]: Markdown reads the latter as a link to reference 6
                marks = "[" + ", ".join(str(ref(n)) for n in cell.notes) + "]" if cell.notes else ""
                cells.append(_SYMBOL.get(cell.outcome, "?") + (" " + marks if marks else ""))
            lines.append(f"| {pair} | {row.binding} | v{row.dialect} | " + " | ".join(cells)
                         + " |")
        lines.append("")

    lines += _wild()
    lines += [
        "What each operation checks (the same for every pair):",
        "",
        "- **card**: the peer reads the other side's `/.well-known/agent-card.json` with its "
        "own parser and picks the expected dialect. interlingua's card is one document with "
        "the fields of every version (a v0.3 card deep-merged with the v1.0 one) and a full "
        "set of metadata (skills, provider, four kinds of security scheme, extensions).",
        "- **send**: a blocking send of a text part (non-ASCII), a data part (nested JSON) and "
        "an inline file part (all 256 byte values, with a file name); the task completes with "
        "an artifact holding the three parts, byte for byte, and the user message in its "
        "history. When interlingua is the agent, the task read back over its own v1.0 "
        "JSON-RPC holds the file's bytes as sent.",
        "- **stream**: a streaming send; the status update, three appended artifact chunks "
        "(append / last-chunk flags in order) and the final status arrive in order, for one "
        "task.",
        "- **get**: the task read back by id (with `historyLength`) matches what the send "
        "returned.",
        "- **cancel**: a non-blocking send of a long task, then cancel: the answer and a later "
        "get say `canceled`. When interlingua's client is the one canceling, a second cancel "
        "is refused (task not cancelable).",
        "- **multi-turn**: the agent asks for input (`input-required`); the answer sent to the "
        "same task and context completes it, and the agent saw the first message.",
        "- **message reply**: an agent that answers with a bare message (no task), to a "
        "send and to a streaming send (one `message` event).",
        "- **resubscribe**: a subscription follows a running task; canceling the task from "
        "another call brings the `canceled` status and ends the subscription (an interlingua "
        "agent also begins the subscription with the task's current state).",
        "- **push config set/get**: a push notification config set on a task is read back "
        "unchanged (id, URL, token); when interlingua is the agent, finishing the task then "
        "notifies the webhook, with the token.",
        "- **errors**: reading an unknown task and canceling a finished one are refused with "
        "the errors the protocol names (task not found, task not cancelable), which each SDK "
        "turns into its own error type.",
        "",
    ]
    lines += _checkers()
    if footnotes:
        lines += ["## Notes", ""]
        for i, note in enumerate(footnotes, 1):
            lines.append(f"{i}. {_LABELS.get(note.kind, '')}{note.text}")
        lines.append("")
    lines += _A2A_OVER_MQTT
    return "\n".join(lines)


# --- A2A over MQTT (EMQX's profile) ----------------------------------------------
# Not cells of the matrix above (another transport, other operations): a fixed
# section, each ✅ backed by tests/mesh/test_emqx_interop.py.
_A2A_OVER_MQTT = [
    "## A2A over MQTT (EMQX's profile)",
    "",
    "The `a2a-over-mqtt` 0.1.0 package (its venv made by `scripts/interop-setup "
    "py-a2a-over-mqtt-0.1.0`) against an interlingua agent served with `--mesh-profile "
    "emqx` and interlingua's client (`mqtt://HOST/ORG/UNIT/AGENT`), on Mosquitto, each test "
    "in an org and unit of its own (`tests/mesh/test_emqx_interop.py`; the profile: "
    "[mesh](mesh.md#the-a2a-over-mqtt-profile)).",
    "",
    "| pair | card and presence | send | stream | multi-turn | cancel | failed task |",
    "|---|---|---|---|---|---|---|",
    "| a2a-over-mqtt 0.1.0 requester → interlingua agent | — [a] | ✅ | ✅ | ✅ | — [b] | ⬜ |",
    "| interlingua client → a2a-over-mqtt 0.1.0 responder | ✅ [c] | ✅ [d] | ✅ | — [e] "
    "| ✅ [f] | ✅ |",
    "| interlingua client over HTTP → interlingua gateway → a2a-over-mqtt 0.1.0 responder "
    "| ✅ [g] | ✅ | ✅ | — [e] | ⬜ | ⬜ |",
    "",
    "— the operation is not offered by the package's side (the note says so).",
    "",
    "- a. The package's requester reads no cards; interlingua's agent retains its card with "
    "`a2a-status` (tested in `tests/mesh/test_emqx_agent.py`).",
    "- b. The package's requester has no cancel of its own, and its reply reader knows only "
    "stream results (`task`, `message`, `statusUpdate`, `artifactUpdate`): the bare Task "
    "that v1.0's `CancelTask` answers is not one of them.",
    "- c. The retained card, `a2a-status: online`; after the responder is killed, "
    "`offline` from its last will.",
    "- d. The responder answers every send with events (submitted, working, the artifact, "
    "completed); interlingua's client folds them into the Task.",
    "- e. The package's responder never asks for input.",
    "- f. A non-blocking send, then `CancelTask`: the responder answers with a `statusUpdate` "
    "(`canceled`), read as the Task in that state.",
    "- g. `interlingua gateway --mesh-profile emqx` lists the responder from its retained card "
    "and serves that card, and each turn, over HTTP at `/agents/peer/`.",
    "",
]


# ------------------------------------------- other implementations (not the SDKs)
# The cells of tests/interop/test_peers_in_the_wild.py, test_peers_adk_strands.py,
# test_peers_maf.py, test_peers_beeai.py and test_peers_crewai.py:
# (pair, case, outcome, note).
# Each is asserted by that module's test of the same case; a peer bug is shown there by
# the same failure against a2a-sdk 1.3.0.

_F_CLIENT = "fasta2a 2.1.1 client → interlingua agent"
_F_AGENT = "interlingua's client → fasta2a 2.1.1 agent (pydantic-ai, stub model)"
_P_CLIENT = "python-a2a 0.5.10 client → interlingua agent"
_P_AGENT = "interlingua's client → python-a2a 0.5.10 agent"
_L_AGENT = "interlingua's client → langgraph-api 0.16.7 agent (`/a2a/{assistant_id}`)"
_A_CLIENT = "google-adk 2.13.0 `RemoteA2aAgent` → interlingua agent"
_A_AGENT = "interlingua's client → google-adk 2.13.0 `to_a2a` agent (stub model)"
_S_CLIENT = "strands-agents 1.62.0 `A2AAgent` → interlingua agent"
_S_AGENT = "interlingua's client → strands-agents 1.62.0 `A2AServer` agent (stub model)"
_M_CLIENT = ("Microsoft Agent Framework (agent-framework-a2a 1.0.0b261022) `A2AAgent` → "
             "interlingua agent")
_M_AGENT = ("interlingua's client → Microsoft Agent Framework (agent-framework-a2a "
            "1.0.0b261022) `A2AExecutor` agent (stub chat client)")
_B_CLIENT = "beeai-framework 0.1.85 `A2AAgent` → interlingua agent"
_B_AGENT = ("interlingua's client → beeai-framework 0.1.85 `A2AServer` agent "
            "(`RequirementAgent`, stub model)")
_C_CLIENT = "crewai 1.15.30 agent with `A2AClientConfig` → interlingua agent"
_C_AGENT = ("interlingua's client → crewai 1.15.30 agent (`A2AServerConfig`, its `execute` on "
            "a2a-sdk 0.3.26's server; stub model)")

WILD: list[tuple[str, str, str, str]] = [
    (_F_CLIENT, "send, stream (v0.3 methods, parts without `kind`)", "passed",
     "read as v0.3 (the parts by the member they hold) and answered in v0.3; the task "
     "completes"),
    (_F_CLIENT, "the client reads our answer", "bug",
     "**Peer bug.** fasta2a's client reads a `message/send` / `message/stream` result as "
     "v1.0's `{\"task\": …}` wrapper, so a v0.3 result (a bare `Task`: the v0.3.0 schema's `SendMessageSuccessResponse.result` is a `Task` or a `Message`) reads as "
     "`{}`; a2a-sdk 1.3.0's agent gets the same `{}`."),
    (_F_AGENT, "send (v1.0 from its card; v0.3)", "passed",
     "fasta2a never blocks: it answers `submitted` (in v0.3 as `{\"task\": …}` without "
     "`kind`); a blocking send follows the task to its end within the timeout, by "
     "`SubscribeToTask` (its card says it streams), by polling `tasks/get` when the dialect "
     "is given without its card"),
    (_F_AGENT, "stream (v1.0; v0.3)", "passed",
     "its v0.3 stream sends v1.0's `task` / `statusUpdate` / `artifactUpdate` members, read "
     "as the v0.3 objects they hold"),
    (_F_AGENT, "get", "passed", ""),
    (_F_AGENT, "cancel a working task", "bug",
     "**Peer bug.** `CancelTask` never answers (v1.0 §3.1.5: the answer is the task or an "
     "error); the client gives up at its timeout. a2a-sdk 1.3.0's client waits the same "
     "way."),
    (_P_CLIENT, "`ask` (`tasks/send` posted to `{url}/tasks/send`, the message under "
     "`content`)", "passed", "read as v0.1 at that path, answered in v0.1"),
    (_P_AGENT, "send (v0.1 at `{url}/tasks/send`)", "passed", ""),
    (_P_AGENT, "stream (v0.1 at `{url}/tasks/stream`)", "passed",
     "its events are bare task objects, each with SSE id 1: read as tasks, none skipped"),
    (_P_AGENT, "reached from its card", "bug",
     "**Peer bug.** its card names JSON-RPC v0.3.0 at `/`, which answers a JSON-RPC request "
     "with HTTP 500 (v0.3.0 schema, `AgentCard.url`: it \"MUST support the transport specified by 'preferredTransport'\"); a2a-sdk "
     "1.3.0's client fails the same way."),
    (_L_AGENT, "send (v1.0; v0.3)", "passed", ""),
    (_L_AGENT, "stream (v1.0; v0.3)", "passed",
     "its v1.0 stream sends `{\"task\": …}` first, then bare v0.3-shaped "
     "`kind: \"status-update\"` / `\"artifact-update\"` events: read as the v1.0 members "
     "they name"),
    (_A_CLIENT, "send (card without gRPC, as `serve` gives by default)", "passed",
     "it reads the v1.0 card, sends over JSON-RPC and reads the answer; the task completes"),
    (_A_CLIENT, "two turns in one session (an input request, then the answer)", "passed",
     "its second turn goes to the `input-required` task (task and context ids kept), which "
     "completes"),
    (_A_CLIENT, "card with gRPC on", "bug",
     "**Peer limit.** it refuses every interface that is not `https://` (or `http://` on "
     "loopback) on the card's origin, so a gRPC interface turns the whole card away; the "
     "specification asks only for an absolute URL (v1.0 §4.4.6 `AgentInterface.url`). "
     "a2a-sdk 1.3.0's card with gRPC is refused the same way. Serve without gRPC for ADK "
     "([gRPC](grpc.md))."),
    (_A_AGENT, "send (v1.0 from its card; v0.3)", "passed", ""),
    (_A_AGENT, "stream (v1.0; v0.3)", "passed",
     "a task, two status updates, the artifact, `completed`"),
    (_S_CLIENT, "send (card with gRPC off and on)", "passed",
     "its client (a2a-sdk 0.3.26 inside) speaks JSON-RPC v0.3; the task completes"),
    (_S_CLIENT, "an input request, then the answer (two calls on one `A2AAgent`)", "bug",
     "**Peer limit.** `A2AAgent` keeps no task or context between calls: the answer starts "
     "a new task and the asking one stays `input-required` (v1.0 §3.4.3: \"the client "
     "continues the interaction by sending a new message with the same `taskId` and "
     "`contextId`\"); a2a-sdk 1.3.0's agent sees the same."),
    (_S_AGENT, "send (v0.3 from its card)", "passed", ""),
    (_S_AGENT, "stream (v0.3)", "passed", ""),
    (_S_AGENT, "get", "passed", ""),
    (_M_CLIENT, "run (made from our card with gRPC off and on, or from the URL alone)",
     "passed", "v1.0 JSON-RPC (a2a-sdk 1.3.0 inside); the task completes"),
    (_M_CLIENT, "streaming run", "passed", ""),
    (_M_CLIENT, "an input request, then the answer (two runs in one session; blocking and "
     "streaming; over JSON-RPC and HTTP+JSON, each picked from our card)", "passed",
     "the session keeps the context and task: the answer goes to the `input-required` task, "
     "which completes"),
    (_M_CLIENT, "background run, then `poll_task` until it settles", "passed",
     "`returnImmediately` answered with the task before it ran; each poll is a `GetTask`"),
    (_M_CLIENT, "gRPC picked from our card (`supported_protocol_bindings=[\"GRPC\"]`)",
     "not-offered",
     "not offered by `A2AAgent` on its own: it fails before any request (\"grpc_channel_factory "
     "is required when using gRPC\": it gives a2a-sdk's `ClientConfig` no channel factory), "
     "with a2a-sdk 1.3.0's gRPC card too; a ready a2a-sdk `Client` can be passed as `client=`"),
    (_M_CLIENT, "an input request seen by polling, then the answer", "bug",
     "**Peer limit.** `poll_task` does not write what it read into the session (still "
     "`submitted`), so the answer goes out as a new task of the same context "
     "(`referenceTaskIds`) and the asking one stays `input-required` (v1.0 §3.4.3: \"the "
     "client continues the interaction by sending a new message with the same `taskId` and "
     "`contextId`\"); a2a-sdk 1.3.0's agent sees the same."),
    (_M_AGENT, "send (v1.0 from its card)", "passed",
     "with the executor streaming, the answer is an artifact; with its default "
     "(`stream=False`), a `working` status message, kept in the task's history"),
    (_M_AGENT, "stream", "passed", "a task, `submitted`, `working`, the artifact, `completed`"),
    (_M_AGENT, "get, cancel a running task, cancel it again", "passed",
     "`canceled`; the second cancel is refused (task not cancelable)"),
    (_M_AGENT, "multi-turn", "not-offered",
     "not offered by the peer: `A2AExecutor` never asks for input"),
    (_M_AGENT, "v0.3", "not-offered",
     "not offered by the peer: the package's hosting serves v1.0 JSON-RPC (a2a-sdk's own "
     "v0.3 compatibility layer is in the a2a-sdk 1.3.0 rows above)"),
    (_B_CLIENT, "send (card with gRPC off and on)", "passed",
     "its client (a2a-sdk 0.3.26 inside) speaks JSON-RPC v0.3 and reads the answer from the "
     "artifact; the task completes"),
    (_B_CLIENT, "stream (our card says `streaming`)", "passed",
     "the artifact's three appended chunks arrive as one text"),
    (_B_CLIENT, "an input request, then the answer (two calls on one `A2AAgent`)", "passed",
     "its second call goes to the `input-required` task (task and context ids kept), which "
     "completes"),
    (_B_CLIENT, "a second call after a completed task", "passed",
     "a new task in the same context, naming the first in `referenceTaskIds`"),
    (_B_CLIENT, "message reply", "passed", ""),
    (_B_AGENT, "send (v0.3 from its card: JSON-RPC; HTTP+JSON; gRPC)", "passed",
     "the answer is the `completed` status's message, with no artifact; its gRPC card "
     "(served over HTTP on a port of its own) names gRPC as a bare `127.0.0.1:PORT`, "
     "dialed as that address"),
    (_B_AGENT, "stream (JSON-RPC; HTTP+JSON; gRPC)", "passed",
     "three status updates (`submitted`, `working`, `completed` with the answer), no task "
     "event"),
    (_B_AGENT, "get (JSON-RPC; HTTP+JSON; gRPC)", "passed", ""),
    (_B_AGENT, "multi-turn (a second message in the first one's context; each binding)",
     "passed",
     "its agent runs with the context's memory: the model sees both turns"),
    (_B_AGENT, "cancel a working task (JSON-RPC)", "bug",
     "**Peer bug.** it refuses to cancel a working task (`TaskNotCancelable`, \"current "
     "state: working\": its executor never says `canceled`), yet signals the abort on its "
     "server's one abort signal, shared by every task: the tasks that follow fail at once "
     "(\"Action has been aborted\"). v1.0 §3.1.5: cancel \"attempts to cancel the "
     "specified task\". a2a-sdk 1.3.0's client sees the same."),
    (_C_CLIENT, "delegate (card with gRPC off and on)", "passed",
     "its client (a2a-sdk 0.3.26 inside) streams over JSON-RPC v0.3 (`message/stream`); our "
     "answer is its task's result"),
    (_C_CLIENT, "an input request, then the answer (two turns of one delegation)", "passed",
     "its second turn goes to the `input-required` task (task and context ids kept), which "
     "completes"),
    (_C_CLIENT, "the same two turns with `PollingConfig` (non-blocking send, then "
     "`tasks/get`)", "passed",
     "its result joins the last agent message of the task's history (\"Where to?\") with "
     "the artifact, by its own reading"),
    (_C_AGENT, "send (v0.3 from its card, at `/a2a`)", "passed", ""),
    (_C_AGENT, "stream (v0.3)", "passed", "one event: the completed task"),
    (_C_AGENT, "get", "passed", ""),
    (_C_AGENT, "send with `blocking: false`", "bug",
     "**Peer bug.** its `execute` publishes no task until the work is done, so the answer "
     "comes only then, completed: the client never holds a running task to follow or cancel "
     "(v0.3.0 `MessageSendConfiguration.blocking`: \"if false, the message will be "
     "non-blocking and the task will be returned immediately\"); a2a-sdk 1.3.0's client "
     "waits the same way."),
    (_C_AGENT, "a second request while a task runs", "bug",
     "**Peer limit.** one CrewAI `Agent` runs one task at a time: the second request fails "
     "with -32603 \"Executor is already running\" (the specification asks nothing here); "
     "a2a-sdk 1.3.0's client gets the same error."),
]


def _wild() -> list[str]:
    lines = [
        "## Other implementations",
        "",
        "Peers that speak a variant of their own, each in a venv of its own "
        "(`tests/interop/test_peers_in_the_wild.py`, `test_peers_adk_strands.py`, "
        "`test_peers_maf.py`, `test_peers_beeai.py`, `test_peers_crewai.py`; the programs are "
        "`tests/interop/peers/{fasta2a,python_a2a,langgraph,adk,strands,maf,beeai,crewai}_*.py`). "
        "interlingua reads what "
        "they send where no meaning is lost and writes only its own dialects "
        "([versions](versions.md#what-other-implementations-send)); their captured bytes are "
        "golden tests (`tests/dialects/test_peer_golden.py`). — marks what the peer does not "
        "offer.",
        "",
        "| pair | case | result |",
        "|---|---|---|",
    ]
    for pair, case, outcome, note in WILD:
        lines.append(f"| {pair} | {case} | {_SYMBOL[outcome]}{' ' + note if note else ''} |")
    return [*lines, ""]


#: the third-party checkers run against interlingua (tests/interop/test_checkers.py):
#: (checker, what is run, outcome, the test that shows it)
CHECKER_ROWS: list[tuple[str, str, str, str]] = [
    ("a2a-lint 0.1.1", "`--live --strict` on every example that is an agent (the "
     "model-backed ones against a stand-in model server on loopback)",
     "✅ grade A, 0 errors, 0 warnings", "test_a2a_lint_grades_the_example_with_no_finding"),
    ("a2a-lint 0.1.1", "`--live --strict`, gRPC on (`--bindings jsonrpc,rest,grpc`)",
     "✅ 0 errors, 0 warnings", "test_a2a_lint_with_grpc_on"),
    ("a2a-lint 0.1.1", "`--live --strict` on `secure_agent.py` served with its `--auth`",
     "❌ **Checker bug.** It sends no credentials and grades the HTTP 401 of the live "
     "send and stream as 2 errors (\"JSON-RPC endpoints should return 200 with errors in "
     "the body\"); the spec names HTTP 401 for missing credentials (v1.0 §3.3.2, "
     "Authentication Errors). a2a-sdk 1.3.0's server behind an API key draws the same "
     "two errors. Served without `--auth`, the agent grades A",
     "test_a2a_lint_cannot_grade_an_agent_behind_credentials, "
     "test_a2a_lint_finds_the_same_on_the_official_sdk_behind_a_key"),
    ("a2a-proof 0.16.0", "`init` then `run` of the generated contract, gRPC off "
     "(JSON-RPC and HTTP+JSON)", "✅ passes", "test_a2a_proof_contract_passes_with_grpc_off"),
    ("a2a-proof 0.16.0", "`init --allow-cross-origin` then `run`, gRPC on (JSON-RPC, "
     "HTTP+JSON, and gRPC with `grpc_tls: false`)", "✅ passes",
     "test_a2a_proof_contract_passes_with_grpc_on"),
    ("a2a-proof 0.16.0", "`init` without `--allow-cross-origin`, gRPC on",
     "❌ **Checker policy.** It refuses a card whose interfaces are not all on the card's "
     "origin with an `http`, `https`, `grpc` or `grpcs` URL; a gRPC service on its own "
     "port is neither (\"unsupported URL: 'dns:///…'\"). The spec sets no such rule "
     "(v1.0 `AgentInterface.url` asks for an absolute URL, HTTPS in production, and "
     "nothing of its origin); a2a-sdk 1.3.0's server with gRPC on draws the same refusal. docs/grpc.md",
     "test_a2a_proof_contract_passes_with_grpc_on, "
     "test_a2a_proof_refuses_the_official_sdk_s_grpc_card_the_same_way"),
]


def _checkers() -> list[str]:
    lines = ["## Checkers", "",
             "Third-party conformance checkers run against `interlingua serve` "
             "(`tests/interop/test_checkers.py`; each checker installed from PyPI in an "
             "environment of its own by `scripts/interop-setup`).", "",
             "| checker | run | result | test |", "|---|---|---|---|"]
    for checker, run, result, tests in CHECKER_ROWS:
        named = ", ".join(f"`{t}`" for t in tests.split(", "))
        lines.append(f"| {checker} | {run} | {result} | {named} |")
    return [*lines, ""]


# ------------------------------------------------------- the committed document

_OUTCOME = {"✅": "passed", "❌": "bug", "⏳": "xfailed"}  # ❌: a bug or a failure, written alike
_TITLES = {title: direction for direction, (title, _) in _DIRECTION.items()}


def _notes(text: str) -> dict[int, Note]:
    """The numbered notes of a rendered matrix, by number."""
    notes: dict[int, Note] = {}
    section = text.split("\n## Notes\n", 1)[1] if "\n## Notes\n" in text else ""
    for number, body in re.findall(r"^(\d+)\. (.*)$", section, re.M):
        kind = next((k for k, label in _LABELS.items() if body.startswith(label)), "info")
        notes[int(number)] = Note(kind, body.removeprefix(_LABELS.get(kind, "")))
    return notes


def parse(text: str) -> tuple[dict[str, str], dict[tuple[str, str, str], Cell]]:
    """A rendered matrix read back: its peers' versions and its cells by (direction, row
    id, op). A row the document names but ``ROWS`` lacks is left out (rendered again, the
    document differs); a ⬜ cell is not filled."""
    notes = _notes(text)
    versions: dict[str, str] = {}
    cells: dict[tuple[str, str, str], Cell] = {}
    direction = ""
    by_label = {(r.direction, r.peer, r.binding, f"v{r.dialect}"): r for r in ROWS}
    for line in text.splitlines():
        if line.startswith(_PEERS):
            for item in line.removeprefix(_PEERS).removesuffix(".").split(", "):
                if found := re.match(r"^(.*?) (\d.*)$", item):
                    versions[found.group(1)] = found.group(2)
        elif line.startswith("## "):
            direction = _TITLES.get(line[3:], "")
        elif line.startswith("| ") and direction and not line.startswith("| pair |"):
            pair, binding, dialect, *marks = [c.strip() for c in line.strip("|").split("|")]
            row = by_label.get((direction, re.sub(r" \[\d+\]$", "", pair), binding, dialect))
            if row is None:
                continue
            for op, mark in zip(OPS, marks, strict=False):
                symbol, _, refs = mark.partition(" ")
                if symbol not in _OUTCOME:
                    continue
                # the marks as render() writes them: "[1, 6]"
                numbers = re.findall(r"\d+", refs)
                cell_notes = [notes[int(n)] for n in numbers if int(n) in notes]
                cells[(direction, row.id, op)] = Cell(_OUTCOME[symbol], cell_notes)
    return versions, cells


def stale(committed: str, ran: dict[tuple[str, str, str], Cell],
          versions: dict[str, str]) -> list[str]:
    """How the committed matrix differs from what ``render`` writes of its own cells with
    the cells of this run in their place (empty: it is current as far as this run can
    tell); a skipped cell is not compared. ``versions``: the peers' versions of ``ROWS`` (a Node.js version is the
    machine's and is taken from the document)."""
    doc_versions, doc_cells = parse(committed)
    # a skipped cell did not run (its peer could not be installed): nothing to check
    ran = {key: cell for key, cell in ran.items() if cell.outcome != "skipped"}
    merged = {**doc_cells, **ran}
    expected = render({**doc_versions, **versions}, merged)
    problems = []
    for key, cell in ran.items():
        was = doc_cells.get(key)
        if was is None:
            problems.append(f"{key}: ⬜ (or no such row) in the document, "
                            f"{_SYMBOL.get(cell.outcome, '?')} now")
        elif (_SYMBOL.get(was.outcome), was.notes) != (_SYMBOL.get(cell.outcome), cell.notes):
            problems.append(f"{key}: {_SYMBOL.get(was.outcome)} {was.notes} in the document, "
                            f"{_SYMBOL.get(cell.outcome)} {cell.notes} now")
    if expected != committed:
        got, want = committed.splitlines(), expected.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                     min(len(got), len(want)))
        problems.append(f"line {first + 1} of the document differs from what render() writes: "
                        f"{got[first] if first < len(got) else '(end)'!r} != "
                        f"{want[first] if first < len(want) else '(end)'!r}")
    return problems
