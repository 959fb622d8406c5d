"""mark_for_improvement: saved with its re-checks in one transaction, idempotent per
(run, call), a tool error when storage fails, the end of the run when a right is gone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.ledger import LedgerPlugin, RunLedger
from adk_yuxi.marks import MarkStore
from adk_yuxi.storage import YuxiServices

from ._harness import APP, USER, make_runner, responses, run, user_text

NAME = "mark_for_improvement"


def mark(reason: Any, call_id: str | None = None) -> types.Part:
    return types.Part(
        function_call=types.FunctionCall(id=call_id, name=NAME, args={"reason": reason})
    )


async def rows(services: YuxiServices) -> list[tuple[Any, ...]]:
    async with services.store.read() as tx:
        found = await tx.fetchall(
            "SELECT id, run_id, call_id, user_id, agent_name, reason FROM yx_marks"
        )
    return [tuple(r) for r in found]


async def session_id(services: YuxiServices) -> str:
    return (await services.session_service.create_session(app_name=APP, user_id=USER)).id


async def test_saves_once_per_call_and_conflicts_on_another_reason(services: YuxiServices) -> None:
    script = [
        mark("  The user corrected the date format.  ", "call-1"),
        mark("The user corrected the date format.", "call-1"),  # replayed
        mark("Something else", "call-1"),  # same call, other reason
        mark("A tool failed", "call-2"),
        "noted",
    ]
    runner, _, _ = make_runner(services, script)
    events = await run(runner, await session_id(services), user_text("hi"))
    first, replay, conflict, second = responses(events, NAME)
    assert first["saved"] is True and first["id"].startswith("mark-")
    assert replay == first
    assert conflict["error"]["code"] == "conflict"
    assert second["saved"] is True and second["id"] != first["id"]
    assert second["run_id"] == first["run_id"]
    saved = await rows(services)
    assert sorted((r[2], r[5]) for r in saved) == [
        ("call-1", "The user corrected the date format."),
        ("call-2", "A tool failed"),
    ]
    assert {(r[3], r[4]) for r in saved} == {(USER, "helper")}
    assert events[-1].content.parts[0].text == "noted"


async def test_invalid_reason_is_a_tool_error_and_the_run_goes_on(services: YuxiServices) -> None:
    script = [mark("   "), mark("x" * 4001), mark(42), mark("x" * 4000), "fine"]
    runner, _, _ = make_runner(services, script)
    events = await run(runner, await session_id(services), user_text("hi"))
    blank, long, number, limit = responses(events, NAME)
    for bad in (blank, long, number):
        assert bad["error"]["code"] == "invalid_arguments"
    assert limit["saved"] is True
    assert len(await rows(services)) == 1
    assert events[-1].content.parts[0].text == "fine"


async def test_storage_failure_is_a_tool_error_and_the_run_goes_on(services: YuxiServices) -> None:
    runner, _, _ = make_runner(services, [mark("the tool failed"), "carrying on"])
    sid = await session_id(services)
    await services.store.write_one("ALTER TABLE yx_marks RENAME TO yx_marks_away")
    try:
        events = await run(runner, sid, user_text("hi"))
    finally:
        await services.store.write_one("ALTER TABLE yx_marks_away RENAME TO yx_marks")
    (result,) = responses(events, NAME)
    assert result["error"]["code"] == "tool_failed"
    assert events[-1].content.parts[0].text == "carrying on"
    assert await rows(services) == []


async def test_revoked_right_refuses_the_mark_and_ends_the_run(services: YuxiServices) -> None:
    access = AccessRepository(services.store)
    await access.save_user(User(id=USER))
    await access.save_resource(
        ResourceRecord(
            kind=ResourceKind.AGENT, id="helper", creator_id=USER, share=ShareConfig.public()
        )
    )

    async def revoke() -> dict[str, Any]:
        """An administrator disables the account mid-run."""
        await access.set_user_active(USER, False)
        return {"ok": True}

    plugin = LedgerPlugin(services.store, repository=access)
    script = [
        mark("worth keeping", "c1"),
        types.Part(function_call=types.FunctionCall(name="revoke", args={})),
        mark("after revocation", "c2"),
        "never",
    ]
    runner, llm, _ = make_runner(services, script, ledger=plugin)
    runner.agent.tools.append(FunctionTool(revoke))  # type: ignore[union-attr]
    sid = await session_id(services)
    events = await run(runner, sid, user_text("hi"))
    kept, refused = responses(events, NAME)
    assert kept["saved"] is True
    assert refused["error"]["code"] == "run_ending"
    # The tool ran; its own check refused the mark: the message says so.
    assert refused["error"]["message"].startswith("The mark was not recorded")
    assert "did not run" not in refused["error"]["message"]
    assert events[-1].error_code == "AGENT_EXECUTION_REVOKED"
    assert len(llm.requests) == 3
    assert [r[5] for r in await rows(services)] == ["worth keeping"]
    # The run ended with an error: the ledger says failed, with the code, not completed.
    (record,) = (await plugin.ledger.list_runs(app_name=APP, user_id=USER, session_id=sid)).items
    assert record.status == "failed"
    assert record.error is not None and record.error.startswith("AGENT_EXECUTION_REVOKED: ")


async def test_mark_refused_once_the_lease_is_taken_over(services: YuxiServices) -> None:
    async def lapse(tool_context: ToolContext) -> dict[str, Any]:
        """Outlasts the lease (its renewal never comes); another worker takes the run over."""
        active = plugin.run_of(tool_context.invocation_id)
        assert active is not None
        await asyncio.sleep(0.6)
        await RunLedger(services.store).take_over(active.run_id, "B", 60)
        return {"ok": True}

    plugin = LedgerPlugin(services.store, lease_seconds=0.5, renew_every=60)
    script = [
        types.Part(function_call=types.FunctionCall(name="lapse", args={})),
        mark("late"),
        "never",
    ]
    runner, llm, _ = make_runner(services, script, ledger=plugin)
    runner.agent.tools.append(FunctionTool(lapse))  # type: ignore[union-attr]
    events = await run(runner, await session_id(services), user_text("hi"))
    # The ledger checks the lease before the next model call: the model is not even
    # asked again, so the mark is never attempted.
    assert responses(events, NAME) == []
    assert len(llm.requests) == 1
    assert events[-1].error_code == "WORKER_LEASE_EXPIRED"
    assert await rows(services) == []


async def test_a_mark_stays_when_its_run_fails(services: YuxiServices) -> None:
    runner, _, _ = make_runner(services, [mark("before the failure")])  # then the model raises
    sid = await session_id(services)
    with pytest.raises(AssertionError):  # ScriptExhaustedError: the run fails
        await run(runner, sid, user_text("hi"))
    async with services.store.read() as tx:
        status = await tx.fetchone("SELECT status FROM yx_runs WHERE session_id = :s", {"s": sid})
    assert status is not None and status[0] == "failed"
    assert [r[5] for r in await rows(services)] == ["before the failure"]


async def test_query_marks_with_filters_and_paging(services: YuxiServices) -> None:
    store = MarkStore(services.store)
    for i, (user, agent) in enumerate([("alice", "a1"), ("alice", "a2"), ("bob", "a1")] * 2):
        await store.record(
            run_id=f"r{i}",
            call_id="c",
            app_name=APP,
            user_id=user,
            agent_name=agent,
            session_id="s",
            invocation_id="e",
            reason=f"reason {i}",
        )
    everything, token = [], None
    while True:
        page = await store.list_marks(
            viewer_id="root", viewer_is_admin=True, page_size=4, page_token=token
        )
        everything += page.items
        token = page.next_page_token
        if token is None:
            break
    assert [m.reason for m in everything] == [f"reason {i}" for i in reversed(range(6))]
    own = await store.list_marks(viewer_id="bob", viewer_is_admin=False, user_id="alice")
    assert {m.user_id for m in own.items} == {"bob"}
    a1 = await store.list_marks(
        viewer_id="root", viewer_is_admin=True, agent_name="a1", user_id="alice"
    )
    assert [m.reason for m in a1.items] == ["reason 3", "reason 0"]
    window = await store.list_marks(
        viewer_id="root",
        viewer_is_admin=True,
        since=everything[4].created_at,
        until=everything[1].created_at,
    )
    assert [m.reason for m in window.items] == ["reason 3", "reason 2", "reason 1"]
