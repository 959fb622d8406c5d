"""Per-run state a guard plugin keeps, dropped when the run ends however it ends."""

from __future__ import annotations

from google.adk.agents.invocation_context import InvocationContext

__all__ = ["RunScoped"]


class RunScoped:
    """Mixin for a plugin holding per-invocation state: `end_run` is called after the run,
    and after a run that failed, so no entry outlives its run."""

    def end_run(self, invocation_id: str) -> None:
        raise NotImplementedError

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self.end_run(invocation_context.invocation_id)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        self.end_run(invocation_context.invocation_id)
