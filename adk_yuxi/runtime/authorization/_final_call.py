"""The last model call of a run (`early_stopping="generate"`): every tool is withdrawn
but the structured answer's `set_model_response`, so an agent with an output schema
still answers through the one path that validates it; any other call the model makes
anyway is dropped."""

from __future__ import annotations

from google.adk.models.llm_request import LlmRequest
from google.adk.tools.set_model_response_tool import SetModelResponseTool
from google.genai import types

__all__ = [
    "FINAL_ANSWER_INSTRUCTION",
    "FINAL_STRUCTURED_ANSWER_INSTRUCTION",
    "final_parts",
    "withdraw_tools",
]

FINAL_ANSWER_INSTRUCTION = (
    "\nThis is the last model call of this request: no tools are available any more."
    " Give your best final answer now from what was gathered so far, and say what is"
    " still missing."
)

FINAL_STRUCTURED_ANSWER_INSTRUCTION = (
    "\nThis is the last model call of this request: no other tool is available any more."
    f" Give your best final answer now with `{SetModelResponseTool.NAME}`, from what was"
    " gathered so far."
)

_KEPT = frozenset({SetModelResponseTool.NAME})


def withdraw_tools(llm_request: LlmRequest) -> frozenset[str]:
    """Withdraws every tool from this model call but `set_model_response` (declared when
    the agent answers on an output schema) and tells the model so; returns the names
    kept."""
    kept = _KEPT.intersection(llm_request.tools_dict)
    if llm_request.config is not None:
        declarations = [
            declaration
            for tool in llm_request.config.tools or []
            if isinstance(tool, types.Tool)
            for declaration in tool.function_declarations or []
            if declaration.name in kept
        ]
        llm_request.config.tools = (
            [types.Tool(function_declarations=declarations)] if declarations else None
        )
        llm_request.config.tool_config = None
    for name in [n for n in llm_request.tools_dict if n not in kept]:
        del llm_request.tools_dict[name]
    instruction = FINAL_STRUCTURED_ANSWER_INSTRUCTION if kept else FINAL_ANSWER_INSTRUCTION
    llm_request.append_instructions([instruction])
    return frozenset(kept)


def final_parts(parts: list[types.Part], kept: frozenset[str]) -> list[types.Part]:
    """The parts of the last model call's answer that may stand: its text and its calls
    to the tools it kept."""
    return [p for p in parts if p.function_call is None or p.function_call.name in kept]
