"""`ReactLlm`: tool use for chat models that only write text.

The wrapper describes the tools declared in this step (after gating and retrieval) in
the system prompt, sends the inner model a request without tool declarations, and turns
its `Action:` block into a real `FunctionCall` for the Runner to execute, so gating,
authorization and strict arguments apply unchanged. Past calls and their results are
written back into the conversation as text. A reply that cannot be parsed is sent back
to the inner model with what to fix, up to `format_retries` times within one step; then
the step ends with a `REACT_PARSE_FAILED` error event. Generation stops where the model
would write an `Observation` itself (`REACT_STOPS`): a weak model goes on after its
`Action Input` and invents the tool's result, and the turns after it.

Select it with `YUXI_MODEL=react/<any other accepted form>` or `ReactLlm(inner=...)`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field
from typing_extensions import override

from ._errors import REACT_PARSE_FAILED
from ._react_format import (
    ReactParseError,
    action_text,
    observation_text,
    parse_reply,
    tools_prompt,
)
from ._request import system_instruction_text

__all__ = ["REACT_PARSE_FAILED", "REACT_PREFIX", "ReactLlm"]

REACT_PREFIX = "react/"
REACT_STOPS = ("\nObservation",)
"""Stop sequences of every ReAct request: the result is the tool's to write."""


def _declarations(request: LlmRequest) -> list[types.FunctionDeclaration]:
    found: list[types.FunctionDeclaration] = []
    for tool in (request.config.tools or []) if request.config else []:
        if isinstance(tool, types.Tool):
            found.extend(tool.function_declarations or [])
    return found


def _as_text(content: types.Content) -> types.Content:
    """One history entry with calls and results written out as ReAct text."""
    texts: list[str] = []
    for part in content.parts or []:
        if part.function_call is not None:
            texts.append(action_text(part.function_call))
        elif part.function_response is not None:
            texts.append(observation_text(part.function_response))
        elif part.text and not part.thought:
            texts.append(part.text)
        elif part.text and part.thought and content.role == "model":
            texts.append(f"Thought: {part.text}")
    return types.Content(role=content.role, parts=[types.Part(text="\n".join(texts))])


def _text_of(response: LlmResponse) -> str:
    parts = response.content.parts if response.content else None
    return "".join(p.text for p in parts or [] if p.text and not p.thought)


def _reply(parts: list[types.Part], usage: Any) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=parts), usage_metadata=usage, turn_complete=True
    )


class ReactLlm(BaseLlm):
    """Wraps any `BaseLlm` (usually a text-only chat model) with the ReAct protocol."""

    inner: BaseLlm
    format_retries: int = Field(default=2, ge=0, le=5)
    model: str = ""

    def model_post_init(self, context: Any, /) -> None:
        if not self.model:
            self.model = f"{REACT_PREFIX}{self.inner.model}"

    def text_request(self, request: LlmRequest) -> LlmRequest:
        """The request the inner model gets: tools in the prompt, none declared."""
        declarations = _declarations(request)
        instruction = system_instruction_text(request)
        if declarations:
            instruction = f"{instruction}\n\n{tools_prompt(declarations)}".strip()
        # A shallow copy: only top-level fields are replaced, nothing nested is changed.
        config = request.config or types.GenerateContentConfig()
        stops = list(config.stop_sequences or [])
        stops += [stop for stop in REACT_STOPS if stop not in stops]
        config = config.model_copy(
            update={
                "tools": None,
                "tool_config": None,
                "system_instruction": instruction or None,
                "stop_sequences": stops,
            }
        )
        contents = [_as_text(c) for c in request.contents or []]
        return LlmRequest(model=self.inner.model, contents=contents, config=config)

    async def _ask(self, request: LlmRequest, stream: bool) -> LlmResponse:
        final: LlmResponse | None = None
        pieces: list[str] = []
        async for response in self.inner.generate_content_async(request, stream=stream):
            if response.partial:
                pieces.append(_text_of(response))
            else:
                final = response
        if final is None:
            return _reply([types.Part(text="".join(pieces))], None)
        return final

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        request = self.text_request(llm_request)
        declared = {d.name for d in _declarations(llm_request)}
        for attempt in range(self.format_retries + 1):
            response = await self._ask(request, stream)
            if response.error_code:
                yield response
                return
            text = _text_of(response)
            try:
                reply = parse_reply(text)
            except ReactParseError as problem:
                if attempt == self.format_retries:
                    yield LlmResponse(
                        error_code=REACT_PARSE_FAILED,
                        error_message=f"the model's reply could not be parsed: {problem}",
                        turn_complete=True,
                    )
                    return
                repair = f"Your last reply could not be used: {problem}. Reply again in the format."
                request.contents.append(types.Content(role="model", parts=[types.Part(text=text)]))
                request.contents.append(types.Content(role="user", parts=[types.Part(text=repair)]))
                continue
            parts: list[types.Part] = []
            if reply.thought:
                parts.append(types.Part(text=reply.thought, thought=True))
            if reply.action is not None and declared:
                call = types.FunctionCall(name=reply.action, args=reply.arguments or {})
                parts.append(types.Part(function_call=call))
            else:
                parts.append(types.Part(text=reply.answer if reply.answer is not None else text))
            yield _reply(parts, response.usage_metadata)
            return
