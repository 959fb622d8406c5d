"""`RunLedger`'s session side: one running run per session decided by the database, the schema step
that introduced it, and a run closed under its worker executing no further tool call."""

from __future__ import annotations

import asyncio
import time

import pytest

from adk_yuxi._sql import SqlStore
from adk_yuxi.ledger import (
    LEASE_LAPSED,
    LedgerPlugin,
    RunEnded,
    RunInProgress,
    RunLedger,
    RunWaiting,
)
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import call
from adk_yuxi.waitpoints import Question, WaitpointConflict, WaitpointStore

from ._harness import APP, USER, make_runner, responses, run, user_text
from .test_ask_user_question import COLOUR

KEY = {"app_name": APP, "user_id": USER, "session_id": "s1", "agent_name": "helper"}


async def test_concurrent_claims_from_separate_workers_have_one_winner(db_url: str) -> None:
    stores = [SqlStore(db_url) for _ in range(6)]
    try:
        for store in stores:
            await store.ready()
        outcomes = await asyncio.gather(
            *(
                RunLedger(store).claim_new(
                    **KEY, invocation_id=f"e-{i}", worker=f"w{i}", lease_seconds=60
                )
                for i, store in enumerate(stores)
            ),
            return_exceptions=True,
        )
        won = [o for o in outcomes if not isinstance(o, BaseException)]
        assert len(won) == 1, outcomes
        assert all(isinstance(o, RunInProgress) for o in outcomes if o not in won)
        page = await RunLedger(stores[0]).list_runs(app_name=APP, user_id=USER)
        assert [r.run_id for r in page.items] == [won[0].run_id]
    finally:
        for store in stores:
            await store.close()


async def test_claim_closes_a_lapsed_run_and_respects_a_waiting_one(db_url: str) -> None:
    store = SqlStore(db_url)
    try:
        runs, ledger = RunLedger(store), RunLedger(store)
        dead = await runs.claim_new(**KEY, invocation_id="e-1", worker="dead", lease_seconds=0.05)
        # It died after opening a question and before pausing at it.
        asked = await WaitpointStore(store).open(
            app_name=APP,
            user_id=USER,
            session_id="s1",
            invocation_id="e-1",
            call_id="c-1",
            questions=[Question.model_validate(COLOUR)],
        )
        await asyncio.sleep(0.1)
        live = await runs.claim_new(**KEY, invocation_id="e-2", worker="w", lease_seconds=60)
        closed = await ledger.get(dead.run_id)
        assert (closed.status, closed.error) == ("failed", LEASE_LAPSED)
        withdrawn = await WaitpointStore(store).get(asked.id, user_id=USER)
        assert withdrawn.status == "cancelled"  # nobody can answer a run that is gone
        assert await runs.expire(dead.run_id) is False  # one winner, once
        assert await ledger.finish(live.run_id, "w", "waiting")
        with pytest.raises(RunWaiting):
            await runs.claim_new(**KEY, invocation_id="e-3", worker="w", lease_seconds=60)
        resumed = await runs.resume(live, worker="other", lease_seconds=60)
        assert (resumed.status, resumed.worker) == ("running", "other")
        with pytest.raises(RunInProgress):
            await runs.resume(live, worker="third", lease_seconds=60)
        # "other" dies holding the resumed run: the next resume closes it instead.
        await store.write_one(
            "UPDATE yx_runs SET lease_expires_at = 0 WHERE run_id = :r", {"r": live.run_id}
        )
        with pytest.raises(RunEnded):
            await runs.resume(live, worker="third", lease_seconds=60)
        assert (await ledger.get(live.run_id)).error == LEASE_LAPSED
    finally:
        await store.close()


async def test_a_run_ended_after_asking_leaves_no_question_to_answer(db_url: str) -> None:
    store = SqlStore(db_url)
    try:
        ledger, points = RunLedger(store), WaitpointStore(store)

        async def asked(invocation: str) -> str:
            point = await points.open(
                app_name=APP,
                user_id=USER,
                session_id="s1",
                invocation_id=invocation,
                call_id="c-1",
                questions=[Question.model_validate(COLOUR)],
            )
            return point.id

        # Cancelled by its worker right after it asked: the close withdraws the point.
        run = await ledger.claim_new(**KEY, invocation_id="e-1", worker="w", lease_seconds=60)
        first = await asked("e-1")
        assert await ledger.finish(run.run_id, "w", "cancelled", "the run's task was cancelled")
        assert (await points.get(first, user_id=USER)).status == "cancelled"
        # A point left pending under an ended run (opened after the close): the answer
        # is refused and the point withdrawn, instead of accepted and never resumed.
        late = await asked("e-1")
        with pytest.raises(WaitpointConflict):
            await points.answer(late, {"colour": "blue"}, user_id=USER)
        assert (await points.get(late, user_id=USER)).status == "cancelled"
        # Pausing keeps the point open.
        run = await ledger.claim_new(**KEY, invocation_id="e-2", worker="w", lease_seconds=60)
        waiting = await asked("e-2")
        assert await ledger.finish(run.run_id, "w", "waiting")
        assert (await points.answer(waiting, {"colour": "blue"}, user_id=USER)).status == "answered"
    finally:
        await store.close()


