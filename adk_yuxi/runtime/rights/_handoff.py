"""Handoffs: what a user's agent may transfer to, as the model sees it and as it runs.

ADK derives the transfer targets from the agent tree, which one App shares between
all its users, and raises (ending the run) on a transfer outside them. A Yuxi agent's
targets are narrower: its whitelist (`can_handoff_to`), minus the agents this user may
not read. Before each model call the transfer instructions and the `transfer_to_agent`
declaration ADK put in the request are narrowed to those targets; a call to any other
target is answered with a tool error listing the allowed ones, so the model can
correct itself and no transfer happens.

ADK offers no public way to read or rebuild the transfer part of a request; the private
functions this relies on are reached through `adk_yuxi._adk` (pinned there).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from ..._adk import transfer_instructions, transfer_targets

__all__ = [
    "TRANSFER_TOOL",
    "HandoffTarget",
    "requested_target",
    "restrict_transfers",
]

TRANSFER_TOOL = "transfer_to_agent"

logger = logging.getLogger("adk_yuxi.runtime.handoff")


@dataclass(frozen=True)
class HandoffTarget:
    """An agent the model may transfer to, as the model is told about it."""

    name: str
    description: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "description": self.description}


def requested_target(tool_args: dict[str, Any]) -> str | None:
    target = tool_args.get("agent_name")
    return target if isinstance(target, str) else None


def _instructions(agent: LlmAgent, targets: Sequence[BaseAgent]) -> str:
    return transfer_instructions(TRANSFER_TOOL, agent, targets)


def _declarations(request: LlmRequest) -> list[types.FunctionDeclaration]:
    found: list[types.FunctionDeclaration] = []
    for tool in request.config.tools or []:
        if isinstance(tool, types.Tool) and tool.function_declarations:
            found.extend(d for d in tool.function_declarations if d.name == TRANSFER_TOOL)
    return found


def _set_enum(declaration: types.FunctionDeclaration, names: list[str]) -> None:
    parameters = declaration.parameters
    if parameters is not None and parameters.properties and "agent_name" in parameters.properties:
        parameters.properties["agent_name"].enum = names
    schema = declaration.parameters_json_schema
    if isinstance(schema, dict) and "agent_name" in schema.get("properties", {}):
        schema["properties"]["agent_name"]["enum"] = names


def _drop_declarations(request: LlmRequest) -> None:
    for tool in request.config.tools or []:
        if isinstance(tool, types.Tool) and tool.function_declarations:
            tool.function_declarations = [
                d for d in tool.function_declarations if d.name != TRANSFER_TOOL
            ]
    request.tools_dict.pop(TRANSFER_TOOL, None)


def restrict_transfers(request: LlmRequest, agent: LlmAgent, allowed: Sequence[str]) -> bool:
    """Narrows the transfer instructions and declaration ADK added for `agent` to the
    targets named in `allowed`. Returns False when ADK's text was not found where
    expected (an ADK change): the declaration is still narrowed, and the call-time
    check still refuses every other target."""
    tree_targets = transfer_targets(agent)
    if not tree_targets:
        return True
    kept = [t for t in tree_targets if t.name in allowed]
    if len(kept) == len(tree_targets):
        return True
    old = _instructions(agent, tree_targets)
    new = _instructions(agent, kept) if kept else ""
    instruction = request.config.system_instruction
    found = isinstance(instruction, str) and old in instruction
    if isinstance(instruction, str) and found:
        if new:
            request.config.system_instruction = instruction.replace(old, new)
        else:
            request.config.system_instruction = instruction.replace("\n\n" + old, "").replace(
                old, ""
            )
    else:
        logger.error("ADK's transfer instructions for %r were not found to narrow", agent.name)
    if kept:
        for declaration in _declarations(request):
            _set_enum(declaration, [t.name for t in kept])
    else:
        _drop_declarations(request)
    return found
