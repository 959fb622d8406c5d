"""The base tools: brought by the app's capabilities, never gated by tool selection,
skills or activation.

`BASE_TOOLS` is the one list of them. Nothing is registered by importing this package:
`base_tool` gives the shared instance of one, and `register_base_tools` puts them in a
registry explicitly (for a plain ADK agent). In a Yuxi app each capability brings the
ones it serves (`adk_yuxi.RunRecords`: the first three, which act through the App's
`adk_yuxi.ledger.LedgerPlugin`; the offload capability: `read_tool_result`, which
reads the session's stored tool results through the artifact service); a base tool no
capability brings is not shown to the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from google.adk.tools.base_tool import BaseTool

from .._metadata import ToolExtraMetadata
from .._registry import ToolRegistry
from .._strict import StrictFunctionTool
from . import ask_user_question, mark_for_improvement, present_artifacts, read_tool_result

__all__ = [
    "BASE_TOOLS",
    "ask_user_question",
    "base_metadata",
    "base_tool",
    "mark_for_improvement",
    "present_artifacts",
    "read_tool_result",
    "register_base_tools",
]

_TOOLS: dict[str, tuple[Callable[..., Any], ToolExtraMetadata]] = {
    "ask_user_question": (ask_user_question.ask_user_question, ask_user_question.METADATA),
    "mark_for_improvement": (
        mark_for_improvement.mark_for_improvement,
        mark_for_improvement.METADATA,
    ),
    "present_artifacts": (present_artifacts.present_artifacts, present_artifacts.METADATA),
    "read_tool_result": (read_tool_result.read_tool_result, read_tool_result.METADATA),
}

BASE_TOOLS: tuple[str, ...] = tuple(_TOOLS)
"""The one list of base tools (ids, which are also the names the model sees)."""


@cache
def base_tool(tool_id: str) -> BaseTool:
    """The shared instance of one base tool (it keeps no state of its own)."""
    return StrictFunctionTool(_TOOLS[tool_id][0])


def base_metadata(tool_id: str) -> ToolExtraMetadata:
    return _TOOLS[tool_id][1]


def register_base_tools(registry: ToolRegistry, names: Iterable[str] = BASE_TOOLS) -> None:
    """Registers the shared base tool instances in `registry` (those it lacks)."""
    for tool_id in names:
        if tool_id not in registry:
            registry.register(base_tool(tool_id), base_metadata(tool_id))
