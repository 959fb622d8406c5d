"""The executable tool set of a run.

Executable is not visible: every tool a run might need (configured tools, base tools,
the dependencies of every usable skill, the MCP servers of the config and of its skills)
is resolved here, once per principal. `Runtime.visible_tools` then returns, at each
model step, only what `compute_visibility` allows, and connects a skill's MCP server
only once the skill is active.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.adk.tools.skill_toolset import SkillDiscoveryMode, SkillToolset

from adk_yuxi.errors import YuxiError

from ._context import RuntimeContext
from ._visibility import SKILL_LOADER_TOOLS

__all__ = ["DuplicateToolError", "RuntimeTools", "resolve_runtime_tools"]


class DuplicateToolError(YuxiError, ValueError):
    """Two tools of one run share a name; the model could not tell them apart."""

    def __init__(self, name: str, sources: list[str]) -> None:
        super().__init__(f"tool name {name!r} is provided twice ({' and '.join(sources)})")
        self.name = name
        self.sources = sources


@dataclass(frozen=True)
class RuntimeTools:
    """Everything a run may execute. `local` maps tool names to the shared registry
    instances; `mcp` maps server names to not-yet-connected toolsets."""

    local: Mapping[str, BaseTool]
    mcp: Mapping[str, McpToolset]
    skill_toolset: SkillToolset | None


def resolve_runtime_tools(context: RuntimeContext) -> RuntimeTools:
    """Raises `DuplicateToolError` when two local tools, or a local tool and a skill
    loader tool, share a name. MCP tool names are only known once a server is connected,
    so those collisions are reported by `Runtime.visible_tools`."""
    ids: dict[str, None] = dict.fromkeys(context.base_tools)
    ids.update(dict.fromkeys(context.tools))
    servers: dict[str, None] = dict.fromkeys(context.mcp_servers)
    for name in context.skills:
        spec = context.skill(name)
        ids.update(dict.fromkeys(spec.tool_dependencies))
        servers.update(dict.fromkeys(spec.mcp_dependencies))
    local: dict[str, BaseTool] = {}
    sources: dict[str, str] = {}
    for tool_id in ids:
        tool = context.tool(tool_id)
        if tool.name in local:
            raise DuplicateToolError(tool.name, [sources[tool.name], f"registry id {tool_id!r}"])
        local[tool.name] = tool
        sources[tool.name] = f"registry id {tool_id!r}"
    skill_toolset = None
    if context.skills:
        clash = sorted(SKILL_LOADER_TOOLS.intersection(local))
        if clash:
            raise DuplicateToolError(clash[0], [sources[clash[0]], "the skill loader"])
        skill_toolset = SkillToolset(
            skills=[context.skill(n).skill for n in context.skills],
            discovery_mode=SkillDiscoveryMode.EAGER,
        )
    mcp = {
        name: context.mcp_registry.toolset(
            name, user_id=context.user_id, knowledge_bases=context.knowledge_bases
        )
        for name in servers
    }
    return RuntimeTools(
        local=MappingProxyType(local), mcp=MappingProxyType(mcp), skill_toolset=skill_toolset
    )
