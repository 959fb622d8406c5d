"""`LedgerPlugin`: records every run in the ledger, keeps its lease, closes it.

It is also where the base tools find what they need (the waiting points, the marks,
the access repository, the user's workspace): an ADK tool reaches the plugins of its
run through the public invocation context, so the tools stay shared registry instances
while each App decides on which database and workspace they act.

A run is claimed in the ledger before ADK stores anything of it (its user message is
stored after the plugins' `on_user_message_callback`, where the claim is made): one
conditional statement the database decides, so of two workers, or two calls on one
Runner, resuming the same invocation exactly one runs it, and a closed run is refused
(`RunEnded`). A run a host claimed first is handed over (`adopt`), as is one taken over
after its worker's lease lapsed (`take_over`).

Renewal runs as its own task beside the run: a timer that wakes every second, renews
when due (one short UPDATE) and never holds up the event loop. A renewal that finds the
run taken over marks it lost; the next model or tool call then stops it with
``worker_lease_expired``. Outcomes: ``waiting`` when the run paused on a long-running
call, ``completed`` after a final response, ``cancelled`` when the caller closed it
early or its task was cancelled, ``failed`` on an error: an exception, or an error
event (a model host down or refusing, a model error code) that ended the turn, which
ADK reports as a final response like any other.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from sqlalchemy.engine import URL
from typing_extensions import override

from .._sql.store import SqlStore, make_store
from ..access import AccessRepository
from ..errors import RunStopped, ToolErrorCode, stop_response, tool_error
from ..marks import MarkStore
from ..observability._metrics import instruments
from ..waitpoints import WaitpointStore
from ._active import ActiveRun, HeldRuns
from ._answers import answered_again
from ._errors import AnswerAlreadyResumed, LedgerError, WorkerLeaseExpired
from ._store import RunLedger, RunRecord

__all__ = ["PLUGIN_NAME", "ActiveRun", "LedgerPlugin", "WorkspaceRoot", "ledger_plugin_of"]

PLUGIN_NAME = "yuxi_ledger"
WorkspaceRoot = str | Path | Callable[[str], str | Path]
"""The user's workspace: one directory (an App for one user), or user id -> directory."""

logger = logging.getLogger("adk_yuxi.ledger")
_TICK = 1.0


