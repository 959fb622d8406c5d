"""`YuxiToolset`: the one toolset a Yuxi agent carries (each agent of a tree has one).

At each model step it shows the tools of the runtime its run is bound to, filtered by
what the user's rights allow as of that step (`AuthorizationPlugin.current_runtime`)
and by the skills active in session state. A run without a runtime (refused, ending,
or outside a run) sees no tools at all. An agent of a tree also shows the agent tools
of its config that the user may use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from ..._adk import disable_invocation_cache
from ...mcp import DelegationUnavailable
from ..rights._tools import DuplicateToolError
from ._binding import model_step
from ._errors import AgentAssemblyFailed, DelegationStopped

if TYPE_CHECKING:
    from ._plugin import AuthorizationPlugin

__all__ = ["YuxiToolset"]


class YuxiToolset(BaseToolset):
    def __init__(self, plugin: AuthorizationPlugin) -> None:
        super().__init__()
        self.plugin = plugin
        disable_invocation_cache(self)  # visibility changes within an invocation

    @override
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        if readonly_context is None:
            return []
        run = self.plugin.run_of(readonly_context)
        if run is None or run.runtime is None:
            return []
        step = model_step(readonly_context)
        call = await self.plugin.agent_call(run, readonly_context, step=step)
        if call is None:
            return []
        visibility = call.live.visibility(call.bound.activated_skills(readonly_context))
        try:
            tools = await call.bound.visible_tools(visibility, readonly_context)
            agent = call.agent
            shown = {t.name for t in tools}
            for name in call.tree.agent_tools(agent):
                if name in run.runtime.agent_tools(agent):
                    if name in shown:
                        raise DuplicateToolError(name, [f"a tool of {agent!r}", "an agent tool"])
                    tools.append(self.plugin.agent_tools[name])
        except DuplicateToolError as clash:
            # A clash only a connected MCP server could reveal: the run ends with an
            # error event at this step's model call, never with an exception.
            self.plugin.stop_run(run, AgentAssemblyFailed, str(clash))
            return []
        except DelegationUnavailable as exc:
            # Raised from here, ADK would log it and run on without any tool; the run
            # ends instead, with an error event that says why.
            self.plugin.stop_run(run, DelegationStopped, str(exc))
            return []
        return tools

    @override
    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        run = self.plugin.run_of(tool_context)
        if run is not None and run.runtime is not None and run.stop is None:
            bound = run.runtime.agent(tool_context.agent_name)
            if bound is not None:
                await bound.add_instructions(tool_context, llm_request)

    @override
    async def close(self) -> None:
        await self.plugin.cache.close()
