"""Structured output with tools on models that cannot pair a response schema with tools
(the OpenAI-compatible path): tools first, then a final answer validated on the schema.

ADK already offers the final answer as a tool, `set_model_response`, when an agent has
an output schema and tools. What it leaves open is a model that answers in plain text
instead: the text would end the run unvalidated. This plugin submits such a final text
answer through `set_model_response` on the model's behalf (parsed as JSON; text that is
not JSON is sent as malformed arguments), so one validation path checks every final
answer and an invalid one goes back to the model through the repair guard, within the
shared budget, until the run ends with a clear error event.

While streaming, the text the model writes at a step that answers through
`set_model_response` is a draft, not the answer: its partial events carry
`custom_metadata[DRAFT_METADATA_KEY] = True`, so a client can tell a draft (perhaps
rejected and repaired) from the answer, the final event built from `set_model_response`.
"""

from __future__ import annotations

import json
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.set_model_response_tool import SetModelResponseTool
from google.genai import types
from typing_extensions import override

from ..errors import RunStopped
from ..models import MALFORMED_ARGUMENTS_KEY
from ._budget import remember
from ._run_scoped import RunScoped

__all__ = [
    "DRAFT_METADATA_KEY",
    "STRUCTURED_PLUGIN_NAME",
    "StructuredAnswerInvalid",
    "StructuredOutputPlugin",
]

STRUCTURED_PLUGIN_NAME = "yuxi_structured_output"
DRAFT_METADATA_KEY = "yuxi_draft"
"""In an event's `custom_metadata`: this streamed text is a draft of a structured answer,
not the answer."""


class StructuredAnswerInvalid(RunStopped):
    """The final answer never matched the output schema: it was sent back for repair
    until the run's failure budget was spent, or it failed at the run's last model call
    (no call was left to repair it). The event's text names the schema."""

    CODE = "INVALID_STRUCTURED_ANSWER"
    PUBLIC_TEXT = "the final answer did not match the required output schema"

    @classmethod
    def public_text(cls, schema: str) -> str:
        return f"{cls.PUBLIC_TEXT} {schema!r}"


def _response_parameters(request: LlmRequest) -> list[str] | None:
    """The parameter names of `set_model_response` if this step declares it."""
    if SetModelResponseTool.NAME not in request.tools_dict:
        return None
    for tool in (request.config.tools or []) if request.config else []:
        if not isinstance(tool, types.Tool):
            continue
        for declaration in tool.function_declarations or []:
            if declaration.name != SetModelResponseTool.NAME:
                continue
            schema = declaration.parameters_json_schema
            if schema is None and declaration.parameters is not None:
                return list((declaration.parameters.properties or {}).keys())
            return list(((schema or {}).get("properties") or {}).keys())
    return None


def fenced_body(text: str) -> str:
    """The answer without a ``` fence (optionally tagged `json`) around all of it.

    String operations only: the answer is untrusted model output read on the event loop,
    and a fence pattern with lazy and greedy blanks costs cubic time on a long unclosed one.
    """
    stripped = text.strip()
    if len(stripped) < 6 or not (stripped.startswith("```") and stripped.endswith("```")):
        return stripped
    inner = stripped[3:-3]
    if inner[:4].lower() == "json":
        inner = inner[4:]
    return inner.strip()


def _arguments(text: str, parameters: list[str]) -> dict[str, Any]:
    body = fenced_body(text)
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        error = f"the final answer is not JSON ({exc.msg} at character {exc.pos})"
        return {MALFORMED_ARGUMENTS_KEY: {"error": error, "raw": body[:2000]}}
    if parameters == ["items"] and isinstance(value, list):
        return {"items": value}
    if parameters == ["response"]:
        return {"response": value}
    if isinstance(value, dict):
        return value
    error = f"the final answer is a JSON {type(value).__name__}, not an object"
    return {MALFORMED_ARGUMENTS_KEY: {"error": error, "raw": body[:2000]}}


class StructuredOutputPlugin(RunScoped, BasePlugin):
    def __init__(self, *, name: str = STRUCTURED_PLUGIN_NAME) -> None:
        super().__init__(name=name)
        self._parameters: dict[str, list[str]] = {}

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        parameters = _response_parameters(llm_request)
        if parameters is None:
            self._parameters.pop(callback_context.invocation_id, None)
        else:
            remember(self._parameters, callback_context.invocation_id, parameters)
        return None

    @override
    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        parameters = self._parameters.get(callback_context.invocation_id)
        if parameters is None or llm_response.error_code:
            return None
        parts = llm_response.content.parts if llm_response.content else None
        if llm_response.partial:
            if not any(p.text for p in parts or []):
                return None
            metadata = {**(llm_response.custom_metadata or {}), DRAFT_METADATA_KEY: True}
            return llm_response.model_copy(update={"custom_metadata": metadata})
        if not parts or any(p.function_call for p in parts):
            return None
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if not text.strip():
            return None
        call = types.FunctionCall(name=SetModelResponseTool.NAME, args=_arguments(text, parameters))
        kept = [p for p in parts if p.thought]
        content = types.Content(role="model", parts=[*kept, types.Part(function_call=call)])
        return llm_response.model_copy(update={"content": content})

    def end_run(self, invocation_id: str) -> None:
        self._parameters.pop(invocation_id, None)
