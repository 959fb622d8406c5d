"""What a tool reaches of its run: resource checks (defence in depth behind the plugin's
check) and the run's budget."""

from __future__ import annotations

from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext

from .._adk import invocation_of
from ._binding import Run
from ._budget import RunBudget
from ._plugin import PLUGIN_NAME, AuthorizationPlugin
from ._resources import ResourceDenied, ResourceType
from ._runtime import Runtime

__all__ = ["check_resource", "current_agent_runtime", "current_run", "run_budget"]


def current_run(ctx: ReadonlyContext) -> Run | None:
    """The Yuxi run a tool call or callback belongs to, if any."""
    plugin = invocation_of(ctx).plugin_manager.get_plugin(PLUGIN_NAME)
    return plugin.run_of(ctx) if isinstance(plugin, AuthorizationPlugin) else None


def run_budget(ctx: ReadonlyContext) -> RunBudget | None:
    """The budget of the run, for anything that charges it (a repair, a failure)."""
    run = current_run(ctx)
    return None if run is None else run.budget


def current_agent_runtime(ctx: ReadonlyContext) -> Runtime | None:
    """The runtime of the agent making this call (of its tree, as of the latest check),
    or None outside a Yuxi run or in a run that is ending."""
    run = current_run(ctx)
    tree = None if run is None or run.stop is not None else (run.live or run.runtime)
    return None if tree is None else tree.agent(tree.checked_as(ctx.agent_name))


async def check_resource(ctx: ReadonlyContext, kind: ResourceType | str, value: Any) -> None:
    """Raises `ResourceDenied` unless this run may touch `value`, on the rights of the
    latest check. A tool may let it propagate: the plugin answers the model with
    `resource_not_available`.

    Outside a Yuxi runtime there is nothing to check against, so it refuses: a tool
    that guards a resource must not become open by being attached to a plain agent.
    """
    resource = ResourceType(kind)
    runtime = current_agent_runtime(ctx)
    if runtime is None:
        raise ResourceDenied("(direct)", resource, "no Yuxi runtime in this invocation")
    reason = await runtime.guard.allows(resource, value)
    if reason is not None:
        raise ResourceDenied("(direct)", resource, reason)
