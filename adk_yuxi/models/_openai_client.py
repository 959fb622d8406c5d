"""An `AsyncOpenAI` client that keeps malformed tool-call arguments visible.

ADK's OpenAI adapter parses each tool call's `arguments` string with `json.loads` and,
when that fails, logs a warning and calls the tool with `{}`: the model never learns
its mistake and a tool without required parameters runs on nothing. This client (given
to `OpenAILlm(client=...)`, a documented parameter) rewrites arguments that are not a
JSON object into `{MALFORMED_ARGUMENTS_KEY: {"error": ..., "raw": ...}}` before ADK
sees them; the repair guard answers such a call with a structured error and the
function never runs (a strict tool would refuse the unknown key anyway).

Streamed argument pieces are held back and delivered whole in one final chunk, since a
stream cannot take back a piece once the adapter has appended it.

Requests go out with the changes of `compatible_request` (local servers' failures on an
assistant message without content and on long string bounds).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from functools import cached_property
from typing import Any

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import (
    Choice,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
)

from ._wire_compat import compatible_request

__all__ = ["MALFORMED_ARGUMENTS_KEY", "GuardedAsyncOpenAI", "checked_arguments"]

MALFORMED_ARGUMENTS_KEY = "__yuxi_malformed_arguments__"
_RAW_KEPT = 2000


def checked_arguments(arguments: str | None) -> str | None:
    """`arguments` if it is empty or a JSON object, else the marker object as JSON."""
    if not arguments:
        return arguments
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        error = f"not valid JSON ({exc.msg} at character {exc.pos})"
    else:
        if isinstance(value, dict):
            return arguments
        error = f"a JSON {type(value).__name__}, not an object of named arguments"
    marker = {"error": error, "raw": arguments[:_RAW_KEPT]}
    return json.dumps({MALFORMED_ARGUMENTS_KEY: marker})


def _check_completion(completion: ChatCompletion) -> ChatCompletion:
    for choice in completion.choices:
        for call in choice.message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is not None:
                function.arguments = checked_arguments(function.arguments) or ""
    return completion


async def _checked_stream(stream: Any) -> AsyncIterator[ChatCompletionChunk]:
    held: dict[int, str] = {}
    last: ChatCompletionChunk | None = None
    async for chunk in stream:
        last = chunk
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                if delta.function is not None and delta.function.arguments:
                    held[delta.index] = held.get(delta.index, "") + delta.function.arguments
                    delta.function.arguments = None
        yield chunk
    if not held or last is None:
        return
    calls = [
        ChoiceDeltaToolCall(
            index=index,
            function=ChoiceDeltaToolCallFunction(arguments=checked_arguments(arguments)),
        )
        for index, arguments in sorted(held.items())
    ]
    yield ChatCompletionChunk(
        id=last.id,
        created=last.created or int(time.time()),
        model=last.model,
        object="chat.completion.chunk",
        choices=[Choice(index=0, delta=ChoiceDelta(tool_calls=calls), finish_reason=None)],
    )


class _Completions:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def create(self, **kwargs: Any) -> Any:
        result = await self._inner.create(**compatible_request(kwargs))
        if kwargs.get("stream"):
            return _checked_stream(result)
        return _check_completion(result)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Chat:
    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.completions = _Completions(inner.completions)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class GuardedAsyncOpenAI(AsyncOpenAI):
    """`AsyncOpenAI` whose chat completions carry malformed arguments as a marker."""

    @cached_property
    def chat(self) -> Any:
        return _Chat(super().chat)
