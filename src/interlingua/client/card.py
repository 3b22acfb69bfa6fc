"""Finding an agent's card and choosing how to talk to it.

A card is looked up at ``/.well-known/agent-card.json`` (v0.3+) and then at
``/.well-known/agent.json`` (v0.1-v0.2, DIALECTS.md §i.23), below the URL
given. A card with ``supportedInterfaces`` is read as v1.0 (the hybrid cards
of v1.0 servers carry the v0.3 fields too); anything else as v0.2/v0.3.

A place that answers 503 with ``Retry-After`` (a server starting, such as a
gateway that has not heard the mesh for long enough yet) is asked again after
that many seconds (never sooner than a backoff, and a few times at most), while
the client's timeout allows.

From the card come the *endpoints*: (dialect, URL, binding) triples in the
order to try them, for the bindings the client speaks. A v1.x interface
wins (one that says 1.1 before one that says 1.0: it adds task generations),
a v0.x one comes next; within a version, the card's order decides.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from urllib.parse import urljoin, urlsplit

import msgspec

from ..core.dialects import SPOKEN
from ..core.errors import A2AError
from ..core.model import AgentCard, AgentInterface
from ..core.reading import ascii_int, past_bom
from ..core.urls import url_below
from ..grpc_wire.address import dns_target
from .errors import BadResponse, CardNotFound, ClientError, DialectMismatch, InvalidCard
from .generations import GENERATIONS_VERSION
from .grpc_target import target_of
from .transport import DEFAULT_TIMEOUT, HTTPReply, Transport

__all__ = [
    "WELL_KNOWN_PATHS",
    "Endpoint",
    "FetchedCard",
    "card_urls",
    "dialect_of_version",
    "endpoints",
    "fetch_card",
    "interface_of",
    "interface_url",
    "minor_version_of",
    "parse_card",
    "url_fault",
]

WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")

_json = msgspec.json.Decoder()

#: a place that answers "not yet" (503 with Retry-After) is asked again this many times
#: in a row at most, each time after as long as it says or, if that is shorter, a
#: backoff as a stream's resumption waits (0.25 s, doubling, up to 8 s)
NOT_YET_RETRIES = 5
NOT_YET_BACKOFF = 0.25
NOT_YET_MAX_BACKOFF = 8.0


class Endpoint(msgspec.Struct, frozen=True):
    """Where and how to send calls: ``dialect`` is ``"1.0"``, ``"0.3"`` or ``"0.1"``,
    ``binding`` the card's name of the binding (``"JSONRPC"``, ``"HTTP+JSON"``).
    ``version``: a later minor version of the dialect spoken there (``"1.1"``, whose
    calls are v1.0's plus task generations), empty for the dialect itself."""

    dialect: str
    url: str
    binding: str = "JSONRPC"
    #: the tenant the card says to name in each request there (``AgentInterface.tenant``)
    tenant: str | None = None
    version: str = ""

    @property
    def a2a_version(self) -> str:
        """What the requests say in ``A2A-Version``."""
        return self.version or self.dialect


class FetchedCard(msgspec.Struct, frozen=True):
    card: AgentCard
    #: the card exactly as served
    document: bytes
    #: where it was found
    url: str


def card_urls(url: str) -> list[str]:
    """The URLs to look for a card at: ``url`` itself if it names a ``.json``
    document, else the two well-known paths below it, then (for a URL with a
    path, such as a JSON-RPC endpoint's) the two at the root of its origin."""
    parts = urlsplit(url)
    if parts.path.endswith(".json"):
        return [url]
    out = [url_below(url, path) for path in WELL_KNOWN_PATHS]
    if parts.path.strip("/"):
        origin = f"{parts.scheme}://{parts.netloc}"
        out += [origin + path for path in WELL_KNOWN_PATHS]
    return out


def parse_card(document: bytes) -> AgentCard:
    """A card document of any version -> the canonical card (``InvalidCard`` if unusable)."""
    try:
        # a card file may be saved with a UTF-8 byte order mark (RFC 8259 §8.1 lets a
        # reader ignore one, as the client does in every answer)
        doc = _json.decode(past_bom(document))
    except msgspec.DecodeError as exc:
        raise InvalidCard(f"the agent card is not JSON: {exc}") from None
    except RecursionError:
        raise InvalidCard("the agent card is JSON nested too deeply to read") from None
    if not isinstance(doc, dict):
        raise InvalidCard("the agent card is not a JSON object")
    try:
        if "supportedInterfaces" in doc:
            from ..core.dialects.v1_0 import decode_card_v1

            return decode_card_v1(doc)
        if "protocolVersion" not in doc and "authentication" in doc:
            # The v0.1 card shape: `authentication`, no protocol version.
            from ..core.dialects.v0_1 import decode_card_v01

            return decode_card_v01(doc)
        from ..core.dialects.v0_3 import decode_card_v03

        return decode_card_v03(doc)
    except A2AError as exc:
        raise InvalidCard(exc.message) from None


def dialect_of_version(version: str) -> str | None:
    """A card's protocol version -> the dialect this client speaks for it, if any."""
    major, _, rest = version.strip().lstrip("v").partition(".")
    major_n = ascii_int(major)  # (a card is the peer's to write: "²" is no number)
    if major_n is None:
        return None
    if major_n >= 1:
        return "1.0"
    minor = rest.partition(".")[0]
    # v0.2 and v0.3 JSON-RPC are one wire family (DIALECTS.md §a.3).
    if (ascii_int(minor) or 0) >= 2:
        return "0.3"
    if minor == "1":
        return "0.1"
    return None


def minor_version_of(version: str) -> str:
    """A card's 1.x protocol version -> the later minor version this client speaks for
    it (``"1.1"`` for 1.1 and after), or ``""`` for 1.0 itself and anything else."""
    major, _, rest = version.strip().lstrip("v").partition(".")
    minor = rest.partition(".")[0]
    if major == "1" and (ascii_int(minor) or 0) >= 1:
        return GENERATIONS_VERSION
    return ""


_RANK = {d: i for i, d in enumerate(SPOKEN)}


def endpoints(card: AgentCard, card_url: str | None = None,
              bindings: Mapping[str, tuple[str, ...]] | None = None) -> list[Endpoint]:
    """The card's endpoints this client can speak, best first.

    ``bindings`` maps a card's binding name to the dialects spoken over it
    (default: JSON-RPC in every dialect). The newest dialect wins; within one
    dialect the card's order (the agent's preference) decides.

    Raises ``DialectMismatch`` when there is none (say, a gRPC-only agent), and
    ``InvalidCard`` when the only ones it speaks name URLs no agent can be at.
    """
    spoken = dict(bindings) if bindings is not None else {"JSONRPC": SPOKEN}
    found: list[Endpoint] = []
    offered: list[str] = []
    broken: list[str] = []  # why each interface in a binding spoken was passed over
    for iface in card.interfaces:
        binding = iface.binding.upper()
        try:
            url = interface_url(binding, iface.url, card_url)
        except InvalidCard as exc:
            # passed over, as an interface in a binding not spoken: another may work
            offered.append(f"{iface.binding} {iface.protocol_version} at {iface.url!r}")
            if binding in spoken:
                broken.append(str(exc))
            continue
        offered.append(f"{iface.binding} {iface.protocol_version} at {url}")
        dialects = spoken.get(binding)
        if dialects is None:
            continue
        dialect = dialect_of_version(iface.protocol_version)
        if dialect is None or dialect not in dialects:
            continue
        ep = Endpoint(dialect, url, binding, tenant=iface.tenant or None,
                      version=minor_version_of(iface.protocol_version))
        if ep not in found:
            found.append(ep)
        older = dialect_of_version("0.1")
        if iface.protocol_version == "0.2" and older is not None and older in dialects:
            # A card without protocolVersion (v0.2.0-0.2.4, or an older peer):
            # v0.1 is the next thing to try there.
            old = Endpoint(older, url, binding)
            if old not in found:
                found.append(old)
    # the newest dialect, 1.1 before 1.0; stable: the card's order within a version
    found.sort(key=lambda ep: (_RANK[ep.dialect], not ep.version))
    if not found and broken:
        raise InvalidCard("; ".join(broken))  # the card's fault, not the client's
    if not found:
        what = "; ".join(offered) if offered else "no interfaces at all"
        speaks = ", ".join(f"{b} {'/'.join(d)}" for b, d in spoken.items())
        raise DialectMismatch(
            f"agent {card.name!r} offers no interface this client speaks ({speaks}): {what}"
        )
    return found


def interface_of(card: AgentCard, endpoint: Endpoint, card_url: str | None) -> int | None:
    """Which of ``card``'s interfaces ``endpoint`` is (its index, the first such), None
    when the card lists it in none: the same binding and version, at the address calls
    go to (a gRPC one's ``host:port``; an HTTP one's URL with or without its last slash,
    the API key carried into its query aside)."""
    where = _place(endpoint.binding, endpoint.url)
    for n, iface in enumerate(card.interfaces):
        if _is(iface, endpoint, where, card_url):
            return n
    return None


def _is(iface: AgentInterface, endpoint: Endpoint, where: tuple[object, ...],
        card_url: str | None) -> bool:
    binding = iface.binding.upper()
    # the version spoken there too: a 1.1 interface is not a 1.0 client's, nor the reverse
    version = iface.protocol_version
    if binding != endpoint.binding or dialect_of_version(version) != endpoint.dialect \
            or minor_version_of(version) != endpoint.version:
        return False
    try:
        return _place(binding, interface_url(binding, iface.url, card_url)) == where
    except InvalidCard:
        return False


def _place(binding: str, url: str) -> tuple[object, ...]:
    """Where calls to ``url`` in ``binding`` go, as comparable."""
    if binding == "GRPC":
        try:
            return target_of(url)
        except ClientError:
            return (url,)
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return (url,)
    scheme = parts.scheme.lower()
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port, parts.path.rstrip("/")


def interface_url(binding: str, url: str, card_url: str | None) -> str:
    """Where a card's interface is: a gRPC one's ``host:port`` as a gRPC address,
    any other resolved against the URL the card was read from (``InvalidCard`` when
    no agent can be reached at it: the card is the peer's to write)."""
    if binding.upper() == "GRPC":
        return _grpc_url(url, card_url)
    # checked as given (urljoin cannot split every URL), then as resolved ("//h:99999")
    fault = url_fault(url)
    if fault is None:
        url = urljoin(card_url, url) if card_url else url
        fault = url_fault(url)
    if fault is not None:
        raise InvalidCard(f"the card's {binding} interface: {fault}")
    return url


def url_fault(url: str) -> str | None:
    """What makes ``url`` one no agent can be reached at (a port past 65535, a bracket
    left open), or None: the one check of an agent's URL, the caller's or a card's."""
    try:
        urlsplit(url).port  # noqa: B018 (urllib checks the host and port when read)
    except ValueError as exc:
        return f"{url!r} is not a URL an agent can be reached at: {exc}"
    return None


def _grpc_url(url: str, card_url: str | None) -> str:
    """A card's gRPC address (``host:port``, not a URL to resolve against the card's):
    a bare or ``dns:///`` one is TLS when the card was read over HTTPS (``grpcs://``)."""
    url = dns_target(url.strip())
    if "://" in url:
        return url
    secure = card_url is not None and card_url.lower().startswith("https://")
    return ("grpcs://" if secure else "grpc://") + url


async def fetch_card(transport: Transport, url: str, headers: Mapping[str, str]) -> FetchedCard:
    """Fetch and read the card for ``url`` (an agent's base URL or a card's URL).

    Raises ``CardNotFound`` when every place answers "not found" (or a web page,
    such as a site's catch-all page), ``InvalidCard`` when a JSON document was
    found but is no card, and
    ``BadResponse`` for other refusals (401, 500 ...), which say that
    something is there.
    """
    tried: list[str] = []
    invalid: InvalidCard | None = None
    refused: BadResponse | None = None
    get_headers = {"Accept": "application/json", **headers}
    timeout = getattr(transport, "timeout", DEFAULT_TIMEOUT)
    deadline = time.monotonic() + (DEFAULT_TIMEOUT if timeout is None else timeout)
    for candidate in card_urls(url):
        reply = await transport.get(candidate, get_headers)
        for attempt in range(1, NOT_YET_RETRIES + 1):
            later = retry_after(reply) if reply.status == 503 else None
            if later is None:
                break
            # "not yet": asked again as the server says, but never at once (a server
            # that says 0 would be asked without pause until the timeout)
            wait = max(later, min(NOT_YET_MAX_BACKOFF, NOT_YET_BACKOFF * 2.0 ** (attempt - 1)))
            if time.monotonic() + wait >= deadline:
                break
            await asyncio.sleep(wait)
            reply = await transport.get(candidate, get_headers)
        if not reply.ok:
            said = server_text(reply)
            tried.append(f"{candidate}: HTTP {reply.status}{said}")
            if reply.status not in _ABSENT and refused is None:
                refused = BadResponse(
                    f"{candidate} answered HTTP {reply.status} to a request for the agent "
                    f"card{said}",
                    status=reply.status,
                )
            continue
        if not_a_document(reply):
            # a web page where the card would be (a site's catch-all page): no card
            # here, so the next place is asked, as after a 404
            tried.append(f"{candidate}: HTTP {reply.status}{server_text(reply)}")
            continue
        try:
            card = parse_card(reply.content)
        except InvalidCard as exc:
            tried.append(f"{candidate}: {exc}")
            if invalid is None:
                invalid = InvalidCard(f"{candidate}: {exc}")
            continue
        return FetchedCard(card=card, document=reply.content, url=candidate)
    if invalid is not None:
        raise invalid
    if refused is not None:
        raise refused
    raise CardNotFound(f"no agent card found ({'; '.join(tried)})")


def retry_after(reply: HTTPReply) -> float | None:
    """The seconds of a ``Retry-After`` header (None: none, or an HTTP date)."""
    value = reply.headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 <= seconds < 86400 else None


def not_a_document(reply: HTTPReply) -> bool:
    """``reply`` is no JSON document at all: an HTML page, or a body that is not JSON
    and does not say it is (a card served as JSON that is malformed is a broken card,
    said as such)."""
    kind = reply.content_type
    if kind == "application/json" or kind.endswith("+json"):
        return False
    try:
        _json.decode(past_bom(reply.content))
    except (msgspec.DecodeError, RecursionError):
        return True
    return False


def server_text(reply: HTTPReply, limit: int = 300) -> str:
    """``": <what the server said>"`` for a refusal: the message of a JSON error
    body (``{"error": {"message"}}``, ``{"message"}``, ``{"detail"}``), else the
    start of the body as text; empty when it said nothing."""
    text = ""
    try:
        doc = _json.decode(reply.content)
    except (msgspec.DecodeError, RecursionError):
        doc = None
    if isinstance(doc, dict):
        error = doc.get("error")
        for value in (error.get("message") if isinstance(error, dict) else error,
                      doc.get("message"), doc.get("detail"), doc.get("title")):
            if isinstance(value, str) and value.strip():
                text = value
                break
    if not text and doc is None:
        text = html_summary(reply) or reply.content[:limit].decode("utf-8", "replace")
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[:limit] + "…"
    return f": {text}" if text else ""


def html_summary(reply: HTTPReply) -> str | None:
    """``reply``'s body as "an HTML page titled '...'" when it is a web page (a web
    server's error page: its title says it, its markup only lengthens the one line an
    error is), else None."""
    start = reply.content[:4096].decode("utf-8", "replace")
    if reply.content_type != "text/html" and start.lstrip()[:1] != "<":
        return None
    title = _TITLE.search(start)
    return f"an HTML page titled {' '.join(title[1].split())!r}" \
        if title and title[1].strip() else "an HTML page"


_TITLE = re.compile(r"<title[^>]*>([^<]*)</title>", re.IGNORECASE)

# statuses that mean "no card here" rather than "a card you may not read"
_ABSENT = frozenset({404, 405, 410})
