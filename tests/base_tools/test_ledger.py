"""The run ledger: every run recorded with its outcome, leases renewed beside the run,
and a lapsed lease moved to another worker only by an explicit takeover."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from adk_yuxi.ledger import LeaseExpired, LeaseHeld, LedgerPlugin, RunLedger
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import call

from ._harness import APP, USER, make_runner, run, user_text
from .test_ask_user_question import COLOUR, ask


async def statuses(services: YuxiServices) -> dict[str, Any]:
    async with services.store.read() as tx:
        rows = await tx.fetchall("SELECT session_id, status, error FROM yx_runs")
    return {r[0]: (r[1], r[2]) for r in rows}


async def test_outcomes_completed_waiting_failed_cancelled(services: YuxiServices) -> None:
    runner, _, _ = make_runner(services, ["hi there"])
    done = await services.session_service.create_session(app_name=APP, user_id=USER)
    await run(runner, done.id, user_text("hello"))

    runner, _, _, waiting, _ = await ask(services, [COLOUR])

    runner, _, _ = make_runner(services, [])  # the model has nothing to say: it raises
    failed = await services.session_service.create_session(app_name=APP, user_id=USER)
    with pytest.raises(AssertionError):
        await run(runner, failed.id, user_text("hello"))

    runner, _, _ = make_runner(services, [call("mark_for_improvement", reason="x"), "late"])
    closed = await services.session_service.create_session(app_name=APP, user_id=USER)
    stream = runner.run_async(user_id=USER, session_id=closed.id, new_message=user_text("hi"))
    await anext(stream)  # the caller walks away after the first event
    await stream.aclose()

    got = await statuses(services)
    assert got[done.id] == ("completed", None)
    assert got[waiting.id] == ("waiting", None)
    assert got[failed.id][0] == "failed" and "ScriptExhaustedError" in got[failed.id][1]
    assert got[closed.id][0] == "cancelled"


async def test_a_run_ended_by_an_error_event_is_failed_not_completed(
    services: YuxiServices,
) -> None:
    """A model host that is down ends the turn with an error event, which ADK counts as
    a final response; the ledger records the run as failed, with the code."""
    down = LlmResponse(error_code="MODEL_UNREACHABLE", error_message="host down")
    runner, _, _ = make_runner(services, [down])
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    await run(runner, session.id, user_text("hello"))
    status, error = (await statuses(services))[session.id]
    assert status == "failed"
    assert error == "MODEL_UNREACHABLE: host down"


async def test_lease_is_renewed_while_the_loop_keeps_running(services: YuxiServices) -> None:
    seen: list[float] = []
    ticks = 0

    async def slow_step(tool_context: ToolContext) -> dict[str, Any]:
        """Takes a while and watches its own lease."""
        nonlocal ticks
        for _ in range(8):
            await asyncio.sleep(0.25)
            ticks += 1
            async with services.store.read() as tx:
                row = await tx.fetchone(
                    "SELECT lease_expires_at FROM yx_runs WHERE invocation_id = :i",
                    {"i": tool_context.invocation_id},
                )
            assert row is not None
            seen.append(float(row[0]))
        return {"done": True}

    plugin = LedgerPlugin(services.store, lease_seconds=1.0, renew_every=0.3)
    runner, _, _ = make_runner(services, [call("slow_step"), "done"], ledger=plugin)
    runner.agent.tools.append(FunctionTool(slow_step))  # type: ignore[union-attr]
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    start = time.time()
    await run(runner, session.id, user_text("go"))
    assert ticks == 8
    # Renewed at least three times, and never allowed to lapse while the run went on.
    assert len(set(seen)) >= 3
    assert all(lease > start + 1.0 for lease in seen[1:])
    assert (await statuses(services))[session.id][0] == "completed"


async def test_takeover_only_after_expiry(services: YuxiServices) -> None:
    ledger = RunLedger(services.store)
    key = dict(app_name=APP, user_id=USER, session_id="s1", invocation_id="e-1", agent_name="a")
    first = await ledger.begin(**key, worker="A", lease_seconds=60)
    with pytest.raises(LeaseHeld):
        await ledger.begin(**key, worker="B", lease_seconds=5)
    with pytest.raises(LeaseHeld):
        await ledger.take_over(first.run_id, "B", 5)
    assert await ledger.renew(first.run_id, "A", 0.2)  # A's last renewal, then it stalls
    await asyncio.sleep(0.3)
    with pytest.raises(LeaseExpired) as expired:
        await ledger.begin(**key, worker="B", lease_seconds=5)
    assert expired.value.code == "worker_lease_expired"
    assert [r.run_id for r in await ledger.list_expired()] == [first.run_id]
    taken = await ledger.take_over(first.run_id, "B", 5)
    assert taken.worker == "B"
    assert await ledger.renew(first.run_id, "A", 5) is False
    assert await ledger.finish(first.run_id, "A", "completed") is False
    with pytest.raises(LeaseHeld):  # B holds it through the take-over, not a second begin
        await ledger.begin(**key, worker="B", lease_seconds=5)
    assert await ledger.finish(first.run_id, "B", "completed") is True
    assert (await ledger.get(first.run_id)).status == "completed"


async def test_resume_refused_while_another_worker_holds_the_run(services: YuxiServices) -> None:
    """Refused before ADK stores anything (the holder's next write is not stale), and
    continued only after an explicit take-over of the lapsed lease."""
    runner, llm, plugin, session, events = await ask(services, [COLOUR])
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    answered = await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
    # Worker B picked the waiting run up and holds it.
    other = RunLedger(services.store)
    key = dict(app_name=APP, user_id=USER, session_id=session.id)
    held = await other.begin(
        **key,
        invocation_id=point.invocation_id,
        agent_name="helper",
        worker="B",
        lease_seconds=60,
    )
    stored = len(await session_events(services, session.id))
    asked = len(llm.requests)
    with pytest.raises(RuntimeError) as refused:
        await run(runner, session.id, answered.resume_message())
    assert isinstance(refused.value.__cause__, LeaseHeld)
    assert await other.renew(held.run_id, "B", 0.2)  # B's last renewal, then it stalls
    await asyncio.sleep(0.3)
    with pytest.raises(RuntimeError) as refused:
        await run(runner, session.id, answered.resume_message())
    assert isinstance(refused.value.__cause__, LeaseExpired)
    assert len(await session_events(services, session.id)) == stored  # nothing was written
    assert len(llm.requests) == asked
    await plugin.take_over(held.run_id)
    events = await run(runner, session.id, answered.resume_message())
    assert events[-1].content.parts[0].text.startswith("got ")
    assert (await other.get(held.run_id)).status == "completed"


async def session_events(services: YuxiServices, session_id: str) -> list[Any]:
    got = await services.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
    assert got is not None
    return list(got.events)


async def test_a_run_taken_over_in_flight_stops(services: YuxiServices) -> None:
    async def stalls(tool_context: ToolContext) -> dict[str, Any]:
        """Stalls past its lease; worker B takes the run over meanwhile."""
        active = plugin.run_of(tool_context.invocation_id)
        assert active is not None
        ledger = RunLedger(services.store)
        for _ in range(100):  # A stalls: its lease lapses (unless its renewer got in first)
            await ledger.renew(active.run_id, active.worker, 0.01)
            await asyncio.sleep(0.05)
            try:
                await ledger.take_over(active.run_id, "B", 30)
                break
            except LeaseHeld:
                continue
        for _ in range(200):  # until the next renewal finds the run taken
            if active.lost:
                break
            await asyncio.sleep(0.05)
        return {"done": True}

    plugin = LedgerPlugin(services.store, lease_seconds=30, renew_every=0.3)
    runner, llm, _ = make_runner(services, [call("stalls"), "never said"], ledger=plugin)
    runner.agent.tools.append(FunctionTool(stalls))  # type: ignore[union-attr]
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    events = await run(runner, session.id, user_text("go"))
    assert events[-1].error_code == "WORKER_LEASE_EXPIRED"
    assert len(llm.requests) == 1
    async with services.store.read() as tx:
        row = await tx.fetchone("SELECT worker, status FROM yx_runs")
    assert row is not None and tuple(row) == ("B", "running")


async def test_a_run_the_ledger_cannot_record_does_not_start(services: YuxiServices) -> None:
    runner, llm, _ = make_runner(services, ["never said"])
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    await services.store.write_one("ALTER TABLE yx_runs RENAME TO yx_runs_away")
    try:
        with pytest.raises(Exception, match="yx_runs"):
            await run(runner, session.id, user_text("hello"))
    finally:
        await services.store.write_one("ALTER TABLE yx_runs_away RENAME TO yx_runs")
    assert llm.requests == []


async def test_runs_of_a_user_page_newest_first(services: YuxiServices) -> None:
    ledger = RunLedger(services.store)
    made = []
    for i in range(5):
        record = await ledger.begin(
            app_name=APP,
            user_id=USER,
            session_id=f"s{i % 2}",
            invocation_id=f"e{i}",
            agent_name="a",
            worker="w",
            lease_seconds=60,
        )
        made.append(record.run_id)
        # One run of a session runs at a time: each is closed before the next.
        await ledger.finish(record.run_id, "w", "completed" if i % 2 else "failed")
    await ledger.begin(
        app_name=APP,
        user_id="bob",
        session_id="s0",
        invocation_id="e9",
        agent_name="a",
        worker="w",
        lease_seconds=60,
    )
    seen, token = [], None
    while True:
        page = await ledger.list_runs(app_name=APP, user_id=USER, page_size=2, page_token=token)
        seen += [r.run_id for r in page.items]
        token = page.next_page_token
        if token is None:
            break
    assert seen == list(reversed(made))
    done = await ledger.list_runs(app_name=APP, user_id=USER, status="completed")
    assert [r.run_id for r in done.items] == [made[3], made[1]]
    one = await ledger.list_runs(app_name=APP, user_id=USER, session_id="s0")
    assert [r.run_id for r in one.items] == [made[4], made[2], made[0]]
    with pytest.raises(ValueError):
        await ledger.list_runs(app_name=APP, user_id=USER, status="lost")


def test_a_negative_lease_margin_is_refused(services: YuxiServices) -> None:
    # It would let a worker act on a lease already lapsed by its own clock.
    with pytest.raises(ValueError, match="lease_margin"):
        LedgerPlugin(services.store, lease_margin=-1)
