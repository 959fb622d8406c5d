"""Small readers over ADK's `LlmRequest`, shared by the demo and scripted models."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from google.adk.models.llm_request import LlmRequest
from google.genai import types

__all__ = [
    "RequestView",
    "contents_chars",
    "declared_tool_names",
    "last_content",
    "pending_function_responses",
    "prompt_tokens_estimate",
    "system_instruction_text",
]

# ADK's preload_memory context, inserted after the function responses being answered.
_INSERTED_CONTEXT = ("The following content is from your previous conversations with the user.",)
_SKILL_NAME = re.compile(r"<skill>\s*<name>\s*(?P<name>[^<]+?)\s*</name>", re.S)
# Written by the runtime's gated toolset: '- skill "note-keeping" opens: save_note, ...'.
_SKILL_OPENS = re.compile(r'^- skill "(?P<skill>[^"]+)" opens: (?P<tools>.+)$', re.M)


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


def pending_function_responses(request: LlmRequest) -> list[types.FunctionResponse]:
    """The function responses the model is to answer now: those since it last spoke,
    unless the conversation moved on after them (a new user message, or another agent's
    turn quoted as context after a handoff), which is then answered for itself. ADK
    inserts request-scoped context after them when the model continues a tool call
    (`preload_memory`'s past conversations): that is not moving on."""
    responses: list[types.FunctionResponse] = []
    moved_on = False
    for content in reversed(request.contents):
        if content.role == "model":
            break
        found = [p.function_response for p in content.parts or [] if p.function_response]
        if found and moved_on:
            return []
        responses[:0] = found
        if not responses and _spoken(content):
            moved_on = True
    return responses


def _spoken(content: types.Content) -> bool:
    """Whether `content` was said in the conversation (not inserted context)."""
    texts = [p.text.strip() for p in content.parts or [] if p.text and p.text.strip()]
    return any(not t.startswith(_INSERTED_CONTEXT) for t in texts)


def contents_chars(contents: Sequence[types.Content]) -> int:
    """Characters of the conversation sent: texts, and function calls and responses as
    the JSON a model reads them in."""
    total = 0
    for content in contents:
        for part in content.parts or []:
            if part.text:
                total += len(part.text)
            if part.function_call:
                total += len(part.function_call.model_dump_json(exclude_none=True))
            if part.function_response:
                total += len(part.function_response.model_dump_json(exclude_none=True))
    return total


def prompt_tokens_estimate(request: LlmRequest) -> int:
    """About one token per four characters of instruction and contents: what an offline
    model reports as its prompt size, so ADK's token-threshold compaction sees it."""
    return (len(system_instruction_text(request)) + contents_chars(request.contents)) // 4


def system_instruction_text(request: LlmRequest) -> str:
    instruction = request.config.system_instruction if request.config else None
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return "".join(p.text or "" for p in instruction.parts or [])
    return str(instruction)


@dataclass(frozen=True)
class RequestView:
    """What a model can tell from one request: the tools it may call now, the skills it
    may load, and which hidden tools each of those skills would open."""

    tools: tuple[str, ...]
    skills: tuple[str, ...] = ()
    skill_tools: dict[str, tuple[str, ...]] = field(default_factory=dict)
    reading: tuple[str, int] | None = None
    """The stored tool result the conversation is reading (its artifact) and where it
    reads on, or None when the latest one was read to its end."""
    contents: tuple[types.Content, ...] = field(default=(), compare=False, repr=False)
    """The conversation as sent (a summary of earlier turns included), oldest first."""

    @classmethod
    def of(cls, request: LlmRequest) -> RequestView:
        instruction = system_instruction_text(request)
        skills = tuple(
            dict.fromkeys(html.unescape(m.group("name")) for m in _SKILL_NAME.finditer(instruction))
        )
        opens = {
            m.group("skill"): tuple(t.strip() for t in m.group("tools").split(","))
            for m in _SKILL_OPENS.finditer(instruction)
        }
        return cls(
            tools=tuple(declared_tool_names(request)),
            skills=skills,
            skill_tools=opens,
            reading=_reading(request),
            contents=tuple(request.contents),
        )

    def sees(self, tool: str) -> bool:
        return tool in self.tools

    def skill_opening(self, tool: str) -> str | None:
        """The skill whose loading would make `tool` visible, if the request says so."""
        return next((s for s, tools in self.skill_tools.items() if tool in tools), None)


def _reading(request: LlmRequest) -> tuple[str, int] | None:
    """The latest stored result's artifact and next offset (a preview of one, or a
    window `read_tool_result` returned)."""
    for content in reversed(request.contents):
        for part in reversed(content.parts or []):
            shown = part.function_response.response if part.function_response else None
            if not isinstance(shown, dict):
                continue
            stored = shown.get("stored_result")
            artifact = stored.get("artifact") if isinstance(stored, dict) else shown.get("artifact")
            if isinstance(artifact, str) and "next_offset" in shown:
                offset = shown["next_offset"]
                return (artifact, offset) if isinstance(offset, int) else None
    return None
