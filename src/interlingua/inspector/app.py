"""The inspector's web server: the page, its JSON API, its live events, the webhook.

``inspector_app()`` is a Starlette app; ``interlingua inspect`` serves it at
the root, ``create_app(..., inspector=True)`` mounts it at ``/inspector``.
All its URLs are relative to where it is mounted.

    GET  /                      the page (static/index.html)
    GET  /static/...            its modules, style and icon
    GET  /favicon.ico           the icon (an SVG), where browsers look for it first
    GET  /api/config            the agent URL to start with, the dialects and bindings
    GET  /api/state             the session's connection, for a page loaded again
    POST /api/connect           {url, dialect?, binding?, auth?} -> the card, checked
    POST /api/send              {text?, data?, files?, taskId?, contextId?, stream?, push?}
    GET  /api/events            SSE: the session's log (frames, events, pushes), resumable
    GET  /api/tasks             ?contextId&status&pageSize&pageToken -> a page of tasks
    GET  /api/tasks/{id}        ?historyLength
    POST /api/tasks/{id}/cancel
    POST /api/tasks/{id}/subscribe   {lastEventId?}
    POST /api/tasks/{id}/push        register the session's webhook for the task
    POST /push/{pushId}         the webhook agents post notifications to

A browser's session is named by an HttpOnly cookie; the credentials it
connected with stay in the server's memory.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..client import DIALECTS, ClientError
from ..client.bindings import BINDINGS
from ..core.errors import A2AError
from ..core.model import TaskState
from ..core.origins import CrossOrigin, Origins
from ..core.push_wire import TOKEN_HEADER
from .session import InspectorError, Session, error_text, file_parts

__all__ = ["COOKIE", "NotFramed", "Sessions", "inspector_app"]

log = logging.getLogger("interlingua.inspector")

STATIC = Path(__file__).parent / "static"
COOKIE = "interlingua_inspector"

Handler = Callable[[Request, Session], Awaitable[Any]]


class Sessions:
    """The sessions of one inspector server, the least recently used dropped first."""

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self._by_id: OrderedDict[str, Session] = OrderedDict()
        self._by_push: dict[str, Session] = {}

    def get(self, sid: str | None) -> Session | None:
        session = self._by_id.get(sid) if sid else None
        if session is not None:
            self._by_id.move_to_end(session.id)
            session.touched = time.monotonic()
        return session

    async def new(self) -> Session:
        session = Session(secrets.token_urlsafe(24))
        self._by_id[session.id] = session
        self._by_push[session.push_id] = session
        while len(self._by_id) > self.limit:
            old = self._idlest()
            del self._by_id[old.id]
            self._by_push.pop(old.push_id, None)
            await old.aclose()
        return session

    def _idlest(self) -> Session:
        """The least recently used session that never connected, else the least recently
        used (the newest is not dropped): requests that make sessions without using them
        must not drop one that is in use."""
        older = list(self._by_id.values())[:-1]
        return next((s for s in older if s.info is None), older[0])

    def by_push_id(self, push_id: str) -> Session | None:
        return self._by_push.get(push_id)

    async def aclose(self) -> None:
        for session in self._by_id.values():
            await session.aclose()
        self._by_id.clear()
        self._by_push.clear()


class NotFramed:
    """Every response says no page may frame it: a framed inspector's requests are its
    own (``Sec-Fetch-Site: same-origin``, the cookie sent), and the user's clicks in it
    would be another page's to ask for."""

    HEADERS = (("X-Frame-Options", "DENY"), ("Content-Security-Policy", "frame-ancestors 'none'"))

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_headed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.HEADERS:
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_headed)


def _base(request: Request) -> str:
    """The inspector's own URL, where it is mounted, with a trailing slash."""
    # root_path is where the app was mounted (base_url names the outermost app's root)
    root = str(request.scope.get("root_path") or "").rstrip("/")
    return str(request.url.replace(path=root + "/", query="", fragment=""))


def _from_another_page(request: Request, own: Origins) -> bool:
    """A browser's request made by a page that is not the inspector's: another site's
    (which sends no cookie: each of its requests would make a session, and drop the
    oldest), or another port's of this host (whose requests carry the cookie). ``own``:
    the origins that are the inspector's own (the request's host; beside an agent, its
    public URL too, and the host a proxy forwarded for)."""
    site = request.headers.get("sec-fetch-site")
    if site == "same-origin":  # (the browser's word, which no page can change)
        return False
    if site is not None and site != "none":
        return True
    origin = request.headers.get("origin")
    if origin is None:  # (a browser names it on every POST; other clients send none)
        return False
    try:
        own.check_request(origin.encode("latin-1"), partial(_raw_header, request.scope))
    except CrossOrigin:
        return True
    return False


