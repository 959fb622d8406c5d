"""A loopback OpenAI Chat Completions server that replays a script.

Tests point ADK's own `OpenAILlm` (and so the real `openai` client, HTTP and SSE
parsing) at it, instead of faking the model class. It speaks the wire protocol:
non-streaming JSON completions and streamed `chat.completion.chunk` events, including
incremental `tool_calls`.
"""

from __future__ import annotations

import inspect
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ._loopback import LoopbackServer, openai_error, openai_request

__all__ = ["ChatTurn", "EmptyReply", "ErrorReply", "OpenAIScriptServer", "ToolCall"]


@dataclass(frozen=True)
class ToolCall:
    """A tool call to play; `arguments` given as a string is sent verbatim, so a test can
    play a model that writes broken JSON."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorReply:
    """A turn the host refuses: `status` with an OpenAI error body. The `openai` client
    retries 408, 409, 429 and 5xx (twice by default): script one per attempt."""

    status: int
    message: str = "The server had an error while processing your request."
    kind: str = "server_error"
    code: str | int | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    """More members of the error object, as some servers send them (llama.cpp's
    `n_prompt_tokens` and `n_ctx` with a context-size refusal)."""


@dataclass(frozen=True)
class EmptyReply:
    """A completion with no content and no tool call; `refusal` is sent as OpenAI's
    `message.refusal` when given."""

    finish_reason: str = "stop"
    refusal: str | None = None


ChatTurn = (
    str | ToolCall | Sequence[ToolCall] | ErrorReply | EmptyReply | Callable[[dict[str, Any]], Any]
)
"""Text, one or more tool calls, a refusal, an empty reply, or a callable that sees the
request body (a coroutine function too: its awaited result is the turn, and the server
serves other requests while it waits)."""


def _normalise(turn: Any, body: dict[str, Any]) -> tuple[str | None, list[ToolCall]]:
    if callable(turn) and not isinstance(turn, ToolCall):
        return _normalise(turn(body), body)
    if isinstance(turn, str):
        return turn, []
    if isinstance(turn, EmptyReply):
        return None, []
    if isinstance(turn, ToolCall):
        return None, [turn]
    return None, list(turn)


def _estimated_tokens(body: dict[str, Any]) -> int:
    """About four characters a token, over the messages and tools sent."""
    return max(len(json.dumps(body.get("messages", []))) // 4, 1)


class OpenAIScriptServer(LoopbackServer):
    """Serves `/v1/chat/completions` on 127.0.0.1 from a script, one turn per request.

    Use as a context manager; `base_url` is what `OPENAI_BASE_URL` should be set to and
    `requests` holds every JSON body received, for assertions on what the client sent.
    `models` (the `data` of `/v1/models`) and `props` (llama.cpp's `/props`) are served
    when given, so a client can read the context a server reports. `usage="estimate"`
    reports about a token per four characters sent instead of a fixed 10.
    """

    name = "loopback OpenAI"

    def __init__(
        self,
        script: Sequence[ChatTurn] = (),
        *,
        api_key: str = "test-key",
        models: list[dict[str, Any]] | None = None,
        props: dict[str, Any] | None = None,
        usage: str = "fixed",
    ) -> None:
        super().__init__()
        self.script: list[ChatTurn] = list(script)
        self.api_key = api_key
        self.models = models
        self.props = props
        self.usage = usage
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return self.url("/v1")

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1/chat/completions", self._complete, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
            Route("/props", self._props, methods=["GET"]),
        ]

    def _next_turn(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.requests.append(body)
            index = len(self.requests) - 1
            if index >= len(self.script):
                return None
            return self.script[index]

    async def _models(self, request: Request) -> Response:
        if self.models is None:
            return openai_error(404, "Not found", "not_found")
        return JSONResponse({"object": "list", "data": self.models})

    async def _props(self, request: Request) -> Response:
        if self.props is None:
            return openai_error(404, "Not found", "not_found")
        return JSONResponse(self.props)

    async def _complete(self, request: Request) -> Response:
        body = await openai_request(request, self.api_key)
        if isinstance(body, JSONResponse):
            return body
        turn = self._next_turn(body)
        if callable(turn) and not isinstance(turn, ToolCall):
            turn = turn(body)
            if inspect.isawaitable(turn):
                turn = await turn
        if turn is None:
            # 400, not 5xx: the client retries server errors, which would only slow
            # down a test that is already wrong.
            return openai_error(400, f"script exhausted after {len(self.script)} turns", "script")
        if isinstance(turn, ErrorReply):
            return openai_error(turn.status, turn.message, turn.kind, turn.code, **turn.fields)
        content, calls = _normalise(turn, body)
        model = str(body.get("model", "scripted"))
        prompt = _estimated_tokens(body) if self.usage == "estimate" else 10
        usage = {"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5}
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(
                self._stream(model, content, calls, usage if include_usage else None),
                media_type="text/event-stream",
            )
        completion = self._completion(model, content, calls, usage)
        if isinstance(turn, EmptyReply):
            choice = completion["choices"][0]
            choice["finish_reason"] = turn.finish_reason
            choice["message"]["refusal"] = turn.refusal
        return JSONResponse(completion)

    @staticmethod
    def _tool_call_json(index: int, call: ToolCall) -> dict[str, Any]:
        raw = call.arguments
        arguments = raw if isinstance(raw, str) else json.dumps(raw)
        return {
            "id": f"call_{uuid.uuid4().hex[:12]}",
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
            "index": index,
        }

    def _completion(
        self, model: str, content: str | None, calls: list[ToolCall], usage: dict[str, int]
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = [
                {k: v for k, v in self._tool_call_json(i, c).items() if k != "index"}
                for i, c in enumerate(calls)
            ]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": usage,
        }

    async def _stream(
        self, model: str, content: str | None, calls: list[ToolCall], usage: dict[str, int] | None
    ) -> AsyncIterator[str]:
        ident = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
            payload = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            return f"data: {json.dumps(payload)}\n\n"

        yield chunk({"role": "assistant", "content": ""})
        if content:
            # Split into a few pieces so clients really assemble a stream.
            step = max(1, len(content) // 3)
            for start in range(0, len(content), step):
                yield chunk({"content": content[start : start + step]})
        for index, call in enumerate(calls):
            first = self._tool_call_json(index, call)
            arguments = first["function"]["arguments"]
            first["function"]["arguments"] = ""
            yield chunk({"tool_calls": [first]})
            half = len(arguments) // 2
            for piece in (arguments[:half], arguments[half:]):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls" if calls else "stop")
        if usage is not None:
            payload = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": usage,
            }
            yield f"data: {json.dumps(payload)}\n\n"
        yield "data: [DONE]\n\n"
