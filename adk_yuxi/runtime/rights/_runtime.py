"""`Runtime`: what one principal may do in one agent, as one value.

A runtime holds the decided context (`prepare_runtime_context`), the executable tools
(`resolve_runtime_tools`) and the resource guard built on that context. It is assembled
once per principal value and cached (`_cache`), shared by every run of that principal;
it does not know about runs. The plugin binds a run to the runtime of its principal at
run start (`_binding`) and, at every call, decides on the runtime of the principal *as
of that call* while the tool instances stay those of the bound runtime.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.set_model_response_tool import SetModelResponseTool
from google.adk.tools.tool_context import ToolContext

from ...access import Principal
from ...mcp import DelegationUnavailable, McpServerRegistry
from ...skills import SkillCatalog
from ...tools import ToolRegistry, ToolSettings
from ..config._config import AgentConfig
from ._context import RuntimeContext, prepare_runtime_context
from ._resources import FileOwner, ResourceGuard
from ._tools import DuplicateToolError, RuntimeTools, resolve_runtime_tools
from ._visibility import Visibility, compute_visibility, tools_behind_skills

__all__ = ["Runtime", "RuntimeFactory"]

logger = logging.getLogger("adk_yuxi.runtime")

_VISIBILITY_CACHE = 64


def _is_placeholder(tool: BaseTool) -> bool:
    """ADK answers a call to a name outside the declared tools with a bare `BaseTool`."""
    return type(tool) is BaseTool


class Runtime:
    """Context, executable tools and guard of one principal in one agent."""

    def __init__(self, context: RuntimeContext, tools: RuntimeTools, guard: ResourceGuard) -> None:
        self.context = context
        self.tools = tools
        self.guard = guard
        self._origin: weakref.WeakKeyDictionary[BaseTool, str] = weakref.WeakKeyDictionary()
        self._skill_tools: weakref.WeakSet[BaseTool] = weakref.WeakSet()
        self._visibility: dict[tuple[str, ...], Visibility] = {}

    # -- what the model may see ---------------------------------------------------------

    def activated_skills(self, ctx: ReadonlyContext | None) -> list[str]:
        """Skills the model loaded in this session (ADK keeps them in session state)."""
        skill_toolset = self.tools.skill_toolset
        if ctx is None or skill_toolset is None:
            return []
        return list(skill_toolset.list_active_skills(ctx))

    def visibility(self, activated: Iterable[str]) -> Visibility:
        """`compute_visibility` of this runtime's context, kept per activation state
        (a pure function of both, asked at every model step and tool call)."""
        key = tuple(activated)
        found = self._visibility.get(key)
        if found is None:
            if len(self._visibility) >= _VISIBILITY_CACHE:
                self._visibility.clear()
            found = self._visibility[key] = compute_visibility(self.context, key)
        return found

    def permits(self, tool: BaseTool, visibility: Visibility) -> bool:
        """Whether `tool` is one of this runtime's own instances and `visibility` shows it."""
        if _is_placeholder(tool):
            return False
        if isinstance(tool, SetModelResponseTool):
            # ADK adds it only for an agent with an output schema; it runs nothing but
            # the schema's validation of the final answer.
            return True
        server = self._origin.get(tool)
        if server is not None:
            return visibility.shows_server(server)
        if tool in self._skill_tools:
            return visibility.shows_tool(tool.name)
        return self.tools.local.get(tool.name) is tool and visibility.shows_tool(tool.name)

    def builtin_server_of(self, tool: BaseTool) -> str | None:
        """The built-in (delegated) MCP server, such as the knowledge server, that this
        runtime showed `tool` from; None for any other tool."""
        server = self._origin.get(tool)
        if server is None or not self.context.mcp_registry.is_builtin(server):
            return None
        return server

    async def visible_tools(
        self, visibility: Visibility, ctx: ReadonlyContext | None
    ) -> list[BaseTool]:
        """This runtime's instances that `visibility` shows; an MCP server is connected
        only when it is shown, and one that fails or clashes is skipped alone."""
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
            for tool in await self.tools.skill_toolset.get_tools(ctx):
                if visibility.shows_tool(tool.name):
                    self._skill_tools.add(tool)
                    add(tool, "the skill loader")
        # A server switched off since assembly is unavailable from the next step on: its
        # tools leave the model's view and a call to one gets `tool_not_available`.
        registry = self.context.mcp_registry
        active = [
            s for s in self.tools.mcp if visibility.shows_server(s) and registry.is_enabled(s)
        ]
        if not active:
            return list(shown.values())
        listed = await asyncio.gather(
            *(self.tools.mcp[s].get_tools_with_prefix(ctx) for s in active),
            return_exceptions=True,
        )
        for server, server_tools in zip(active, listed, strict=True):
            # One failing or clashing server must not take the other tools down with it
            # (ADK would drop the whole toolset), so it is skipped and reported alone.
            if isinstance(server_tools, BaseException):
                if not isinstance(server_tools, Exception) or isinstance(
                    server_tools, DelegationUnavailable
                ):
                    raise server_tools  # a delegation that cannot be minted is visible
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

    async def add_instructions(self, tool_context: ToolContext, llm_request: LlmRequest) -> None:
        """The skill loader's instructions, which skill opens which hidden tool, and the
        instructions of preloaded skills."""
        skill_toolset = self.tools.skill_toolset
        if skill_toolset is None:
            return
        await skill_toolset.process_llm_request(tool_context=tool_context, llm_request=llm_request)
        visibility = self.visibility(self.activated_skills(tool_context))
        behind = tools_behind_skills(self.context, visibility)
        if behind:
            llm_request.append_instructions(
                [
                    "\nSome tools open only once their skill is loaded with load_skill:",
                    *(f'- skill "{n}" opens: {", ".join(tools)}' for n, tools in behind.items()),
                ]
            )
        preloaded = [self.context.skill(n) for n in self.context.preloaded_skills]
        if preloaded:
            llm_request.append_instructions(
                [
                    f'\nThe skill "{spec.name}" is already loaded; do not load it again.'
                    f" Its instructions:\n\n{spec.instructions}"
                    for spec in preloaded
                ]
            )

    async def close(self) -> None:
        """Closes the MCP sessions (and the skill loader) this runtime opened."""
        toolsets: list[BaseToolset] = list(self.tools.mcp.values())
        if self.tools.skill_toolset is not None:
            toolsets.append(self.tools.skill_toolset)
        await asyncio.gather(*(t.close() for t in toolsets), return_exceptions=True)


