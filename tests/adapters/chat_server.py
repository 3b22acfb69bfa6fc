"""A stand-in for an OpenAI-compatible chat-completions server, for tests (no network).

It speaks the wire format of the real API: ``POST /v1/chat/completions``,
answered as one ``chat.completion`` object, or with ``"stream": true`` as
server-sent events of ``chat.completion.chunk`` objects ending in
``data: [DONE]``. Its "model" is a script:

* with tools offered and none called yet since the user's last message, it
  calls every tool once, each of its required parameters set to the user's
  text (``{"message": <text>}`` when it declares none);
* after tool results, it answers ``Combined: <result>; <result>``;
* otherwise it answers ``You said: <text> (turn N)``, N counting the user
  messages it was sent: so the history sent shows in the answer;
* the model ``broken`` answers HTTP 500 with an OpenAI-style error body,
  ``slow`` waits between tokens, and ``cut`` streams two tokens and then an
  error event; ``garbled`` streams two tokens and then a line that is no JSON,
  ``empty`` a stream without content, ``whole`` one ``chat.completion`` object
  whatever was asked (a server that ignores ``stream``), and ``halves`` an emoji
  split into its two UTF-16 halves across two chunks, as JSON escapes them;
  ``hang`` never answers, ``dropped`` streams two tokens and then closes
  the connection mid-answer, ``chatty`` says "Let me check." before it calls
  tools (as models do), and ``loops`` calls its tools again after their results.

Every request body is kept in ``requests`` for the tests to look at.

    python -m tests.adapters.chat_server PORT     # serve it on its own
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = ["ChatServer"]


class ChatServer:
    def __init__(self, token_delay: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        #: ids of the streamed answers sent to their end
        self.completed: list[str] = []
        #: ids of the streamed answers over: sent to their end, or dropped by the client
        self.ended: list[str] = []
        self.token_delay = token_delay
        self.app = Starlette(routes=[
            Route("/v1/chat/completions", self.completions, methods=["POST"]),
            Route("/v1/models", self.models, methods=["GET"]),
        ])

    async def models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [
            {"id": "stand-in", "object": "model", "created": 0, "owned_by": "tests"}]})

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        model = body.get("model", "")
        if model == "broken":
            return JSONResponse({"error": {"message": "the model is out of order",
                                           "type": "server_error", "code": None}},
                                status_code=500)
        if model == "hang":
            while not await request.is_disconnected():  # until the client gives up
                await asyncio.sleep(0.05)
            return Response(status_code=499)
        messages = body["messages"]
        calls, text = self._script(messages, body.get("tools") or [], again=model == "loops")
        if calls and model == "chatty":
            text = "Let me check."
        ident = f"chatcmpl-{len(self.requests)}"
        if not body.get("stream") or model == "whole":
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = calls
            return JSONResponse({
                "id": ident, "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": [{
                    "index": 0, "message": message,
                    "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            })
        delay = 0.2 if model == "slow" else self.token_delay
        return StreamingResponse(self._ending(ident, self._stream(ident, model, calls, text,
                                                                  delay, self.completed)),
                                 media_type="text/event-stream")

    async def _ending(self, ident: str, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            self.ended.append(ident)

    @staticmethod
    def _script(messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                again: bool = False) -> tuple[list[dict[str, Any]], str | None]:
        users = [m for m in messages if m["role"] == "user"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        results = [m["content"] for m in messages[last_user:] if m["role"] == "tool"]
        if tools and (again or not results):
            text = users[-1]["content"]
            calls = [{"id": f"call_{i}", "type": "function", "function": {
                "name": t["function"]["name"],
                "arguments": json.dumps(dict.fromkeys(
                    t["function"].get("parameters", {}).get("required") or ["message"], text))}}
                for i, t in enumerate(tools)]
            return calls, None
        if results:
            return [], "Combined: " + "; ".join(results)
        return [], f"You said: {users[-1]['content']} (turn {len(users)})"

    @staticmethod
    async def _stream(ident: str, model: str, calls: list[dict[str, Any]], text: str | None,
                      delay: float, completed: list[str]) -> AsyncIterator[bytes]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            obj = {"id": ident, "object": "chat.completion.chunk", "created": int(time.time()),
                   "model": model, "choices": [
                       {"index": 0, "delta": delta, "finish_reason": finish}]}
            return f"data: {json.dumps(obj)}\n\n".encode()

        yield chunk({"role": "assistant", "content": ""})
        if model == "empty":
            yield chunk({}, "stop")
            yield b"data: [DONE]\n\n"
            return
        if model == "halves":
            yield chunk({"content": "Smile "})
            yield b'data: ' + json.dumps({"id": ident, "object": "chat.completion.chunk",
                                          "created": 0, "model": model, "choices": [{
                                              "index": 0, "delta": {"content": "\ud83d"},
                                              "finish_reason": None}]}).encode() + b"\n\n"
            yield b'data: ' + json.dumps({"id": ident, "object": "chat.completion.chunk",
                                          "created": 0, "model": model, "choices": [{
                                              "index": 0, "delta": {"content": "\ude00!"},
                                              "finish_reason": None}]}).encode() + b"\n\n"
            yield chunk({}, "stop")
            yield b"data: [DONE]\n\n"
            return
        if calls and text is not None:  # what a model says before its calls comes first
            yield chunk({"content": text})
            text = None
        for i, call in enumerate(calls):
            # as the real API does: id and name first, the arguments in pieces
            args = call["function"]["arguments"]
            yield chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                         "function": {"name": call["function"]["name"],
                                                      "arguments": ""}}]})
            for piece in (args[: len(args) // 2], args[len(args) // 2:]):
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
        if text is not None:
            words = text.split(" ")
            for i, word in enumerate(words):
                if delay:
                    await asyncio.sleep(delay)
                if model == "cut" and i == 2:
                    error = {"error": {"message": "the model stopped", "type": "server_error"}}
                    yield f"data: {json.dumps(error)}\n\n".encode()
                    return
                if model == "dropped" and i == 2:
                    raise ConnectionAbortedError("the server went away mid-answer")
                if model == "garbled" and i == 2:
                    yield b"data: {this is no json\n\n"
                    return
                yield chunk({"content": word if i == 0 else " " + word})
        yield chunk({}, "tool_calls" if calls else "stop")
        yield b"data: [DONE]\n\n"
        completed.append(ident)


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(ChatServer().app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
