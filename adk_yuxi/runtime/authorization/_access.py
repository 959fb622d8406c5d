"""What a tool reaches of its run: resource checks (defence in depth behind the plugin's
check, `adk_yuxi.tools.check_resource`) and the run's budget."""

from __future__ import annotations

from google.adk.agents.readonly_context import ReadonlyContext

from ..._adk import invocation_of
from ...tools import check_resource
from ..rights._runtime import Runtime
from ._binding import Run
from ._budget import RunBudget
from ._plugin import PLUGIN_NAME, AuthorizationPlugin

__all__ = ["check_resource", "current_agent_runtime", "current_run", "run_budget"]


def _plugin(ctx: ReadonlyContext) -> AuthorizationPlugin | None:
    plugin = invocation_of(ctx).plugin_manager.get_plugin(PLUGIN_NAME)
    return plugin if isinstance(plugin, AuthorizationPlugin) else None


def current_run(ctx: ReadonlyContext) -> Run | None:
    """The Yuxi run a tool call or callback belongs to, if any."""
    plugin = _plugin(ctx)
    return None if plugin is None else plugin.run_of(ctx)


def run_budget(ctx: ReadonlyContext) -> RunBudget | None:
    """The budget of the run, for anything that charges it (a repair, a failure)."""
    run = current_run(ctx)
    return None if run is None else run.budget


def current_agent_runtime(ctx: ReadonlyContext) -> Runtime | None:
    """The runtime of the agent making this call (of its tree, as of the latest check),
    or None outside a Yuxi run or in a run that is ending."""
    plugin = _plugin(ctx)
    return None if plugin is None else plugin.agent_runtime(ctx)
