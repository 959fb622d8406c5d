"""Small readers over ADK's `LlmRequest`, shared by the demo and scripted models."""

from __future__ import annotations

from google.adk.models.llm_request import LlmRequest
from google.genai import types

__all__ = ["declared_tool_names", "last_content", "system_instruction_text"]


def declared_tool_names(request: LlmRequest) -> list[str]:
    """The function names the model is shown in this request, in declaration order."""
    names: list[str] = []
    if request.config and request.config.tools:
        for tool in request.config.tools:
            if isinstance(tool, types.Tool) and tool.function_declarations:
                names.extend(d.name for d in tool.function_declarations if d.name)
    return names


def last_content(request: LlmRequest) -> types.Content | None:
    return request.contents[-1] if request.contents else None


def system_instruction_text(request: LlmRequest) -> str:
    instruction = request.config.system_instruction if request.config else None
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return "".join(p.text or "" for p in instruction.parts or [])
    return str(instruction)
