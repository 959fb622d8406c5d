"""Claims on the run ledger are single atomic statements: of two workers claiming one
run at the same moment (separate engines, so separate connections and transactions)
exactly one holds it, on PostgreSQL as on SQLite; a closed run is never claimed again
and a take-over moves only a lapsed lease."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adk_yuxi._sql import SqlStore
from adk_yuxi.ledger import (
    LEASE_LAPSED,
    LeaseExpired,
    LeaseHeld,
    LedgerError,
    RunEnded,
    RunLedger,
    RunNotFound,
    RunRecord,
    RunWaiting,
)

from ._harness import APP, USER

ROUNDS = 20


def key(session: str, invocation: str = "e-1") -> dict[str, str]:
    return {
        "app_name": APP,
        "user_id": USER,
        "session_id": session,
        "invocation_id": invocation,
        "agent_name": "helper",
    }


@pytest.fixture
async def two_workers(db_url: str) -> AsyncIterator[tuple[RunLedger, RunLedger]]:
    """Two ledgers on one database through two engines, as two processes would be."""
    stores = [SqlStore(db_url), SqlStore(db_url)]
    for store in stores:
        await store.ready()
    try:
        yield RunLedger(stores[0]), RunLedger(stores[1])
    finally:
        for store in stores:
            await store.close()


def winners(outcomes: list[RunRecord | BaseException]) -> list[RunRecord]:
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, LedgerError):
            raise outcome
    return [o for o in outcomes if isinstance(o, RunRecord)]


async def test_two_workers_resuming_one_waiting_run_one_wins(
    two_workers: tuple[RunLedger, RunLedger],
) -> None:
    a, b = two_workers
    for i in range(ROUNDS):
        first = await a.begin(**key(f"s{i}"), worker="A", lease_seconds=60)
        assert await a.finish(first.run_id, "A", "waiting")
        outcomes = await asyncio.gather(
            a.begin(**key(f"s{i}"), worker="A2", lease_seconds=60),
            b.begin(**key(f"s{i}"), worker="B", lease_seconds=60),
            return_exceptions=True,
        )
        won = winners(outcomes)
        assert len(won) == 1, (i, outcomes)
        assert all(isinstance(o, LeaseHeld) for o in outcomes if o not in won), outcomes
        held = await a.get(first.run_id)
        assert (held.status, held.worker) == ("running", won[0].worker)


async def test_two_workers_starting_one_new_run_one_wins(
    two_workers: tuple[RunLedger, RunLedger],
) -> None:
    a, b = two_workers
    for i in range(ROUNDS):
        outcomes = await asyncio.gather(
            a.begin(**key(f"n{i}"), worker="A", lease_seconds=60),
            b.begin(**key(f"n{i}"), worker="B", lease_seconds=60),
            return_exceptions=True,
        )
        won = winners(outcomes)
        assert len(won) == 1, (i, outcomes)
        assert all(isinstance(o, LeaseHeld) for o in outcomes if o not in won), outcomes


async def test_two_takeovers_of_a_lapsed_lease_one_wins(
    two_workers: tuple[RunLedger, RunLedger],
) -> None:
    a, b = two_workers
    runs_a, runs_b = RunLedger(a.store), RunLedger(b.store)
    for i in range(ROUNDS):
        dead = await a.begin(**key(f"t{i}"), worker="dead", lease_seconds=0.01)
        await asyncio.sleep(0.02)
        # Two takeovers and a worker closing the lapsed run as failed, all at once.
        outcomes = await asyncio.gather(
            a.take_over(dead.run_id, "A", 60),
            b.take_over(dead.run_id, "B", 60),
            runs_a.expire(dead.run_id) if i % 2 else runs_b.expire(dead.run_id),
            return_exceptions=True,
        )
        took, expired = winners(outcomes[:2]), outcomes[2]
        assert len(took) + (expired is True) == 1, (i, outcomes)
        final = await a.get(dead.run_id)
        if took:
            assert (final.status, final.worker) == ("running", took[0].worker)
        else:
            assert (final.status, final.error) == ("failed", LEASE_LAPSED)


async def test_a_worker_does_not_reenter_its_own_running_run(
    two_workers: tuple[RunLedger, RunLedger],
) -> None:
    """The worker token is not a licence: a second begin of a running run by the same
    worker is refused like anyone else's (it would run the invocation twice)."""
    a, _ = two_workers
    held = await a.begin(**key("r"), worker="A", lease_seconds=60)
    with pytest.raises(LeaseHeld):
        await a.begin(**key("r"), worker="A", lease_seconds=60)
    with pytest.raises(LeaseHeld):  # a live lease is not taken over, not even by its holder
        await a.take_over(held.run_id, "A", 60)


