"""What a worker knows about a run it claimed: its record, its lease, how it went."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.invocation_context import InvocationContext

from ..errors import RunStopped
from ._errors import LeaseHeld, WorkerLeaseExpired
from ._store import RunRecord

__all__ = ["ActiveRun", "HeldRuns"]


@dataclass
class ActiveRun:
    """What this worker knows about a run it holds."""

    record: RunRecord
    owner: asyncio.Task[Any] | None
    # The ADK invocation that claimed it: callbacks of a refused duplicate of the same
    # invocation id (another context object) never act on this run.
    context: InvocationContext | None = field(default=None, repr=False)
    resumed: bool = False  # the claim moved a waiting run back to running
    reported: bool = False  # the host claimed it (`adopt`): `disown` hands the outcome back
    started: bool = False  # its before-run callback passed (the message is stored)
    stopped: type[RunStopped] | None = None
    paused: bool = False
    final: bool = False
    error: str | None = None  # the first error event's code and message
    lease_until: float = 0.0  # the lease as this worker last set it, by its own clock
    renewer: asyncio.Task[None] | None = field(default=None, repr=False)
    began: float = field(default_factory=time.monotonic)  # claimed here (the turn's start)

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def worker(self) -> str:
        return self.record.worker

    @property
    def lost(self) -> bool:
        return self.stopped is WorkerLeaseExpired

    def stop(self, stop: type[RunStopped]) -> None:
        """Ends the run at its next model call (and refuses its next tool calls)."""
        if self.stopped is None:
            self.stopped = stop


class HeldRuns:
    """One plugin's runs by invocation id: those it claimed and that have not ended
    (`runs`), claims handed to it to start once (`handed`), and the outcomes of the
    host's claims until the host takes them (`closed`)."""

    def __init__(self) -> None:
        self.runs: dict[str, ActiveRun] = {}
        self.handed: dict[str, tuple[RunRecord, bool, bool]] = {}  # record, report, resumed
        self.closed: dict[str, RunRecord] = {}

    def hand_over(
        self, record: RunRecord, worker: str, *, report: bool, resumed: bool = False
    ) -> None:
        """`report`: keep the outcome for `disown`; `resumed`: the claim moved a waiting
        run to running (it waits again if the run never starts)."""
        if record.worker == worker and record.status == "running":
            self.handed[record.invocation_id] = (record, report, resumed)

    def take_handed(self, ctx: InvocationContext) -> tuple[RunRecord, bool, bool] | None:
        """The claim handed over for `ctx`'s invocation, removed: one start per claim."""
        entry = self.handed.get(ctx.invocation_id)
        if entry is None or (entry[0].app_name, entry[0].user_id, entry[0].session_id) != (
            ctx.app_name,
            ctx.user_id,
            ctx.session.id,
        ):
            return None
        del self.handed[ctx.invocation_id]
        return entry

    def disown(self, invocation_id: str) -> RunRecord | None:
        """Forgets a claim handed over; the outcome this plugin recorded, if any."""
        self.handed.pop(invocation_id, None)
        return self.closed.pop(invocation_id, None)

    def here(self, ctx: InvocationContext) -> ActiveRun | None:
        """The run `ctx` claimed (not another context's of the same invocation id)."""
        active = self.runs.get(ctx.invocation_id)
        return active if active is not None and active.context is ctx else None

    def refuse_if_executing(self, invocation_id: str) -> None:
        """`LeaseHeld` while the invocation executes here (also after its lease was
        lost, until it ends), or was claimed here and is about to start."""
        local = self.runs.get(invocation_id)
        if local is not None and (local.started or local.lease_until > time.time()):
            raise LeaseHeld(local.run_id)

    def forget(self, active: ActiveRun) -> None:
        if self.runs.get(active.record.invocation_id) is active:
            del self.runs[active.record.invocation_id]
