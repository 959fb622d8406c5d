"""The part of the authorization plugin that knows agent trees: which agent of the
user's tree a call belongs to, handoffs, and calls to agent tools (nested runs).

`AuthorizationPlugin` derives from `TreeChecks`; the run-level decisions it relies on
(`current_runtime`, `_stop`, `_refuse`) are the plugin's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from adk_yuxi.errors import RunStopped, ToolErrorCode, tool_error

from ...access import AgentExecutionRevoked
from ..rights._handoff import TRANSFER_TOOL
from ..rights._tree_runtime import TreeRuntime
from ._binding import Run, RunBindings
from ._decision_spans import nested_bound, skill_activated
from ._errors import ToolCallLimitReached
from ._refusals import Reporter
from ._tree_calls import (
    AgentCall,
    AgentToolCall,
    finish_agent_tool_call,
    refuse_tree_call,
    start_agent_tool_call,
)

__all__ = ["TreeChecks", "agent_tool_problems"]


def agent_tool_problems(args: Mapping[str, Any]) -> list[dict[str, str]]:
    """What is wrong with an agent tool's arguments: exactly one `request`, a string with
    some text, as ADK declares it (ADK itself would run the agent on the arguments' JSON)."""
    problems = [
        {"field": key, "problem": "not a parameter of this tool"}
        for key in args
        if key != "request"
    ]
    request = args.get("request")
    if request is None:
        problems.append({"field": "request", "problem": "missing"})
    elif not isinstance(request, str):
        problems.append({"field": "request", "problem": "must be a string"})
    elif not request.strip():
        problems.append({"field": "request", "problem": "must not be empty"})
    return problems


class TreeChecks(BasePlugin):
    agents: Mapping[str, LlmAgent]
    """The ADK agents of the tree by name (set by `build_app`), for handoffs."""
    agent_tools: Mapping[str, AgentTool]
    """The tree's own `AgentTool` instances by agent name (set by `build_app`)."""
    bindings: RunBindings
    reporter: Reporter

    async def current_runtime(
        self, run: Run, tool: str | None = None, *, step: int | None = None
    ) -> TreeRuntime | None:
        raise NotImplementedError

    def _stop(
        self,
        run: Run,
        stop: type[RunStopped],
        detail: str,
        tool: str | None = None,
        agent: str | None = None,
    ) -> None:
        raise NotImplementedError

    def _refuse(
        self, run: Run, code: ToolErrorCode, tool: str, detail: str, agent: str | None = None
    ) -> None:
        raise NotImplementedError

    async def agent_call(
        self, run: Run, ctx: ReadonlyContext, tool: str | None = None, *, step: int | None = None
    ) -> AgentCall | None:
        """The runtimes of the agent making this call, or None when the run must end
        (`run.stop` says why): the agent, or an agent whose tool call this nested run
        is, is no longer in the user's tree."""
        tree = await self.current_runtime(run, tool, step=step)
        if tree is None or run.runtime is None:
            return None
        agent = tree.checked_as(ctx.agent_name)
        bound, live = run.runtime.agent(agent), tree.agent(agent)
        lost = [a for a in run.callers if tree.agent(a) is None]
        if bound is None or live is None or lost:
            detail = f"agent(s) {lost or [agent]} no longer available to this user"
            self._stop(run, AgentExecutionRevoked, detail, tool, agent)
            return None
        return AgentCall(tree, bound, live, agent)

    def bind_nested(self, invocation_context: InvocationContext, call: AgentToolCall) -> Run:
        """The run of the nested invocation `call` started: adopted by its caller's run,
        or refused when the caller is gone or stopped (a host plugin held the call, say).
        Either way it never runs as a new root, with a budget and checks of its own."""
        call.used = True
        nested = self.bindings.adopt(invocation_context, call.parent, call.callers)
        nested.link = call
        nested_bound(call, nested)
        if nested.refused is not None:
            call.stopped = nested.refused.CODE  # the caller gets a tool error
            self.reporter.record(
                nested.refused.CODE.lower(),
                user_id=nested.user_id,
                invocation_id=nested.invocation_id,
                tool=None,
                detail="the run that called this agent is over or stopped",
                agent=call.agent,
            )
        return nested

    def is_tree_call(self, tool: BaseTool) -> bool:
        return tool.name == TRANSFER_TOOL or self.agent_tools.get(tool.name) is tool

    def tree_call(
        self,
        run: Run,
        call: AgentCall,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
    ) -> dict[str, Any] | None:
        """A handoff or an agent tool: decided on the user's tree as of this call."""
        name, agent = tool.name, call.agent
        assert run.budget is not None and run.runtime is not None
        problems = [] if name == TRANSFER_TOOL else agent_tool_problems(tool_args)
        if problems:
            self._refuse(run, ToolErrorCode.INVALID_ARGUMENTS, name, "bad request", agent)
            return tool_error(ToolErrorCode.INVALID_ARGUMENTS, name, problems=problems)
        count = run.budget.tool_calls.charge()
        if count > call.tree.context.config.limits.max_tool_calls_per_turn:
            self._stop(run, ToolCallLimitReached, f"tool call {count}", name, agent)
            return tool_error(ToolErrorCode.LIMIT_REACHED, name)
        refused = refuse_tree_call(call.tree, run.runtime, name, tool_args, agent)
        if refused is not None:
            code, detail, result = refused
            self._refuse(run, code, name, detail, agent)
            return result
        if name != TRANSFER_TOOL:
            callers = (*run.callers, agent)
            start_agent_tool_call(
                AgentToolCall(run.invocation_id, name, tool_context.user_id, callers)
            )
        return None

    @override
    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        if tool.name == "load_skill":
            run = self.bindings.get(tool_context.invocation_id)
            skill_activated(run, tool_context, tool_args, result)
        if self.agent_tools.get(tool.name) is not tool:
            return None
        return finish_agent_tool_call(tool, tool_context)
