"""Metrics of the ledger, the guards and the store's pool, scraped over HTTP: leases that
lapsed and were taken over, tool failures and repairs, connections waited for."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from adk_yuxi._sql import SqlStore
from adk_yuxi.ledger import LEASE_LAPSED, LeaseHeld, LedgerPlugin, RunLedger
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import tool
from tests.base_tools._harness import APP, USER, make_runner, run, user_text
from tests.guards._kit import TOOLS, app_for, guard_kit, turn
from tests.sql_backends import PG_URL

from ._scrape import scrape

KEY = {"app_name": "base", "user_id": "alice", "session_id": "s1", "agent_name": "helper"}


async def _scrape(url: str) -> Any:
    return await asyncio.to_thread(scrape, url)


async def test_runs_by_outcome_and_leases_expired_or_taken_over(
    db_url: str, metrics_url: str
) -> None:
    store = SqlStore(db_url)
    try:
        runs, ledger = RunLedger(store), RunLedger(store)
        dead = await runs.claim_new(**KEY, invocation_id="e-1", worker="dead", lease_seconds=0.05)
        await asyncio.sleep(0.1)
        assert await runs.expire(dead.run_id)
        assert not await runs.expire(dead.run_id)  # once
        lapsed = await ledger.begin(
            **{**KEY, "session_id": "s2"}, invocation_id="e-2", worker="gone", lease_seconds=0.05
        )
        await asyncio.sleep(0.1)
        await ledger.take_over(lapsed.run_id, "taker", 60)
        assert await ledger.finish(lapsed.run_id, "taker", "completed")
        for i, error in enumerate(["TypeError: boom", "AGENT_EXECUTION_REVOKED: revoked"]):
            key = {**KEY, "session_id": f"f{i}"}
            failing = await ledger.begin(**key, invocation_id="e", worker="w", lease_seconds=60)
            assert await ledger.finish(failing.run_id, "w", "failed", error)
        scraped = await _scrape(metrics_url)
    finally:
        await store.close()
    assert scraped.value("yuxi_lease_expirations_total") == 1
    assert scraped.value("yuxi_lease_takeovers_total") == 1
    failed = {"yuxi_run_outcome": "failed", "error_type": LEASE_LAPSED}
    assert scraped.value("yuxi_runs_total", **failed) == 1
    assert scraped.value("yuxi_runs_total", yuxi_run_outcome="completed") == 1
    # The code a caller sees in the run's status: an exception is an internal error.
    for code in ("internal_error", "AGENT_EXECUTION_REVOKED"):
        assert scraped.value("yuxi_runs_total", yuxi_run_outcome="failed", error_type=code) == 1


async def test_tool_failures_and_repairs_are_counted_apart_from_refusals(
    tmp_path: Path, metrics_url: str
) -> None:
    kit = guard_kit(tmp_path)

    @tool(registry=kit.registry, display_name="Explode")
    def explode() -> dict[str, Any]:
        """Always fails."""
        raise RuntimeError("boom")

    llm = ScriptedLlm(
        [call("convert_currency", amount="ten", source="USD"), call("explode"), "done"]
    )
    await turn(app_for(kit, llm, tools=(*TOOLS, "explode")), "go")
    scraped = await _scrape(metrics_url)
    repaired = {"yuxi_repair_code": "invalid_arguments", "gen_ai_tool_name": "convert_currency"}
    assert scraped.value("yuxi_tool_repairs_total", **repaired, yuxi_budget_within="true") == 1
    failed = {"gen_ai_tool_name": "explode", "yuxi_budget_within": "true"}
    assert scraped.value("yuxi_tool_failures_total", **failed) == 1
    assert scraped.value("yuxi_refusals_total") == 0  # a failure is not a refusal


async def test_a_wait_for_a_pooled_postgresql_connection_is_seen(
    pg_schema: str, metrics_url: str
) -> None:
    store = SqlStore(f"{PG_URL}?schema={pg_schema}", pool_size=1, max_overflow=0)
    pool = {"db_client_connection_pool_name": store.pool_state().name}
    try:
        await store.ready()
        held, release = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            async with store.read() as tx:
                await tx.fetchall("SELECT 1")
                held.set()
                await release.wait()  # the connection stays out until the scrape is done

        async def wait() -> None:
            async with store.read() as tx:  # waits for the pool's one connection
                await tx.fetchall("SELECT 1")

        holder = asyncio.create_task(hold())
        await held.wait()
        waiter = asyncio.create_task(wait())
        await asyncio.sleep(0.1)
        during = await _scrape(metrics_url)
        await asyncio.sleep(0.6)
        release.set()
        await asyncio.gather(holder, waiter)
        after = await _scrape(metrics_url)
    finally:
        await store.close()
    assert during.value("db_client_connection_pending_requests", **pool) == 1
    used = {**pool, "db_client_connection_state": "used"}
    assert during.value("db_client_connection_count", **used) == 1
    assert during.value("db_client_connection_max", **pool) == 1
    assert after.value("db_client_connection_pending_requests", **pool) == 0
    waited = after.value("db_client_connection_wait_time_seconds_sum", **pool)
    assert waited >= 0.5  # the second read waited for the first to give it back


async def test_a_run_taken_over_in_flight_is_a_lease_lost_here(
    services: YuxiServices, metrics_url: str
) -> None:
    async def stalls(tool_context: ToolContext) -> dict[str, Any]:
        """Stalls while worker B takes the run over (its lease made to lapse)."""
        active = plugin.run_of(tool_context.invocation_id)
        assert active is not None
        ledger = RunLedger(services.store)
        for _ in range(100):
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
    runner, _, _ = make_runner(services, [call("stalls"), "never said"], ledger=plugin)
    runner.agent.tools.append(FunctionTool(stalls))  # type: ignore[union-attr]
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    events = await run(runner, session.id, user_text("go"))
    assert events[-1].error_code == "WORKER_LEASE_EXPIRED"
    scraped = await _scrape(metrics_url)
    assert scraped.value("yuxi_lease_takeovers_total") == 1
    assert scraped.value("yuxi_lease_losses_total") == 1
    assert scraped.value("yuxi_runs_total") == 0  # B holds it: nobody closed it yet
    assert scraped.value("yuxi_turn_duration_seconds_count") == 0