def _raw_header(scope: Any, name: bytes) -> bytes | None:
    return next((value for key, value in scope["headers"] if key == name), None)


def _json_typed(request: Request) -> bool:
    # JSON only: a cross-site form cannot post it without the browser asking first
    # (media types are case-insensitive: application/JSON is JSON)
    media_type = request.headers.get("content-type", "").split(";")[0].strip()
    return media_type.lower() == "application/json"


async def _body(request: Request) -> dict[str, Any]:
    try:
        doc = json.loads(await request.body() or b"{}")
    except ValueError:
        raise InspectorError("the request body is not JSON") from None
    except RecursionError:
        raise InspectorError("the request body is JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise InspectorError("the request body must be a JSON object")
    return doc


def _int(value: Any, name: str) -> int | None:
    if value in (None, ""):
        return None
    # int() takes 2.7 (as 2) and true (as 1): only a JSON integer, or its digits
    digits = isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()) is not None
    if isinstance(value, bool) or not (isinstance(value, int) or digits):
        raise InspectorError(f"{name} must be a whole number")
    number = int(value)
    if number < 0:
        raise InspectorError(f"{name} must not be negative")
    return number


#: the states a task listing may be narrowed to, as the page names them ("unknown" is no
#: state a task is listed in: agents read it as no filter, and list every task)
_STATES = tuple(s.value for s in TaskState if s is not TaskState.UNKNOWN)


def _str(value: Any, name: str) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise InspectorError(f"{name} must be text")
    return value.strip() or None