def _default_worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LedgerPlugin(BasePlugin):
    """`store`: the database (URL or `SqlStore`) of runs, waiting points and marks.
    `repository`: when given, a mark re-checks the account and the agent right in its
    transaction. `workspace`: the user's files for `present_artifacts`. `worker`: this
    process's lease token (host, pid and a random suffix by default). The lease lasts
    `lease_seconds` and is renewed every `renew_every` (a quarter of it by default);
    before a model or tool call the lease is read from the database only when less than
    `lease_margin` of it is left (half of it by default)."""

    def __init__(
        self,
        store: SqlStore | str | URL,
        *,
        repository: AccessRepository | None = None,
        workspace: WorkspaceRoot | None = None,
        worker: str | None = None,
        lease_seconds: float = 120.0,
        renew_every: float | None = None,
        lease_margin: float | None = None,
    ) -> None:
        super().__init__(name=PLUGIN_NAME)
        if lease_seconds <= 0:
            raise ValueError("lease_seconds must be positive")
        self.store, self._owns_store = make_store(store)
        store = self.store
        self.ledger = RunLedger(store)
        self.waitpoints = WaitpointStore(store)
        self.marks = MarkStore(store)
        self.repository = repository
        self.worker = worker or _default_worker()
        self.lease_seconds = lease_seconds
        self.renew_every = lease_seconds / 4 if renew_every is None else renew_every
        self.lease_margin = lease_seconds / 2 if lease_margin is None else lease_margin
        if self.lease_margin < 0:
            raise ValueError("lease_margin must not be negative")
        self._workspace = workspace
        self.held = HeldRuns()  # the runs this plugin claimed or was handed

    def workspace_of(self, user_id: str) -> Path | None:
        """The user's workspace root, resolved; None when the App has none."""
        root = self._workspace
        if root is None:
            return None
        if callable(root):
            root = root(user_id)
        return Path(root).resolve()

    def run_of(self, invocation_id: str) -> ActiveRun | None:
        return self.held.runs.get(invocation_id)

    # -- runs claimed before they start -------------------------------------------------

    def adopt(self, record: RunRecord) -> None:
        """A run the host has just recorded as running under this worker's lease
        (`RunLedger.claim_new` or `resume`): its start takes the record as it is instead
        of claiming it again, once. Its outcome is kept for `disown`."""
        self.held.hand_over(record, self.worker, report=True)

    def disown(self, invocation_id: str) -> RunRecord | None:
        """Forgets an adopted run; returns the record as this plugin closed it, if it
        did (None: not closed here, or this worker lost it: read the database)."""
        return self.held.disown(invocation_id)

    async def take_over(self, run_id: str) -> RunRecord:
        """Takes over a running run whose worker's lease lapsed (`RunLedger.take_over`
        under this worker) and lets the next `run_async` of its invocation on this
        plugin's Runner continue it, once. The only way a lapsed run goes on."""
        record = await self.ledger.take_over(run_id, self.worker, self.lease_seconds)
        self.held.hand_over(record, self.worker, report=False)
        return record

    async def _claim(self, ctx: InvocationContext) -> ActiveRun:
        """Claims the invocation for `ctx` before ADK stores anything of it: a claim
        handed over (`adopt`, `take_over`), else one conditional statement in the
        ledger (`RunLedger.claim`). An invocation still executing on this plugin is
        refused here, whatever the database says: the worker token is no licence to
        run it twice. Raises the ledger's refusal (`LedgerError`)."""
        self.held.refuse_if_executing(ctx.invocation_id)
        handed = self.held.take_handed(ctx)
        if handed is not None:
            record, reported, resumed = handed
        else:
            record, resumed = await self.ledger.claim(
                app_name=ctx.app_name,
                user_id=ctx.user_id,
                session_id=ctx.session.id,
                invocation_id=ctx.invocation_id,
                agent_name=ctx.agent.name if ctx.agent is not None else "",
                worker=self.worker,
                lease_seconds=self.lease_seconds,
            )
            reported = False
        active = ActiveRun(
            record=record,
            owner=None,
            context=ctx,
            resumed=resumed,
            reported=reported,
            lease_until=record.lease_expires_at,
        )
        self.held.runs[ctx.invocation_id] = active
        return active

    async def _release(self, active: ActiveRun, error: str) -> None:
        """A claim whose run never started (storing its message failed): a resumed run
        waits at its point again, a new one failed; a host's claim is the host's."""
        self.held.forget(active)
        if active.reported:
            return
        status = "waiting" if active.resumed else "failed"
        try:
            await self.ledger.finish(
                active.run_id, active.worker, status, None if active.resumed else error
            )
        except Exception:
            logger.exception("releasing run %s failed", active.run_id)

    # -- the lease ----------------------------------------------------------------------

    async def _keep(self, active: ActiveRun) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time() + self.renew_every
        while True:
            await asyncio.sleep(min(_TICK, self.renew_every))
            owner = active.owner
            if owner is not None and (owner.done() or owner.cancelling()):
                # Cancelled runs skip ADK's after-run callbacks; close them here.
                await self._close(active, "cancelled", "the run's task was cancelled")
                return
            if loop.time() < due or active.lost:  # a lost run: watched until it ends
                continue
            due = loop.time() + self.renew_every
            # Taken before the UPDATE: the row's lease ends no earlier than this.
            until = time.time() + self.lease_seconds
            try:
                held = await self.ledger.renew(active.run_id, active.worker, self.lease_seconds)
            except Exception:  # a database hiccup: keep the run, try again next time
                logger.exception("renewing the lease of run %s failed", active.run_id)
                continue
            if held:
                active.lease_until = until
            else:
                logger.warning("run %s was taken over by another worker", active.run_id)
                instruments().lease_losses.add(1)
                active.stop(WorkerLeaseExpired)

    async def _close(self, active: ActiveRun, status: str, error: str | None = None) -> None:
        self.held.forget(active)
        renewer = active.renewer
        if renewer is not None and renewer is not asyncio.current_task():
            renewer.cancel()
        if active.lost:
            return
        try:
            closed = await self.ledger.finish(active.run_id, active.worker, status, error)
        except Exception:
            logger.exception("closing run %s as %s failed", active.run_id, status)
            return
        if closed:
            instruments().turn(time.monotonic() - active.began, status, active.record.agent_name)
        if closed and active.reported:  # until `disown`
            now = time.time()
            self.held.closed[active.record.invocation_id] = replace(
                active.record,
                status=status,
                error=error,
                lease_expires_at=now,
                updated_at=now,
                ended_at=None if status == "waiting" else now,
            )

    # -- ADK callbacks ------------------------------------------------------------------

    @override
    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        """The run is claimed here, the last moment before ADK stores the message: a
        refused claim (the run is closed, held, lapsed, or another run of the session
        runs) raises before anything of this call reaches the session, so the holder's
        next write is not stale. ADK wraps the error in a `RuntimeError` whose
        `__cause__` is the `LedgerError` (`resume_waitpoint` raises it as it is)."""
        try:
            active = await self._claim(invocation_context)
            again = await answered_again(invocation_context, user_message)
            if again:  # the run waits at a newer point: give the claim back, refuse
                await self._release(active, "")
                raise AnswerAlreadyResumed(invocation_context.session.id, again)
        except LedgerError as refused:
            logger.warning("run refused: %s", refused)
            raise
        return None

    @override
    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        ctx = invocation_context
        # Claimed with its message; a call without one (resuming by invocation id) is
        # claimed here, as nothing of it was stored.
        active = self.held.here(ctx) or await self._claim(ctx)
        active.started = True
        active.owner = asyncio.current_task()
        active.renewer = asyncio.create_task(self._keep(active), name=f"lease {active.run_id}")
        return None

    @override
    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        active = self.held.here(invocation_context)
        if active is not None and event.author != "user":
            active.paused = bool(event.long_running_tool_ids)
            active.final = not active.paused and event.is_final_response()
            if event.error_code and active.error is None:
                active.error = f"{event.error_code}: {event.error_message or ''}"[:2000]
        return None

    def _surely_held(self, active: ActiveRun) -> bool:
        """Whether the lease this worker set itself has, by its own clock, more than
        the safety margin left: nobody can have taken the run over or closed it then
        (both need a lapsed lease; clocks are assumed synchronised well within it)."""
        return active.lease_until - time.time() > self.lease_margin

    async def _stopped(self, invocation_id: str) -> type[RunStopped] | None:
        """Why the run must not take its next step: checked before every model and
        tool call, so a worker whose run was taken over or closed (its lease lapsed)
        executes nothing more, not only after its next renewal. The database is read
        only once the lease nears its end without a renewal (renewals and cancel
        requests are watched by their own tasks)."""
        active = self.held.runs.get(invocation_id)
        if active is None:
            return None
        if active.stopped is None and not self._surely_held(active):
            try:
                async with self.store.read() as tx:
                    denial = await RunLedger.lease_denial(tx, active.run_id, active.worker)
            except Exception:  # the database is unreachable: no step without the lease
                logger.exception("checking the lease of run %s failed", active.run_id)
                denial = "the lease could not be checked"
            if denial is not None:
                logger.warning("run %s stops: %s", active.run_id, denial)
                instruments().lease_losses.add(1)
                active.stop(WorkerLeaseExpired)
        return active.stopped

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        stopped = await self._stopped(callback_context.invocation_id)
        if stopped is None:
            return None
        return stop_response(stopped)

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if await self._stopped(tool_context.invocation_id) is None:
            return None
        return tool_error(ToolErrorCode.RUN_ENDING, tool.name)

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        active = self.held.here(invocation_context)
        if active is None:
            return
        stopped = active.stopped
        if invocation_context.is_aborted:  # ADK's abort signal: the host cancelled it
            await self._close(active, "cancelled", "aborted by the host")
        elif stopped is not None or active.error is not None:
            # Any run that ends with an error is failed with its code: a stop (a right
            # revoked mid-run) as much as an error event (a model host refusing).
            error = f"{stopped.CODE}: {stopped.PUBLIC_TEXT}" if stopped else active.error
            await self._close(active, "failed", error)
        elif active.paused:
            await self._close(active, "waiting")
        elif active.final:
            await self._close(active, "completed")
        else:
            await self._close(active, "cancelled", "closed before a final response")

    @override
    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        active = self.held.here(invocation_context)
        if active is None:  # refused before it was claimed: nothing of it is ours
            return
        reason = f"{type(error).__name__}: {error}"[:2000]
        if active.started:
            await self._close(active, "failed", reason)
        else:
            await self._release(active, reason)

    @override
    async def close(self) -> None:
        for active in list(self.held.runs.values()):
            if active.renewer is not None:
                active.renewer.cancel()
        if self._owns_store:
            await self.store.close()


def ledger_plugin_of(ctx: ToolContext | CallbackContext) -> LedgerPlugin | None:
    """The ledger plugin of the run `ctx` belongs to, if its App has one."""
    plugin = ctx.get_invocation_context().plugin_manager.get_plugin(PLUGIN_NAME)
    return plugin if isinstance(plugin, LedgerPlugin) else None