async def test_step_two_keeps_the_newest_running_run_of_a_session(db_url: str) -> None:
    store = SqlStore(db_url)
    await store.ready()
    # As a version-1 database: no index, no column, two runs of one session running.
    async with store.write() as tx:
        await tx.execute("DROP INDEX uq_yx_runs_running_session")
        await tx.execute("ALTER TABLE yx_runs DROP COLUMN cancel_requested_at")
        await tx.execute("UPDATE yx_schema_version SET version = 1 WHERE name = 'ledger'")
        for i in range(2):
            await tx.execute(
                "INSERT INTO yx_runs (run_id, app_name, user_id, session_id, invocation_id,"
                " agent_name, worker, lease_expires_at, status, started_at, updated_at)"
                " VALUES (:r, 'a', 'u', 's', :i, 'x', 'w', :t, 'running', :t, :t)",
                {"r": f"run-{i}", "i": f"e-{i}", "t": time.time() + i},
            )
    await store.close()
    store = SqlStore(db_url)
    try:
        ledger = RunLedger(store)
        older, newer = await ledger.get("run-0"), await ledger.get("run-1")
        assert (older.status, older.error) == ("failed", LEASE_LAPSED)
        assert newer.status == "running" and newer.cancel_requested_at is None
    finally:
        await store.close()


async def test_a_run_closed_under_its_worker_runs_no_further_tool(services: YuxiServices) -> None:
    closed = asyncio.Event()

    async def model_then_lapse(_: object) -> object:
        # This model call outlasts the worker's lease (its renewal never comes) and
        # another worker closes the run as failed (as it would after a crash).
        async with services.store.read() as tx:
            row = await tx.fetchone("SELECT run_id FROM yx_runs WHERE status = 'running'")
        assert row is not None
        await asyncio.sleep(0.6)
        assert await RunLedger(services.store).expire(row[0])
        closed.set()
        return call("ask_user_question", questions=[COLOUR])

    stalled = LedgerPlugin(services.store, lease_seconds=0.5, renew_every=60)
    runner, llm, plugin = make_runner(services, [model_then_lapse, "never said"], ledger=stalled)
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    events = await run(runner, session.id, user_text("hello"))
    assert closed.is_set()
    (refused,) = responses(events, "ask_user_question")
    assert refused["error"]["code"] == "run_ending"
    assert events[-1].error_code == "WORKER_LEASE_EXPIRED"
    assert len(llm.requests) == 1
    pending = await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)
    assert pending.items == []  # the tool never ran: no waiting point opened


async def test_a_claimed_run_is_adopted_once_and_its_outcome_handed_back(
    services: YuxiServices,
) -> None:
    """The plugin starts a run the host claimed without recording it again, only for
    its own worker, and hands back the outcome it recorded (then forgets it)."""
    runner, _, plugin = make_runner(services, ["done"])
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    runs = RunLedger(services.store)
    key = {**KEY, "session_id": session.id}
    claimed = await runs.claim_new(
        **key, invocation_id="e-adopted", worker=plugin.worker, lease_seconds=60
    )
    plugin.adopt(claimed)
    plugin.adopt(await runs.claim_new(**KEY, invocation_id="e-x", worker="other", lease_seconds=60))
    events = [
        e
        async for e in runner.run_async(
            user_id=USER,
            session_id=session.id,
            invocation_id="e-adopted",
            new_message=user_text("hi"),
        )
    ]
    assert events[-1].content is not None and events[-1].content.parts[0].text == "done"
    stored = await RunLedger(services.store).get(claimed.run_id)
    assert stored.status == "completed" and stored.started_at == claimed.started_at
    closed = plugin.disown("e-adopted")
    assert closed is not None and (closed.run_id, closed.status) == (claimed.run_id, "completed")
    assert plugin.disown("e-adopted") is None
    assert plugin.disown("e-x") is None  # another worker's claim was never taken
