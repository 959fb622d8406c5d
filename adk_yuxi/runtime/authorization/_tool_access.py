"""The authorization plugin's side of `adk_yuxi.tools.RunAccess`: what a tool reaches
of its run (the workspace, resource checks) on the runtime of the agent making the call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext

from ...tools import ResourceType
from ..rights._runtime import Runtime
from ._binding import Run

__all__ = ["ToolAccess"]


class ToolAccess:
    """Mixed into the plugin, which knows the run of an invocation (`run_of`)."""

    def run_of(self, ctx: ReadonlyContext) -> Run | None:
        raise NotImplementedError

    def agent_runtime(self, ctx: ReadonlyContext) -> Runtime | None:
        """The runtime of the agent making this call (of its tree, as of the latest
        check), or None outside a Yuxi run or in a run that is ending."""
        run = self.run_of(ctx)
        tree = None if run is None or run.stop is not None else (run.live or run.runtime)
        return None if tree is None else tree.agent(tree.checked_as(ctx.agent_name))

    def workspace_of(self, ctx: ReadonlyContext) -> Path | None:
        runtime = self.agent_runtime(ctx)
        return None if runtime is None else runtime.guard.workspace

    async def check_resource(
        self, ctx: ReadonlyContext, kind: ResourceType, value: Any
    ) -> str | None:
        """Why this run may not touch `value` (None: it may)."""
        runtime = self.agent_runtime(ctx)
        if runtime is None:
            return "no Yuxi runtime in this invocation"
        return await runtime.guard.allows(kind, value)