@pytest.mark.parametrize("outcome", ["completed", "failed", "cancelled", "lapsed"])
async def test_a_closed_run_is_never_claimed_again(
    two_workers: tuple[RunLedger, RunLedger], outcome: str
) -> None:
    a, b = two_workers
    run = await a.begin(**key("c"), worker="A", lease_seconds=60)
    if outcome == "lapsed":
        await a.store.write_one(
            "UPDATE yx_runs SET lease_expires_at = 0 WHERE run_id = :r", {"r": run.run_id}
        )
        assert await RunLedger(a.store).expire(run.run_id)
    else:
        assert await a.finish(run.run_id, "A", outcome)
    closed = await a.get(run.run_id)
    for attempt in (
        a.begin(**key("c"), worker="A", lease_seconds=60),
        b.begin(**key("c"), worker="B", lease_seconds=60),
        b.take_over(run.run_id, "B", 60),
        RunLedger(b.store).resume(closed, worker="B", lease_seconds=60),
    ):
        with pytest.raises(RunEnded) as ended:
            await attempt
        assert ended.value.status == closed.status
    assert await a.get(run.run_id) == closed  # nothing changed


async def test_a_lapsed_run_needs_a_takeover_and_a_waiting_one_an_answer(
    two_workers: tuple[RunLedger, RunLedger],
) -> None:
    a, b = two_workers
    run = await a.begin(**key("l"), worker="A", lease_seconds=0.05)
    await asyncio.sleep(0.1)
    with pytest.raises(LeaseExpired):
        await b.begin(**key("l"), worker="B", lease_seconds=60)
    taken = await b.take_over(run.run_id, "B", 60)
    assert (taken.status, taken.worker) == ("running", "B")
    assert await b.finish(run.run_id, "B", "waiting")
    with pytest.raises(RunWaiting):  # nothing to take over: answer its point instead
        await b.take_over(run.run_id, "B", 60)


async def test_a_new_run_never_starts_beside_one_that_just_paused(
    two_workers: tuple[RunLedger, RunLedger],
) -> None:
    """A run pausing at a waiting point while another worker claims the session for a
    new message: either the new run wins (the pause comes after it... and is refused as
    the session runs another run) or it is refused `RunWaiting`; never both."""
    a, b = two_workers
    runs_b = RunLedger(b.store)
    both = 0
    for i in range(ROUNDS):
        session = f"p{i}"
        first = await a.begin(**key(session), worker="A", lease_seconds=60)
        outcomes = await asyncio.gather(
            a.finish(first.run_id, "A", "waiting"),
            runs_b.claim_new(**key(session, "e-2"), worker="B", lease_seconds=60),
            return_exceptions=True,
        )
        page = await a.list_runs(app_name=APP, user_id=USER, session_id=session)
        statuses = sorted(r.status for r in page.items)
        both += statuses == ["running", "waiting"]
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and not isinstance(outcome, LedgerError):
                raise outcome
    assert both == 0


async def test_a_resume_only_claim_never_records_a_run(
    two_workers: tuple[RunLedger, RunLedger],
) -> None:
    """A resume whose run went with its deleted session is `RunNotFound`, and nothing is
    recorded for the deleted session."""
    ledger, _ = two_workers
    claim = {**key("gone"), "worker": "w0", "lease_seconds": 30}
    with pytest.raises(RunNotFound):
        await ledger.claim(**claim, resume_only=True)
    found = await ledger.find(app_name=APP, user_id=USER, session_id="gone", invocation_id="e-1")
    assert found is None
    record, resumed = await ledger.claim(**claim)  # a plain claim records a new run
    assert record.status == "running" and not resumed