class RuntimeFactory:
    """Assembles the runtime of a principal for one agent config and its registries.

    New `AgentConfig` fields that change what a principal may use are read by
    `prepare_runtime_context`; fields that change how a run is checked (limits) are read
    by the plugin from `runtime.context.config`, as the deployer wrote them.
    """

    def __init__(
        self,
        config: AgentConfig,
        *,
        registry: ToolRegistry | None = None,
        skills: SkillCatalog | None = None,
        mcp_servers: McpServerRegistry | None = None,
        workspace: str | Path | None = None,
        file_owner: FileOwner | None = None,
        settings: ToolSettings | None = None,
        base_tools: Mapping[str, BaseTool] | None = None,
    ) -> None:
        self.config = config
        self._base_tools = base_tools
        self._settings = settings
        self._registry = registry
        self._skills = skills
        self._mcp_servers = mcp_servers
        self._workspace = workspace
        self._file_owner = file_owner

    def context(self, principal: Principal) -> RuntimeContext:
        return prepare_runtime_context(
            principal,
            self.config,
            registry=self._registry,
            skills=self._skills,
            mcp_servers=self._mcp_servers,
            settings=self._settings,
            base_tools=self._base_tools,
        )

    def __call__(self, principal: Principal) -> Runtime:
        context = self.context(principal)
        guard = ResourceGuard(context, workspace=self._workspace, file_owner=self._file_owner)
        return Runtime(context, resolve_runtime_tools(context), guard)
