"""`yuxi runs`, `yuxi waitpoints`, `yuxi marks` on SQLite and on PostgreSQL, over rows the
real Runner, ledger plugin and base tools wrote: in this process through click's runner,
and as real processes where two takers race for one lease."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from adk_yuxi.ledger import LedgerPlugin, RunLedger
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import call
from adk_yuxi.waitpoints import WaitpointStore
from tests.base_tools._harness import APP, USER, make_runner, run, user_text
from tests.base_tools.test_ask_user_question import COLOUR
from tests.e2e._cli import BIN, run_command, yuxi_here
from tests.sql_backends import db_url, pg_schema, services

__all__ = ["db_url", "pg_schema", "services"]

pytestmark = pytest.mark.slow


def yuxi(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return yuxi_here([*args, "--db", db])


def yuxi_process(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_command([str(BIN / "yuxi"), *args, "--db", db])


def loaded(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def commands(*calls: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Independent commands, one after another in this process (off the test's loop)."""
    return await asyncio.to_thread(lambda: [yuxi(*c) for c in calls])


async def racing(*calls: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Commands at once, each a real `yuxi` process."""
    return list(await asyncio.gather(*(asyncio.to_thread(yuxi_process, *c) for c in calls)))


async def one_run(services: YuxiServices, script: list[Any], user: str = USER) -> str:
    """A session with one turn through the real Runner; returns the session id."""
    runner, _, _ = make_runner(services, script)
    session = await services.session_service.create_session(app_name=APP, user_id=user)
    await run(runner, session.id, user_text("hello"), user_id=user)
    await runner.close()
    return session.id


async def test_runs_points_and_marks_listed_shown_and_cancelled(
    services: YuxiServices, db_url: str
) -> None:
    done = await one_run(services, ["hi there"])
    marked = await one_run(services, [call("mark_for_improvement", reason="slow answer"), "ok"])
    waiting = await one_run(services, [call("ask_user_question", questions=[COLOUR])])
    other = await one_run(services, [call("ask_user_question", questions=[COLOUR])], "bob")
    db = db_url
    ledger = RunLedger(services.store)
    run_id = (await ledger.list_runs(session_id=waiting)).items[0].run_id
    done_id = (await ledger.list_runs(session_id=done)).items[0].run_id
    bobs = (await WaitpointStore(services.store).list_points(user_id="bob")).items[0].id

    (
        listed,
        alice_waiting,
        first,
        table,
        shown,
        shown_table,
        pending,
        marks,
        future,
    ) = await commands(
        (db, "runs", "list", "--json"),
        (db, "runs", "list", "--status", "waiting", "--user", USER, "--app", APP, "--json"),
        (db, "runs", "list", "--limit", "3", "--json"),
        (db, "runs", "list", "--status", "waiting"),
        (db, "runs", "show", run_id, "--json"),
        (db, "runs", "show", run_id),
        (db, "waitpoints", "list", "--user", USER, "--json"),
        (db, "marks", "list", "--agent", APP, "--json"),
        (db, "marks", "list", "--since", "2099-01-01", "--json"),
    )
    listed = loaded(listed)
    by_session = {r["session_id"]: r for r in listed["runs"]}
    assert set(by_session) == {done, marked, waiting, other}
    assert by_session[done]["status"] == "completed" and by_session[done]["error_code"] is None
    assert by_session[waiting]["status"] == "waiting"
    assert set(listed["runs"][0]) >= {"run_id", "worker", "lease_expires_at", "lease_live"}
    assert [r["run_id"] for r in loaded(alice_waiting)["runs"]] == [run_id]
    first = loaded(first)
    assert len(first["runs"]) == 3 and first["next_page_token"]
    header, *rows = table.stdout.splitlines()
    assert header.split()[:5] == ["RUN", "APP", "USER", "SESSION", "STATUS"]
    assert len(rows) == 2 and any(run_id in row for row in rows)
    shown = loaded(shown)
    (point,) = shown["waitpoints"]
    assert shown["run_id"] == run_id and point["status"] == "pending"
    assert point["questions"][0]["question"] == "Which colour?"
    assert "waiting points:" in shown_table.stdout and point["id"] in shown_table.stdout
    assert [p["id"] for p in loaded(pending)["waitpoints"]] == [point["id"]]
    found = [(m["session_id"], m["reason"]) for m in loaded(marks)["marks"]]
    assert found == [(marked, "slow answer")]
    assert loaded(future)["marks"] == []

    rest, cancelled, closed, withdrawn = await commands(
        (db, "runs", "list", "--limit", "3", "--page-token", first["next_page_token"], "--json"),
        # Cancelled as the host API cancels: the run closes with its waiting point.
        (db, "runs", "cancel", run_id, "--json"),
        (db, "runs", "cancel", done_id),
        # One waiting point withdrawn alone: its run still waits.
        (db, "waitpoints", "cancel", bobs, "--json"),
    )
    seen = [r["run_id"] for r in first["runs"] + loaded(rest)["runs"]]
    assert sorted(seen) == sorted(r["run_id"] for r in listed["runs"])
    cancelled = loaded(cancelled)
    assert cancelled["status"] == "cancelled" and cancelled["outcome"] == "cancelled"
    assert closed.returncode == 1 and "has ended (completed)" in closed.stderr
    assert (await ledger.get(done_id)).status == "completed"  # a closed run stays closed
    withdrawn = loaded(withdrawn)
    assert withdrawn["status"] == "cancelled" and withdrawn["run_status"] == "waiting"

    settled, again, twice, missing = await commands(
        (db, "waitpoints", "list", "--status", "cancelled", "--user", USER, "--json"),
        (db, "runs", "cancel", run_id),
        (db, "waitpoints", "cancel", bobs),
        (db, "runs", "show", "run-nope"),
    )
    assert [p["id"] for p in loaded(settled)["waitpoints"]] == [point["id"]]
    assert again.returncode == 1 and "has ended (cancelled)" in again.stderr
    assert twice.returncode == 1 and "cancelled" in twice.stderr
    assert missing.returncode == 1
    assert missing.stderr.strip() == "Error: no run 'run-nope' in the ledger"


async def test_take_over_is_refused_while_a_worker_runs_and_won_once_after_expiry(
    services: YuxiServices, db_url: str
) -> None:
    started, gate = asyncio.Event(), asyncio.Event()

    async def hold_on(tool_context: ToolContext) -> dict[str, Any]:
        """Waits until the test lets it go."""
        started.set()
        await gate.wait()
        return {"done": True}

    plugin = LedgerPlugin(services.store, lease_seconds=30)
    runner, _, _ = make_runner(services, [call("hold_on"), "done"], ledger=plugin)
    runner.agent.tools.append(FunctionTool(hold_on))  # type: ignore[union-attr]
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    turn = asyncio.create_task(run(runner, session.id, user_text("go")))
    await asyncio.wait_for(started.wait(), 30)
    ledger = RunLedger(services.store)
    (live,) = (await ledger.list_runs(status="running")).items

    refused = await asyncio.to_thread(yuxi, db_url, "runs", "take-over", live.run_id)
    assert refused.returncode != 0
    (line,) = refused.stderr.strip().splitlines()
    assert "live lease" in line and plugin.worker in line
    # A cancel is a request the worker's poller reads (the host API's RunControl).
    asked = loaded(await asyncio.to_thread(yuxi, db_url, "runs", "cancel", live.run_id, "--json"))
    assert asked["outcome"] == "cancel_requested" and asked["status"] == "running"
    assert await RunLedger(services.store).cancel_requested(plugin.worker) == [live.run_id]
    gate.set()
    await turn
    await runner.close()
    after = await ledger.get(live.run_id)
    assert after.status == "completed" and after.worker == plugin.worker  # undisturbed

    # A worker that claimed a run and died: its lease lapses; two takers race.
    dead = await ledger.begin(
        app_name=APP,
        user_id=USER,
        session_id="s-dead",
        invocation_id="e-dead",
        agent_name="helper",
        worker="dead-worker",
        lease_seconds=0.5,
    )
    await asyncio.sleep(0.6)
    first, second = await racing(
        (db_url, "runs", "take-over", dead.run_id, "--worker", "taker-a", "--json"),
        (db_url, "runs", "take-over", dead.run_id, "--worker", "taker-b", "--json"),
    )
    won = [done for done in (first, second) if done.returncode == 0]
    assert len(won) == 1, (first.stderr, second.stderr)
    lost = second if won[0] is first else first
    assert lost.returncode != 0 and "live lease" in lost.stderr
    winner = loaded(won[0])
    assert winner["status"] == "running" and winner["lease_live"] is True
    record = await ledger.get(dead.run_id)
    assert record.worker == winner["worker"] in ("taker-a", "taker-b")
    assert await ledger.renew(dead.run_id, "dead-worker", 5) is False  # fenced off