def _text(value: Any, name: str) -> str:
    """Text as written, spaces and all (what is sent to an agent)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InspectorError(f"{name} must be text")
    return value


def inspector_app(default_url: str | None = None, *, on_agent: bool = False,
                  sessions_limit: int = 64, own_origins: Origins | None = None) -> Starlette:
    """The inspector; ``default_url`` is the agent the page offers first.
    ``on_agent``: mounted beside an agent, which is then the one offered. (Served
    alone, ``interlingua inspect`` answers only its own host names in front of it:
    ``host.hosts.AnsweredHosts``.) ``own_origins``: the origins of its own page beside
    the request's host (the agent's public URL, behind a proxy that changes the
    ``Host``); none by default."""
    sessions = Sessions(sessions_limit)
    own = own_origins or Origins()

    def api(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            # refused before a session is looked up, so none is made for them
            if _from_another_page(request, own):
                return JSONResponse({"error": "the inspector answers its own page only"},
                                    status_code=403)
            if request.method == "POST" and not _json_typed(request):
                return JSONResponse({"error": "send JSON (Content-Type: application/json)"},
                                    status_code=415)
            session = sessions.get(request.cookies.get(COOKIE))
            fresh = session is None
            if session is None:
                session = await sessions.new()
            try:
                result = await handler(request, session)
                response: Response = (result if isinstance(result, Response)
                                      else JSONResponse(result))
            except InspectorError as exc:
                response = JSONResponse({"error": str(exc)}, status_code=exc.status)
            except (ClientError, A2AError, ValueError) as exc:
                response = JSONResponse({"error": error_text(exc)}, status_code=502)
            except Exception as exc:  # a line for the page; the traceback goes to the log
                log.exception("inspector request %s failed", request.url.path)
                response = JSONResponse({"error": f"unexpected failure: {error_text(exc)}"},
                                        status_code=500)
            if fresh:
                response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict",
                                    path=request.scope.get("root_path") or "/")
            return response

        return endpoint

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def favicon(request: Request) -> Response:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    async def config(request: Request, session: Session) -> Any:
        start = default_url
        if start is None and on_agent:
            # mounted at /inspector/ below the agent's own URL
            start = _base(request).removesuffix("/").rsplit("/", 1)[0] + "/"
        return {"defaultUrl": start, "dialects": list(DIALECTS),
                "bindings": list(BINDINGS), "states": list(_STATES),
                "webhook": _base(request) + f"push/{session.push_id}"}

    async def state(request: Request, session: Session) -> Any:
        return {"info": session.info}

    async def connect(request: Request, session: Session) -> Any:
        doc = await _body(request)
        url = _str(doc.get("url"), "url")
        if url is None:
            raise InspectorError("give the agent's URL")
        dialect = _str(doc.get("dialect"), "dialect")
        if dialect is not None and dialect not in DIALECTS:
            raise InspectorError(f"unknown dialect {dialect!r}; use one of {', '.join(DIALECTS)}")
        return await session.connect(url, dialect=dialect,
                                     binding=_str(doc.get("binding"), "binding"),
                                     auth=doc.get("auth"),
                                     webhook=_base(request) + f"push/{session.push_id}")

    async def send(request: Request, session: Session) -> Any:
        doc = await _body(request)
        data = doc.get("data")
        stream = doc.get("stream")
        turn = session.send(text=_text(doc.get("text"), "text"),
                            task_id=_str(doc.get("taskId"), "taskId"),
                            context_id=_str(doc.get("contextId"), "contextId"),
                            data=data, files=file_parts(doc.get("files")),
                            stream=stream if isinstance(stream, bool) else None,
                            push=bool(doc.get("push")),
                            webhook=_base(request) + f"push/{session.push_id}")
        return {"turn": turn}

    async def events(request: Request, session: Session) -> Any:
        after = _int(request.headers.get("last-event-id")
                     or request.query_params.get("after"), "Last-Event-ID") or 0

        async def stream() -> AsyncIterator[bytes]:
            yield b": inspector events\n\n"
            async for entry in session.follow(after):
                if entry is None:
                    yield b": keep-alive\n\n"
                    continue
                data = json.dumps(entry, separators=(",", ":"))
                yield f"id: {entry['n']}\ndata: {data}\n\n".encode()

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def tasks(request: Request, session: Session) -> Any:
        q = request.query_params
        status = _str(q.get("status"), "status")
        if status is not None and status not in _STATES:  # (the page's own input: a 400)
            raise InspectorError(f"status must be one of {', '.join(_STATES)}, "
                                 f"not {status!r}")
        return await session.list_tasks(
            context_id=_str(q.get("contextId"), "contextId"), status=status,
            page_size=_int(q.get("pageSize"), "pageSize"),
            page_token=_str(q.get("pageToken"), "pageToken"))

    async def task(request: Request, session: Session) -> Any:
        return await session.get_task(request.path_params["task_id"],
                                      _int(request.query_params.get("historyLength"),
                                           "historyLength"))

    async def cancel(request: Request, session: Session) -> Any:
        return await session.cancel(request.path_params["task_id"])

    async def subscribe(request: Request, session: Session) -> Any:
        doc = await _body(request)
        turn = session.subscribe(request.path_params["task_id"],
                                 _int(doc.get("lastEventId"), "lastEventId"))
        return {"turn": turn}

    async def push(request: Request, session: Session) -> Any:
        return await session.register_push(request.path_params["task_id"],
                                           _base(request) + f"push/{session.push_id}")

    async def webhook(scope: Scope, receive: Receive, send: Send) -> None:
        push_id = scope["path"].rstrip("/").rsplit("/", 1)[-1]
        session = sessions.by_push_id(push_id)
        token = Headers(scope=scope).get(TOKEN_HEADER)
        receiver = session.receiver_for(token) if session is not None else None
        if receiver is None:
            await JSONResponse({"error": "no such webhook"}, status_code=404)(scope, receive,
                                                                            send)
            return
        await receiver(scope, receive, send)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await sessions.aclose()

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/api/config", api(config), methods=["GET"]),
        Route("/api/state", api(state), methods=["GET"]),
        Route("/api/connect", api(connect), methods=["POST"]),
        Route("/api/send", api(send), methods=["POST"]),
        Route("/api/events", api(events), methods=["GET"]),
        Route("/api/tasks", api(tasks), methods=["GET"]),
        Route("/api/tasks/{task_id}", api(task), methods=["GET"]),
        Route("/api/tasks/{task_id}/cancel", api(cancel), methods=["POST"]),
        Route("/api/tasks/{task_id}/subscribe", api(subscribe), methods=["POST"]),
        Route("/api/tasks/{task_id}/push", api(push), methods=["POST"]),
        Mount("/push", app=webhook),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(NotFramed)])
    app.state.sessions = sessions
    return app
