"""One run at a time per session, cancellation through any worker, runs of dead workers.

Before a run's first event is stored, this worker claims the session in the run ledger
(`RunLedger.claim_new`, decided by the database): a second run is 409 there and then,
with nothing written. The run is driven with an ADK abort signal held here; a cancel
request made through any worker is a timestamp on the ledger row, and this worker's
poller (one query per `cancel_poll_seconds` while it drives runs) trips the signal.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from google.adk.agents.invocation_context import new_invocation_context_id
from google.adk.runners import Runner

from adk_yuxi._sql import SqlStore
from adk_yuxi.ledger import PLUGIN_NAME, LedgerPlugin, RunLedger, RunRecord

__all__ = ["Claim", "RunControl"]

log = logging.getLogger("adk_yuxi.host")


@dataclass
class Claim:
    """A run this worker claimed and drives; `abort` cancels it (ADK's abort signal).
    `plugin` is the ledger plugin of its Runner, which takes the claim over at the
    run's start; `final` is the record after `settle`."""

    record: RunRecord
    plugin: LedgerPlugin | None = None
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    final: RunRecord | None = None

    @property
    def run_id(self) -> str:
        return self.record.run_id


class RunControl:
    """This worker's side of the session rule: its claims, their abort signals, and
    the poller that turns cancel requests recorded by any worker into aborts."""

    def __init__(
        self,
        store: SqlStore,
        *,
        worker: str,
        lease_seconds: float,
        poll_seconds: float,
    ) -> None:
        self.ledger = self.runs = RunLedger(store)
        self.worker = worker
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self._claims: dict[str, Claim] = {}
        self._poller: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._poller = asyncio.create_task(self._poll(), name="cancel requests")

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            if not self._claims:
                continue
            try:
                requested = await self.runs.cancel_requested(self.worker)
            except Exception:  # a database hiccup: poll again next time
                log.exception("polling for cancel requests failed")
                continue
            for run_id in requested:
                claim = self._claims.get(run_id)
                if claim is not None:
                    claim.abort.set()

    def _hold(self, runner: Runner, record: RunRecord) -> Claim:
        plugin = runner.plugin_manager.get_plugin(PLUGIN_NAME)
        claim = Claim(record, plugin if isinstance(plugin, LedgerPlugin) else None)
        if claim.plugin is not None:
            claim.plugin.adopt(record)
        self._claims[record.run_id] = claim
        return claim

    def _drop(self, claim: Claim) -> RunRecord | None:
        self._claims.pop(claim.run_id, None)
        if claim.plugin is None:
            return None
        return claim.plugin.disown(claim.record.invocation_id)

    async def claim_new(
        self, runner: Runner, user_id: str, session_id: str, invocation_id: str | None = None
    ) -> Claim:
        """The session's next run, recorded as running here (409 errors otherwise);
        `invocation_id` when the caller chose it first (an idempotency record names it)."""
        record = await self.runs.claim_new(
            app_name=runner.app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=invocation_id or new_invocation_context_id(),
            agent_name=runner.agent.name if runner.agent is not None else "",
            worker=self.worker,
            lease_seconds=self.lease_seconds,
        )
        return self._hold(runner, record)

    async def claim_resume(self, runner: Runner, run: RunRecord) -> Claim:
        """The waiting run, moved back to running here before its answer is recorded."""
        record = await self.runs.resume(run, worker=self.worker, lease_seconds=self.lease_seconds)
        return self._hold(runner, record)

    async def withdraw(self, claim: Claim) -> None:
        """Forgets a new run claimed here that never started (its session was deleted
        meanwhile): its row goes, as if it had never been claimed."""
        self._drop(claim)
        await self.ledger.forget_run(claim.run_id, self.worker)

    async def release(self, claim: Claim) -> None:
        """Gives a resumed run back to its waiting point (the answer was refused)."""
        self._drop(claim)
        await self.ledger.finish(claim.run_id, self.worker, "waiting")

    async def settle(self, claim: Claim, status: str, error: str | None = None) -> None:
        """After the run: closes it with `status` if nothing else did (the run failed
        before the ledger plugin began it); a run the plugin closed stays as it is.
        A run the plugin closed here, other than paused, is not read back: nobody
        changes an ended run. A paused one is read back for a cancel requested while it
        paused; one answered and resumed since (by this worker or another) is reported
        as this drive left it, waiting, and never closed here."""
        closed = self._drop(claim)
        if closed is not None and closed.status != "waiting":
            claim.final = closed
            return
        try:
            if closed is None:
                await self.ledger.finish(claim.run_id, self.worker, status, error)
            record = await self.ledger.get(claim.run_id)
            if record.status == "waiting" and record.cancel_requested_at is not None:
                # Cancelled while it paused at a waiting point: the request still counts.
                record, _ = await self.cancel(record)
            elif closed is not None and record.status == "running":
                record = closed  # answered and resumed since it paused: this drive paused
            claim.final = record
        except Exception:
            log.exception("closing run %s as %s failed", claim.run_id, status)

    async def cancel(self, run: RunRecord) -> tuple[RunRecord, bool]:
        """Cancels `run` (see `RunLedger.cancel`); a run driven here is aborted at
        once."""
        record, changed = await self.runs.cancel(run)
        claim = self._claims.get(record.run_id)
        if claim is not None and record.cancel_requested_at is not None:
            claim.abort.set()
        return record, changed
