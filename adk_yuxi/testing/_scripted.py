"""A scripted ADK model for tests: plays turns, records every request it receives."""

from __future__ import annotations

import copy
import inspect
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field, PrivateAttr
from typing_extensions import override

from ..errors import YuxiError
from ..models._request import declared_tool_names

__all__ = ["ScriptExhaustedError", "ScriptedLlm", "Turn", "call", "text"]

Turn = (
    str
    | types.Part
    | types.FunctionCall
    | Sequence[types.Part]
    | LlmResponse
    | Callable[[LlmRequest], Any]
)
"""A scripted model turn: text, a function call, several parts, a ready `LlmResponse`,
or a callable that sees the request and returns any of those (or an awaitable of one:
a test holds the model mid-call that way, as a slow real model would be)."""


class ScriptExhaustedError(YuxiError, AssertionError):
    """The agent asked the model for more turns than the test scripted."""


def call(name: str, /, **args: Any) -> types.Part:
    """A function-call part, e.g. `call("save_note", text="hi")`."""
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def text(value: str) -> types.Part:
    return types.Part(text=value)


def _to_response(turn: Any, request: LlmRequest) -> LlmResponse:
    if callable(turn) and not isinstance(turn, types.Part | LlmResponse):
        return _to_response(turn(request), request)
    if isinstance(turn, LlmResponse):
        return turn
    if isinstance(turn, str):
        parts = [types.Part(text=turn)]
    elif isinstance(turn, types.Part):
        parts = [turn]
    elif isinstance(turn, types.FunctionCall):
        parts = [types.Part(function_call=turn)]
    elif isinstance(turn, Sequence):
        parts = [p if isinstance(p, types.Part) else types.Part(text=str(p)) for p in turn]
    else:
        raise TypeError(f"cannot play a scripted turn of type {type(turn).__name__}")
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=0, candidates_token_count=0, total_token_count=0
    )
    return LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)


class ScriptedLlm(BaseLlm):
    """Plays `script` one turn per model call and keeps a copy of every `LlmRequest`.

    Tests assert on `requests` (or the `tool_names()` shortcut) to check exactly which
    tool declarations and instructions the model saw at each step. Running past the end
    of the script raises `ScriptExhaustedError`, so an agent looping more than expected
    fails the test instead of hanging or passing silently.
    """

    model: str = "scripted"
    script: list[Any] = Field(default_factory=list)
    _cursor: int = PrivateAttr(default=0)
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)

    def __init__(self, script: Sequence[Any] = (), **kwargs: Any) -> None:
        super().__init__(script=list(script), **kwargs)  # type: ignore[call-arg]

    @property
    def requests(self) -> list[LlmRequest]:
        return list(self._requests)

    @property
    def remaining(self) -> int:
        return len(self.script) - self._cursor

    def extend(self, turns: Sequence[Any]) -> None:
        self.script.extend(turns)

    def tool_names(self, index: int = -1) -> list[str]:
        """Function names declared to the model in request `index` (default: the last)."""
        return declared_tool_names(self._requests[index])

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        # A deep copy: ADK reuses and mutates request objects between steps. The tools
        # are shared, not copied (an agent tool holds a whole agent and its runtime).
        tools = llm_request.tools_dict
        llm_request.tools_dict = {}
        try:
            recorded = llm_request.model_copy(deep=True)
        finally:
            llm_request.tools_dict = tools
        recorded.tools_dict = dict(tools)
        self._requests.append(recorded)
        if self._cursor >= len(self.script):
            raise ScriptExhaustedError(
                f"ScriptedLlm ran out of turns after {len(self.script)}; request"
                f" {len(self._requests)} declared tools {declared_tool_names(llm_request)}"
                f" and ended with {_describe(llm_request)}"
            )
        turn = self.script[self._cursor]
        self._cursor += 1
        if callable(turn) and not isinstance(turn, types.Part | LlmResponse):
            turn = turn(llm_request)
            if inspect.isawaitable(turn):
                turn = await turn
        yield _to_response(turn, llm_request)


def _describe(request: LlmRequest) -> str:
    if not request.contents:
        return "no contents"
    last = request.contents[-1]
    shown = copy.copy(last.parts or [])
    return repr([p.model_dump(exclude_none=True) for p in shown])[:300]
