"""The tool names an app can run, for bounded metric labels (`observability.know_tools`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from google.adk.tools.set_model_response_tool import SetModelResponseTool

from ...skills import KNOWLEDGE_TOOL_NAMES
from ...tools import ToolRegistry
from ...tools.base import BASE_TOOLS
from ..config._config import AgentConfig
from ..rights._handoff import TRANSFER_TOOL
from ..rights._visibility import SKILL_LOADER_TOOLS

__all__ = ["app_tool_names"]


def app_tool_names(configs: Mapping[str, AgentConfig], registry: ToolRegistry) -> Iterable[str]:
    """Every tool of `registry`, the base, knowledge and skill tools, the framework's
    final-answer and transfer tools, and the agents called as tools (by name). An MCP
    server's tools are added as they run (the offload plugin)."""
    yield from registry.ids()
    yield from BASE_TOOLS
    yield from KNOWLEDGE_TOOL_NAMES
    yield from SKILL_LOADER_TOOLS
    yield from (SetModelResponseTool.NAME, TRANSFER_TOOL)
    yield from configs
