"""The runtime's decisions as spans: the authorization of each model and tool call,
a skill's activation and a nested run's binding to its caller.

`decided` runs one of the plugin's checks inside a `yuxi.authorize` span (a child of
ADK's span of the same call: `execute_tool`, or for a model call `invoke_agent` under
ADK's schema v2, `call_llm` under the older one) and reads the outcome from
what the check returned: None is allowed, a tool error or a stop response is refused,
its code being the rule. A refusal the reporter records while the check runs names
the rule more precisely (`tool_call_limit_reached` rather than `limit_reached`), and
`note_resource` adds the kind and argument name of a refused resource. What was asked
for (arguments, paths, queries) and the operator's detail text never go on the span.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable
from typing import Any, TypeVar

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from opentelemetry.trace import Span

from ...observability._tracing import span
from ..rights._visibility import SKILL_LOADER_TOOLS
from ._binding import Run
from ._tree_calls import AgentToolCall

__all__ = [
    "ALLOWED_RULES",
    "decided",
    "decided_call",
    "nested_bound",
    "note_refusal",
    "note_resource",
    "refused_in_tool",
    "skill_activated",
]

R = TypeVar("R")

ALLOWED_RULES = {
    "model": "agent_use",
    "tool": "visible",
    "skill": "skill_visible",
    "agent": "agent_tree",
}
"""The rule an allowed call passed, by resource kind: the user may use the agent now
(model), the tool is visible to the user now and its resource arguments are the
user's (tool), the skill is the user's (skill loader), the user's tree has the agent
or handoff (agent tool, transfer)."""


class _Decision:
    __slots__ = ("rule", "span")

    def __init__(self, current: Span) -> None:
        self.span = current
        self.rule: str | None = None


_DECISION: contextvars.ContextVar[_Decision | None] = contextvars.ContextVar(
    "yuxi_decision", default=None
)


def _refused_code(result: Any) -> str | None:
    if result is None:
        return None
    if isinstance(result, dict):
        error = result.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        return str(code) if code else "refused"
    code = getattr(result, "error_code", None)
    return str(code).lower() if code else "refused"


async def decided(
    kind: str,
    check: Awaitable[R],
    *,
    user_id: str | None,
    agent: str | None,
    tool: str | None = None,
    skill: Any = None,
) -> R:
    """`check`'s result, decided inside a `yuxi.authorize` span."""
    attributes = {
        "yuxi.resource.kind": kind,
        "user.id": user_id,
        "gen_ai.agent.name": agent,
        "gen_ai.tool.name": tool,
        "gen_ai.skill.name": skill if isinstance(skill, str) else None,
    }
    with span(f"yuxi.authorize {kind}", attributes) as current:
        if not current.is_recording():
            return await check
        decision = _Decision(current)
        token = _DECISION.set(decision)
        try:
            result = await check
        finally:
            _DECISION.reset(token)
        code = _refused_code(result)
        rule = ALLOWED_RULES.get(kind, kind) if code is None else decision.rule or code
        current.set_attributes(
            {
                "yuxi.authz.decision": "allowed" if code is None else "refused",
                "yuxi.authz.rule": rule,
            }
        )
        return result


async def decided_call(
    check: Awaitable[R],
    tool: BaseTool,
    tool_args: dict[str, Any],
    tool_context: ToolContext,
    tree_call: bool,
) -> R:
    """`decided` for a tool call: an agent tool or handoff (`tree_call`), the skill
    loader (with the skill's name), or any other tool."""
    name = tool.name
    kind = "agent" if tree_call else "skill" if name in SKILL_LOADER_TOOLS else "tool"
    skill = tool_args.get("skill_name") if kind == "skill" else None
    user, agent = tool_context.user_id, tool_context.agent_name
    return await decided(kind, check, user_id=user, agent=agent, tool=name, skill=skill)


def refused_in_tool(tool: BaseTool, tool_context: ToolContext, kind: str, argument: str) -> None:
    """A refusal a tool made itself (`check_resource`), after the plugin allowed the
    call: a decision span of its own, under the call's `execute_tool` span."""
    attributes = {
        "yuxi.authz.decision": "refused",
        "yuxi.authz.rule": "resource_not_available",
        "yuxi.resource.kind": kind,
        "yuxi.authz.argument": argument,
        "user.id": tool_context.user_id,
        "gen_ai.agent.name": tool_context.agent_name,
        "gen_ai.tool.name": tool.name,
    }
    with span("yuxi.authorize tool", attributes):
        pass


def note_refusal(code: str) -> None:
    """The refusal the reporter records names the rule of the decision under way."""
    decision = _DECISION.get()
    if decision is not None and decision.rule is None:
        decision.rule = code


def note_resource(kind: str, argument: str) -> None:
    """A refused resource argument: its kind (`knowledge_base`, `file`, `path`) and the
    argument's name, never its value."""
    decision = _DECISION.get()
    if decision is not None:
        decision.span.set_attributes({"yuxi.resource.kind": kind, "yuxi.authz.argument": argument})


def skill_activated(run: Run | None, ctx: ToolContext, args: dict[str, Any], result: Any) -> None:
    """`load_skill` answered without an error: the skill is active from the next model
    step. The span names the skill and what it opens (configuration names only)."""
    name = args.get("skill_name")
    if not isinstance(name, str) or (isinstance(result, dict) and "error" in result):
        return
    with span("yuxi.skill.activate", {"gen_ai.skill.name": name}) as current:
        tree = None if run is None else run.live or run.runtime
        runtime = None if tree is None else tree.agent(tree.checked_as(ctx.agent_name))
        spec = None if runtime is None else runtime.context.skill_specs.get(name)
        if spec is not None and current.is_recording():
            current.set_attributes(
                {
                    "gen_ai.agent.name": ctx.agent_name,
                    "yuxi.skill.tools": list(spec.tool_dependencies),
                    "yuxi.skill.mcp_servers": list(spec.mcp_dependencies),
                    "yuxi.skill.dependencies": list(spec.skill_dependencies),
                }
            )


def nested_bound(call: AgentToolCall, nested: Run) -> None:
    """A nested run (an agent tool's) adopted by its caller's run, or refused."""
    refused = nested.refused
    attributes = {
        "gen_ai.agent.name": call.agent,
        "yuxi.agent_tool.caller": call.callers[-1] if call.callers else None,
        "yuxi.agent_tool.depth": len(call.callers),
        "yuxi.run.parent_invocation": call.parent,
        "yuxi.run.invocation": nested.invocation_id,
        "yuxi.authz.decision": "refused" if refused is not None else "allowed",
        "yuxi.authz.rule": refused.CODE.lower() if refused is not None else "caller_run_live",
    }
    with span("yuxi.agent_tool.bind", attributes):
        pass
