"""Which run uses which runtime: the per-invocation binding.

A `Run` is made when a run starts (`before_run`) and looked up by invocation id at every
model step and tool call, so concurrent runs of different users on one Runner never
see each other's rights. It holds the runtime the run was bound to (its tool
instances), the runtime of the principal as of the latest call (its decisions), the
run's `RunBudget`, and a pending stop that the next model call turns into the final
error event. It is released by `after_run` / `on_run_error`, or, for a run ADK
cancelled without either, when ADK drops the invocation context.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext

from adk_yuxi.errors import RunStopped

from ...access import AccessDenied, Principal
from ..rights._cache import RuntimeCache
from ..rights._tree_runtime import TreeRuntime
from ._budget import RunBudget

__all__ = ["Run", "RunBindings", "model_step"]


def model_step(ctx: ReadonlyContext) -> int:
    """Which model step of its session `ctx` belongs to: no event is appended between
    the declarations of a step and its model call, so both share one number."""
    return len(ctx.session.events)


@dataclass(eq=False)
class Run:
    user_id: str
    invocation_id: str
    runtime: TreeRuntime | None = None
    """The runtimes bound at run start: their tool instances serve the whole run."""
    principal: Principal | None = None
    """The principal as of the latest check, and `live` its runtimes."""
    live: TreeRuntime | None = None
    budget: RunBudget | None = None
    refused: type[RunStopped] | None = None
    """Why the run may not start at all (set at binding; nothing runs)."""
    stop: type[RunStopped] | None = None
    """Why the run must end: the next model call ends it with this error event."""
    stop_text: str | None = None
    """The public text of `stop` where it says more than the stop's own (the schema an
    answer did not match)."""
    final_call: bool = False
    """The model call in flight is the last one (`early_stopping="generate"`)."""
    final_tools: frozenset[str] = frozenset()
    """The tools the last model call keeps (the structured answer's `set_model_response`)."""
    checked_step: int | None = None
    """The model step whose rights were read last (see `current_runtime`)."""
    parent: Run | None = None
    """For the nested run of an agent tool: the run that called it."""
    callers: tuple[str, ...] = ()
    """For a nested run: the agents whose tool call it is (their rights are checked too)."""
    link: Any = None
    """For a nested run: how it reports a stop to its caller (`_tree_calls.AgentToolCall`)."""

    def stopped_above(self) -> type[RunStopped] | None:
        """The stop of the nearest run above this nested run that was stopped, if any: a
        stopped turn stops every run below it."""
        above = self.parent
        while above is not None:
            if above.stop is not None:
                return above.stop
            above = above.parent
        return None


def _refusal_below(parent: Run | None) -> type[RunStopped] | None:
    """Why a nested run may not start under `parent` (None: it may). A caller no longer
    bound has ended; a refused or stopped one, or one below a stopped run, is ending."""
    if parent is None:
        return AccessDenied
    stopped = parent.refused or parent.stop or parent.stopped_above()
    if stopped is None and parent.runtime is None:
        return AccessDenied
    return stopped


class RunBindings:
    def __init__(self, cache: RuntimeCache) -> None:
        self.cache = cache
        self._runs: dict[str, Run] = {}
        self._finalizers: dict[str, weakref.finalize] = {}
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> int:
        """Runs currently bound; zero whenever the app is idle."""
        return len(self._runs)

    def get(self, invocation_id: str) -> Run | None:
        return self._runs.get(invocation_id)

    def bind(self, run: Run, invocation_context: Any) -> None:
        """Binds `run` to its invocation, released at the latest when ADK drops
        `invocation_context`."""
        self._runs[run.invocation_id] = run
        self._finalizers[run.invocation_id] = weakref.finalize(
            invocation_context, self._abandon, run.invocation_id, run
        )

    def adopt(
        self, invocation_context: Any, parent_invocation_id: str, callers: tuple[str, ...]
    ) -> Run:
        """Binds a nested invocation (an agent called as a tool) to a run of its own that
        shares its caller's runtimes, rights and budget. The caller outlives it, so it
        holds no cache entry of its own. When the caller is no longer bound, or a run above
        it was stopped, the nested run is bound refused: it never runs as a new root."""
        parent = self._runs.get(parent_invocation_id)
        run = Run(
            user_id=invocation_context.user_id,
            invocation_id=invocation_context.invocation_id,
            parent=parent,
            callers=callers,
        )
        run.refused = _refusal_below(parent)
        if parent is not None and run.refused is None:
            run.runtime, run.principal = parent.runtime, parent.principal
            run.live, run.budget = parent.live, parent.budget
        self.bind(run, invocation_context)
        return run

    async def release(self, invocation_id: str) -> None:
        """Ends the binding of `invocation_id`; safe to call more than once."""
        run = self._unbind(invocation_id, None)
        if run is not None and run.runtime is not None and run.parent is None:
            await self.cache.release(run.runtime)

    def _unbind(self, invocation_id: str, only: Run | None) -> Run | None:
        run = self._runs.get(invocation_id)
        if run is None or (only is not None and run is not only):
            return None
        del self._runs[invocation_id]
        finalizer = self._finalizers.pop(invocation_id, None)
        if finalizer is not None:
            finalizer.detach()
        return run

    def _abandon(self, invocation_id: str, run: Run) -> None:
        """The invocation context was dropped without after_run or on_run_error (ADK
        skips both when a run is cancelled), so the binding is released here."""
        self._finalizers.pop(invocation_id, None)
        unbound = self._unbind(invocation_id, run)
        if unbound is None or unbound.runtime is None or unbound.parent is not None:
            return
        task = self.cache.release_later(unbound.runtime)
        if task is not None:
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
