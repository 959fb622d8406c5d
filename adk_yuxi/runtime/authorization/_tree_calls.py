"""Agent trees at call time: agent tools (nested runs) and handoffs.

ADK runs an `AgentTool` in a nested Runner with a new invocation id, an in-memory
session and the parent's plugins (the same `AuthorizationPlugin`). The nested run is
tied to its caller through a context variable set when the caller's call to the agent
tool is authorized: ADK runs each tool call in a task of its own, started from the
context the before-tool callbacks ran in, so the nested run (and only it) sees the
link. When the call returns, a nested run that was stopped becomes a structured tool
error for the caller, which may go on without it.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import Any, NamedTuple

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from adk_yuxi.errors import ToolErrorCode, tool_error

from ..rights._handoff import TRANSFER_TOOL, requested_target
from ..rights._runtime import Runtime
from ..rights._tree_runtime import TreeRuntime

__all__ = [
    "AgentCall",
    "AgentToolCall",
    "finish_agent_tool_call",
    "pending_agent_tool_call",
    "refuse_tree_call",
    "start_agent_tool_call",
]


class AgentCall(NamedTuple):
    """The runtimes a call of one agent of a tree is decided on."""

    tree: TreeRuntime
    """The user's tree as of this call."""
    bound: Runtime
    """The agent's runtime bound at run start (its tool instances)."""
    live: Runtime
    """The agent's runtime as of this call (its decisions)."""
    agent: str
    """The agent of the tree the call is decided as (the root for an agent the app did
    not build)."""


@dataclass(eq=False)
class AgentToolCall:
    """An authorized call to an agent tool, waiting for (then watching) its nested run."""

    parent: str
    """The invocation id of the calling run."""
    agent: str
    user_id: str
    callers: tuple[str, ...]
    used: bool = False
    stopped: str | None = None
    """The `CODE` the nested run was stopped with, if it was."""

    def matches(self, user_id: str, agent: str | None) -> bool:
        """Whether a run starting now is this call's nested run (one run per call)."""
        return not self.used and self.user_id == user_id and self.agent == agent


_CALL: contextvars.ContextVar[AgentToolCall | None] = contextvars.ContextVar(
    "yuxi_agent_tool_call", default=None
)


def pending_agent_tool_call() -> AgentToolCall | None:
    return _CALL.get()


def start_agent_tool_call(call: AgentToolCall) -> None:
    _CALL.set(call)


def finish_agent_tool_call(tool: BaseTool, tool_context: ToolContext) -> dict[str, Any] | None:
    """In the caller's after-tool callback: the tool error standing for a nested run that
    was stopped, or None to keep the agent's answer."""
    call = _CALL.get()
    if call is None or call.parent != tool_context.invocation_id or call.agent != tool.name:
        return None
    _CALL.set(None)
    if call.stopped is None:
        return None
    return tool_error(ToolErrorCode.AGENT_STOPPED, tool.name, reason=call.stopped)


def refuse_tree_call(
    tree: TreeRuntime, bound: TreeRuntime, name: str, tool_args: dict[str, Any], agent: str
) -> tuple[ToolErrorCode, str, dict[str, Any]] | None:
    """Why a handoff or an agent-tool call by `agent` may not happen (code, detail for
    operators, result for the model), decided on the user's tree as of now (`tree`) and
    as bound at run start (`bound`, whose tool instances run); None when it may."""
    if name == TRANSFER_TOOL:
        allowed = tree.handoffs(agent)
        target = requested_target(tool_args)
        if target is not None and target in {t.name for t in allowed}:
            return None
        result = tool_error(
            ToolErrorCode.HANDOFF_NOT_ALLOWED, name, allowed=[t.as_dict() for t in allowed]
        )
        return ToolErrorCode.HANDOFF_NOT_ALLOWED, f"to {target!r}", result
    if name in tree.agent_tools(agent) and name in bound.agent_tools(agent):
        return None
    detail = "agent tool not available to this user"
    return (
        ToolErrorCode.TOOL_NOT_AVAILABLE,
        detail,
        tool_error(ToolErrorCode.TOOL_NOT_AVAILABLE, name),
    )
