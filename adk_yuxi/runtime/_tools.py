"""The executable tool set of a run, and the toolset that shows the model only part of it.

Executable is not visible: every tool a run might need (configured tools, base tools,
the dependencies of every usable skill, the MCP servers of the config and of its skills)
is resolved here, once. `GatedToolset.get_tools` then returns, at each model step, only
what `compute_visibility` allows, and connects a skill's MCP server only once the skill
is active.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.adk.tools.skill_toolset import SkillDiscoveryMode, SkillToolset
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from adk_yuxi.errors import YuxiError

from ._context import RuntimeContext
from ._visibility import SKILL_LOADER_TOOLS, Visibility, compute_visibility

__all__ = ["DuplicateToolError", "GatedToolset", "RuntimeTools", "resolve_runtime_tools"]

logger = logging.getLogger("adk_yuxi.runtime.tools")


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
    so those collisions are reported by `GatedToolset.get_tools`."""
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
    mcp = {name: context.mcp_registry.get(name).toolset() for name in servers}
    return RuntimeTools(
        local=MappingProxyType(local), mcp=MappingProxyType(mcp), skill_toolset=skill_toolset
    )


def _is_placeholder(tool: BaseTool) -> bool:
    """ADK answers a call to a name outside the declared tools with a bare `BaseTool`."""
    return type(tool) is BaseTool


class GatedToolset(BaseToolset):
    """The one toolset a Yuxi agent carries: the visible part of its executable set."""

    def __init__(self, context: RuntimeContext, tools: RuntimeTools) -> None:
        super().__init__()
        self.context = context
        self.tools = tools
        # Visibility depends on session state, which changes within an invocation.
        self._use_invocation_cache = False
        self._origin: weakref.WeakKeyDictionary[BaseTool, str] = weakref.WeakKeyDictionary()
        self._skill_tools: weakref.WeakSet[BaseTool] = weakref.WeakSet()

    def visibility(self, ctx: ReadonlyContext) -> Visibility:
        skill_toolset = self.tools.skill_toolset
        activated = skill_toolset.list_active_skills(ctx) if skill_toolset else []
        return compute_visibility(self.context, activated)

    def permits(self, tool: BaseTool, visibility: Visibility) -> bool:
        """Whether `tool` is one of this run's own instances and visible now."""
        if _is_placeholder(tool):
            return False
        server = self._origin.get(tool)
        if server is not None:
            return visibility.shows_server(server)
        if tool in self._skill_tools:
            return visibility.shows_tool(tool.name)
        return self.tools.local.get(tool.name) is tool and visibility.shows_tool(tool.name)

    @override
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        if readonly_context is None:
            # Without a session there is no activation state: show the ungated part.
            visibility = compute_visibility(self.context, ())
        else:
            visibility = self.visibility(readonly_context)
        shown: dict[str, BaseTool] = {}
        origins: dict[str, str] = {}

        def add(tool: BaseTool, origin: str) -> None:
            if tool.name in shown:
                raise DuplicateToolError(tool.name, [origins[tool.name], origin])
            shown[tool.name] = tool
            origins[tool.name] = origin

        for name, tool in self.tools.local.items():
            if visibility.shows_tool(name):
                add(tool, "local tools")
        if self.tools.skill_toolset is not None:
            for tool in await self.tools.skill_toolset.get_tools(readonly_context):
                if visibility.shows_tool(tool.name):
                    self._skill_tools.add(tool)
                    add(tool, "the skill loader")
        active = [s for s in self.tools.mcp if visibility.shows_server(s)]
        listed = await asyncio.gather(
            *(self.tools.mcp[s].get_tools_with_prefix(readonly_context) for s in active),
            return_exceptions=True,
        )
        for server, server_tools in zip(active, listed, strict=True):
            # One failing or clashing server must not take the other tools down with it
            # (ADK would drop this whole toolset), so it is skipped and reported alone.
            if isinstance(server_tools, BaseException):
                if not isinstance(server_tools, Exception):
                    raise server_tools
                logger.error("MCP server %r skipped: %s", server, server_tools)
                continue
            clash = sorted({t.name for t in server_tools}.intersection(shown))
            if clash:
                error = DuplicateToolError(clash[0], [origins[clash[0]], f"MCP server {server!r}"])
                logger.error("MCP server %r skipped: %s", server, error)
                continue
            for tool in server_tools:
                self._origin[tool] = server
                add(tool, f"MCP server {server!r}")
        return list(shown.values())

    @override
    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        skill_toolset = self.tools.skill_toolset
        if skill_toolset is None:
            return
        await skill_toolset.process_llm_request(tool_context=tool_context, llm_request=llm_request)
        preloaded = [self.context.skill(n) for n in self.context.preloaded_skills]
        if preloaded:
            llm_request.append_instructions(
                [
                    f'\nThe skill "{spec.name}" is already loaded; do not load it again.'
                    f" Its instructions:\n\n{spec.instructions}"
                    for spec in preloaded
                ]
            )

    @override
    async def close(self) -> None:
        toolsets: list[BaseToolset] = list(self.tools.mcp.values())
        if self.tools.skill_toolset is not None:
            toolsets.append(self.tools.skill_toolset)
        await asyncio.gather(*(t.close() for t in toolsets), return_exceptions=True)
