"""One small driver per binding, so a scenario runs unchanged over each of them.

A driver takes canonical calls (``interlingua.core.calls``), puts them on the wire
of its binding and dialect, and hands back canonical results, stream items with
their SSE ids, or a ``Refused`` with the HTTP status and the error's reason or code.
A new binding (gRPC) is one more subclass and one more entry in ``DRIVERS``.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import httpx
import msgspec

from interlingua.core import calls as c
from interlingua.core.dialects import Codec, StreamItem, get_codec
from interlingua.core.dialects.v0_3_protojson import V03ProtoJSONCodec
from interlingua.core.sse import SSEDecoder

__all__ = ["DRIVERS", "Driver", "Refused"]

_any = msgspec.json.Decoder()
_enc = msgspec.json.encode


class Refused(Exception):
    """An error answer: its HTTP status, and what the body says (``reason``: the
    ErrorInfo reason or the JSON-RPC code as text; ``message``)."""

    def __init__(self, status: int, reason: str, message: str, body: Any) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body


class Driver:
    name: str
    #: the protocol version it speaks: "1.0" or "0.3"
    version: str
    codec: Codec
    #: what the binding can do
    lists_tasks = True
    has_tenants = True

    def __init__(self, client: httpx.Client, url: str, headers: dict[str, str] | None = None,
                 tenant: str | None = None) -> None:
        self.client = client
        self.url = url.rstrip("/")
        self.headers = dict(headers or {})
        self.tenant = tenant

    def call(self, call: c.Call) -> c.Result:
        raise NotImplementedError

    def stream(self, call: c.SendMessage | c.SubscribeToTask, *, last_event_id: int | None = None,
               limit: int | None = None) -> list[tuple[int, StreamItem]]:
        raise NotImplementedError

    def _sse(self, method: str, url: str, *, content: bytes | None, headers: dict[str, str],
             limit: int | None, read: Any) -> list[tuple[int, StreamItem]]:
        out: list[tuple[int, StreamItem]] = []
        dec = SSEDecoder()
        give_up = time.monotonic() + 30
        with self.client.stream(method, url, content=content, headers=headers) as resp:
            if resp.status_code != 200 or not resp.headers["content-type"].startswith(
                    "text/event-stream"):
                resp.read()  # refused before the stream began: a plain error answer
                raise self._refused(resp)
            for chunk in resp.iter_raw():
                for ev in dec.feed(chunk):
                    if ev.event == "error":
                        raise self._stream_error(ev.data)
                    assert ev.id is not None
                    out.append((int(ev.id), read(ev.data)))
                    if limit is not None and len(out) >= limit:
                        return out
                assert time.monotonic() < give_up, "the stream did not end"
        return out

    def _refused(self, resp: httpx.Response) -> Refused:
        raise NotImplementedError

    def _stream_error(self, data: bytes) -> Refused:
        raise NotImplementedError


class JSONRPC(Driver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codec = get_codec(self.version)
        if self.version == "1.0":
            self.headers.setdefault("A2A-Version", "1.0")

    def _body(self, call: c.Call) -> bytes:
        if self.tenant is not None and hasattr(call, "tenant"):
            call.tenant = self.tenant
        method, params = self.codec.encode_call(call)
        return (b'{"jsonrpc":"2.0","id":1,"method":' + _enc(method) + b',"params":' + params
                + b"}")

    def call(self, call: c.Call) -> c.Result:
        resp = self.client.post(self.url + "/", content=self._body(call),
                                headers={**self.headers, "Content-Type": "application/json"})
        doc = resp.json()
        if resp.status_code != 200 or "error" in doc:
            raise self._refused(resp)
        return self.codec.decode_result(call, _enc(doc["result"]))

    def stream(self, call: c.SendMessage | c.SubscribeToTask, *, last_event_id: int | None = None,
               limit: int | None = None) -> list[tuple[int, StreamItem]]:
        headers = {**self.headers, "Content-Type": "application/json"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)

        def read(data: bytes) -> StreamItem:
            return self.codec.decode_stream_item(_enc(_any.decode(data)["result"]))

        return self._sse("POST", self.url + "/", content=self._body(call), headers=headers,
                         limit=limit, read=read)

    def _refused(self, resp: httpx.Response) -> Refused:
        doc = resp.json()
        err = doc.get("error", {})
        return Refused(resp.status_code, str(err.get("code")), err.get("message", ""), doc)

    def _stream_error(self, data: bytes) -> Refused:
        err = _any.decode(data).get("error", {})
        return Refused(200, str(err.get("code")), err.get("message", ""), err)


class JSONRPC10(JSONRPC):
    name = "jsonrpc-1.0"
    version = "1.0"


class JSONRPC03(JSONRPC):
    name = "jsonrpc-0.3"
    version = "0.3"
    lists_tasks = False
    has_tenants = False


class REST(Driver):
    prefix = ""

    def _base(self) -> str:
        tenant = "/" + quote(self.tenant, safe="") if self.tenant else ""
        return self.url + tenant + self.prefix

    def _route(self, call: c.Call) -> tuple[str, str, dict[str, Any], bytes | None]:
        """(HTTP method, path, query, body) of ``call``."""
        q = quote
        if isinstance(call, c.SendMessage):
            verb = "message:stream" if call.streaming else "message:send"
            return "POST", f"/{verb}", {}, self.codec.encode_call(call)[1]
        if isinstance(call, c.GetTask):
            query = {} if call.history_length is None else {"historyLength": call.history_length}
            return "GET", f"/tasks/{q(call.id, safe='')}", query, None
        if isinstance(call, c.ListTasks):
            query: dict[str, Any] = {"pageSize": call.page_size}
            if call.context_id:
                query["contextId"] = call.context_id
            if call.status is not None:
                from interlingua.core.dialects._v1_wire import STATE_NAMES

                query["status"] = STATE_NAMES[call.status]
            if call.page_token:
                query["pageToken"] = call.page_token
            if call.include_artifacts:
                query["includeArtifacts"] = "true"
            if call.history_length is not None:
                query["historyLength"] = call.history_length
            return "GET", "/tasks", query, None
        if isinstance(call, c.CancelTask):
            return "POST", f"/tasks/{q(call.id, safe='')}:cancel", {}, b"{}"
        if isinstance(call, c.SubscribeToTask):
            return "GET", f"/tasks/{q(call.id, safe='')}:subscribe", {}, None
        configs = "/tasks/{}/pushNotificationConfigs"
        if isinstance(call, c.SetPushConfig):
            body = self.codec.encode_call(call)[1]
            return "POST", configs.format(q(call.task_id, safe="")), {}, body
        if isinstance(call, c.GetPushConfig):
            path = configs.format(q(call.task_id, safe="")) + "/" + q(call.config_id or "", safe="")
            return "GET", path, {}, None
        if isinstance(call, c.ListPushConfigs):
            return "GET", configs.format(q(call.task_id, safe="")), {}, None
        if isinstance(call, c.DeletePushConfig):
            path = configs.format(q(call.task_id, safe="")) + "/" + q(call.config_id, safe="")
            return "DELETE", path, {}, None
        if isinstance(call, c.GetExtendedCard):
            return "GET", "/card" if self.version == "0.3" else "/extendedAgentCard", {}, None
        raise TypeError(call)

    def call(self, call: c.Call) -> c.Result:
        method, path, query, body = self._route(call)
        headers = {**self.headers}
        if body is not None:
            headers["Content-Type"] = self.content_type
        resp = self.client.request(method, self._base() + path, params=query, content=body,
                                   headers=headers)
        if resp.status_code != 200:
            raise self._refused(resp)
        if isinstance(call, c.GetExtendedCard) and self.version == "0.3":
            from interlingua.core.dialects.v0_3 import decode_card_v03

            return decode_card_v03(resp.json())
        return self.codec.decode_result(call, resp.content)

    def stream(self, call: c.SendMessage | c.SubscribeToTask, *, last_event_id: int | None = None,
               limit: int | None = None) -> list[tuple[int, StreamItem]]:
        method, path, _, body = self._route(call)
        headers = {**self.headers}
        if body is not None:
            headers["Content-Type"] = self.content_type
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        return self._sse(method, self._base() + path, content=body, headers=headers,
                         limit=limit, read=self.codec.decode_stream_item)


class REST10(REST):
    name = "rest-1.0"
    version = "1.0"
    content_type = "application/a2a+json"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codec = get_codec("1.0")
        self.headers.setdefault("A2A-Version", "1.0")

    def _refused(self, resp: httpx.Response) -> Refused:
        doc = resp.json()
        err = doc["error"]
        assert err["code"] == resp.status_code, doc
        infos = [d for d in err.get("details", []) if d.get("@type", "").endswith("ErrorInfo")]
        assert infos and infos[0]["domain"] == "a2a-protocol.org", doc
        return Refused(resp.status_code, infos[0]["reason"], err["message"], doc)

    def _stream_error(self, data: bytes) -> Refused:
        err = _any.decode(data)["error"]
        return Refused(err["code"], err["details"][0]["reason"], err["message"], err)


class REST03(REST):
    name = "rest-0.3"
    version = "0.3"
    prefix = "/v1"
    content_type = "application/json"
    lists_tasks = False
    has_tenants = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codec = V03ProtoJSONCodec()

    def _refused(self, resp: httpx.Response) -> Refused:
        doc = resp.json()
        # the v0.3 JSON-RPC code rides beside the type whenever there is one
        assert set(doc) in ({"message"}, {"code", "message", "type"}), doc
        return Refused(resp.status_code, doc.get("type", ""), doc["message"], doc)

    def _stream_error(self, data: bytes) -> Refused:
        doc = _any.decode(data)
        return Refused(0, doc.get("type", ""), doc["message"], data)


DRIVERS: dict[str, type[Driver]] = {d.name: d for d in (JSONRPC10, JSONRPC03, REST10, REST03)}
