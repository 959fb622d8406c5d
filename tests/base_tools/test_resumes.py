"""Resuming a run paused at a waiting point, through the library paths (a plain
`run_async` with the point's resume message, and `resume_waitpoint`): a closed run
never runs again, and of two resumes of one invocation, on one Runner or on two
workers, exactly one runs; the other is refused before ADK stores anything."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner

from adk_yuxi.ledger import (
    LEASE_LAPSED,
    AnswerAlreadyResumed,
    LeaseHeld,
    LedgerError,
    LedgerPlugin,
    RunEnded,
    RunLedger,
    RunRecord,
    answer_and_resume,
    resume_waitpoint,
)
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.waitpoints import AnswerRejected, Waitpoint, WaitpointConflict

from ._harness import APP, USER, make_runner, run, user_text
from .test_ask_user_question import COLOUR, echo_answer


async def events_of(services: YuxiServices, session_id: str) -> list[Event]:
    got = await services.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
    assert got is not None
    return list(got.events)


async def run_of(plugin: LedgerPlugin, point: Waitpoint) -> RunRecord:
    found = await plugin.ledger.find(
        app_name=APP,
        user_id=USER,
        session_id=point.session_id,
        invocation_id=point.invocation_id,
    )
    assert found is not None
    return found


async def paused(
    services: YuxiServices, after: Callable[..., Any] = echo_answer
) -> tuple[Runner, ScriptedLlm, LedgerPlugin, Waitpoint]:
    """A run paused at a waiting point; the model's next turn is `after`."""
    runner, llm, plugin = make_runner(
        services, [call("ask_user_question", questions=[COLOUR]), after]
    )
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    await run(runner, session.id, user_text("hello"))
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    return runner, llm, plugin, point


async def refusal(resume: AsyncIterator[Event]) -> LedgerError:
    """The ledger's refusal of a resume: raised as it is by `resume_waitpoint`, as the
    cause of ADK's `RuntimeError` by a plain `run_async`."""
    with pytest.raises(Exception) as raised:
        async for _ in resume:
            pass
    error = raised.value
    if isinstance(error, RuntimeError):
        error = error.__cause__  # type: ignore[assignment]
    assert isinstance(error, LedgerError), raised.value
    return error


def plain(runner: Runner, point: Waitpoint) -> AsyncIterator[Event]:
    return runner.run_async(
        user_id=USER, session_id=point.session_id, new_message=point.resume_message()
    )


PATHS = {"run_async": plain, "resume_waitpoint": resume_waitpoint}


async def close_run(services: YuxiServices, runner: Runner, plugin: LedgerPlugin, how: str) -> Any:
    """The paused run closed `how`; returns the point a caller would resume with."""
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    runs = RunLedger(services.store)
    if how == "cancelled":  # the host's cancel: closed, its question withdrawn
        record, _ = await runs.cancel(await run_of(plugin, point))
        assert record.status == "cancelled"
        return await plugin.waitpoints.get(point.id, user_id=USER)
    answered = await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
    if how == "completed":
        events = [e async for e in plain(runner, answered)]
        assert events[-1].content is not None and events[-1].content.parts[0].text.startswith("got")
        return answered
    # A worker resumed it and died: its lease lapsed and the run was closed as failed.
    resumed = await runs.resume(await run_of(plugin, point), worker="dead", lease_seconds=0.05)
    await asyncio.sleep(0.1)
    assert await runs.expire(resumed.run_id)
    return answered


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("how", ["cancelled", "failed", "completed"])
async def test_a_closed_run_is_never_resumed(services: YuxiServices, how: str, path: str) -> None:
    runner, llm, plugin, _ = await paused(services)
    point = await close_run(services, runner, plugin, how)
    closed = await run_of(plugin, point)
    assert closed.status == ("failed" if how == "failed" else how)
    stored, asked = await events_of(services, point.session_id), len(llm.requests)
    refused = await refusal(PATHS[path](runner, point))
    assert isinstance(refused, RunEnded) and refused.status == closed.status
    assert len(llm.requests) == asked  # the model was not called
    assert await events_of(services, point.session_id) == stored  # nothing was appended
    assert await run_of(plugin, point) == closed
    if how == "failed":
        assert closed.error == LEASE_LAPSED
    with pytest.raises(RunEnded):  # the host's resume refuses it the same way
        await RunLedger(services.store).resume(closed, worker="w", lease_seconds=60)


class Gate:
    """A model turn that waits inside the model call until it is let through."""

    def __init__(self) -> None:
        self.entered, self.go = asyncio.Event(), asyncio.Event()

    async def __call__(self, request: LlmRequest) -> str:
        self.entered.set()
        await self.go.wait()
        return echo_answer(request)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("where", ["same runner", "second worker"])
async def test_a_duplicate_resume_is_refused_before_anything_is_stored(
    services: YuxiServices, where: str, path: str
) -> None:
    gate = Gate()
    runner, llm, plugin, point = await paused(services, gate)
    answered = await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
    first = asyncio.create_task(_collect(plain(runner, answered)))
    await asyncio.wait_for(gate.entered.wait(), 30)  # the first resume is in its model call
    stored = await events_of(services, point.session_id)
    if where == "same runner":
        second_runner = runner
    else:
        second_runner, _, _ = make_runner(services, ["never said"])
    refused = await refusal(PATHS[path](second_runner, answered))
    assert isinstance(refused, LeaseHeld)
    assert await events_of(services, point.session_id) == stored
    gate.go.set()
    events = await asyncio.wait_for(first, 30)  # no stale-session write: its answer stands
    assert events[-1].content is not None
    assert events[-1].content.parts[0].text.startswith('got {"answers": {"colour": "red"}')
    assert len(llm.requests) == 2  # the question, then one resume
    assert (await run_of(plugin, point)).status == "completed"


async def _collect(stream: AsyncIterator[Event]) -> list[Event]:
    return [e async for e in stream]


async def test_resume_waitpoint_resumes_an_answered_point_once(services: YuxiServices) -> None:
    runner, llm, plugin, point = await paused(services)
    answered = await plugin.waitpoints.answer(point.id, {"colour": "blue"}, user_id=USER)
    events = await _collect(resume_waitpoint(runner, answered))
    assert events[-1].content is not None
    assert events[-1].content.parts[0].text.startswith('got {"answers": {"colour": "blue"}')
    assert (await run_of(plugin, point)).status == "completed"
    assert isinstance(await refusal(resume_waitpoint(runner, answered)), RunEnded)
    assert len(llm.requests) == 2


class FailsToStore(BasePlugin):
    """A plugin that fails on the user message, as storing it would when the session
    store is down: after the claim (placed after the ledger) or before it."""

    def __init__(self) -> None:
        super().__init__(name="fails_to_store")

    async def on_user_message_callback(self, **_: Any) -> None:
        raise OSError("the session store is down")


@pytest.mark.parametrize("order", ["claimed then failed", "failed before the claim"])
async def test_a_resume_that_never_started_waits_again(services: YuxiServices, order: str) -> None:
    runner, llm, plugin, point = await paused(services)
    answered = await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
    plugins = [plugin, FailsToStore()]
    if order == "failed before the claim":
        plugins.reverse()
    broken = Runner(
        app=App(name=APP, root_agent=runner.agent, plugins=plugins),
        session_service=services.session_service,
    )
    with pytest.raises(RuntimeError) as failed:
        await _collect(resume_waitpoint(broken, answered))
    assert isinstance(failed.value.__cause__, OSError)
    assert (await run_of(plugin, point)).status == "waiting"  # not held, not closed
    events = await _collect(resume_waitpoint(runner, answered))  # a retry resumes it
    assert events[-1].content is not None
    assert events[-1].content.parts[0].text.startswith('got {"answers": {"colour": "red"}')
    assert len(llm.requests) == 2


@pytest.mark.parametrize("path", sorted(PATHS))
async def test_an_answer_resumed_once_is_not_fed_again_when_the_run_waits_anew(
    services: YuxiServices, path: str
) -> None:
    """The run went on with the answer and now waits at a newer point: a late duplicate
    of the first resume finds the run `waiting` (a claim alone would let it in), but the
    session already holds that answer, so it is refused before anything is stored."""
    runner, llm, plugin = make_runner(
        services,
        [
            call("ask_user_question", questions=[COLOUR]),
            call("ask_user_question", questions=[{**COLOUR, "question_id": "colour2"}]),
            echo_answer,
        ],
    )
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    await run(runner, session.id, user_text("hello"))
    (first,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    answered = await plugin.waitpoints.answer(first.id, {"colour": "red"}, user_id=USER)
    [_ async for _ in resume_waitpoint(runner, answered)]
    (second,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    assert second.id != first.id and (await run_of(plugin, second)).status == "waiting"
    stored, asked = await events_of(services, session.id), len(llm.requests)
    if path == "resume_waitpoint":  # raised as it is, not wrapped by ADK
        with pytest.raises(AnswerAlreadyResumed):
            await _collect(resume_waitpoint(runner, answered))
    refused = await refusal(PATHS[path](runner, answered))
    assert isinstance(refused, AnswerAlreadyResumed) and refused.code == "answer_already_resumed"
    assert len(llm.requests) == asked
    assert await events_of(services, session.id) == stored
    assert (await run_of(plugin, second)).status == "waiting"  # still resumable by its own answer
    again = await plugin.waitpoints.answer(second.id, {"colour2": "blue"}, user_id=USER)
    events = [e async for e in resume_waitpoint(runner, again)]
    assert events[-1].content is not None and events[-1].content.parts[0].text.startswith("got")


async def test_answer_and_resume_answers_under_its_claim(services: YuxiServices) -> None:
    runner, llm, plugin, point = await paused(services)
    events = await _collect(
        answer_and_resume(runner, plugin.waitpoints, point.id, {"colour": "blue"}, user_id=USER)
    )
    assert events[-1].content is not None
    assert events[-1].content.parts[0].text.startswith('got {"answers": {"colour": "blue"}')
    assert (await run_of(plugin, point)).status == "completed"
    with pytest.raises(WaitpointConflict):  # answered: a second answer is refused
        await _collect(
            answer_and_resume(runner, plugin.waitpoints, point.id, {"colour": "red"}, user_id=USER)
        )
    assert len(llm.requests) == 2


async def test_answer_and_resume_records_nothing_while_the_run_is_held(
    services: YuxiServices,
) -> None:
    """Another worker holds the run: the answer is refused with the ledger's error and
    not recorded, so it cannot be stranded without a resume."""
    runner, _, plugin, point = await paused(services)
    held = await plugin.ledger.claim(
        app_name=APP,
        user_id=USER,
        session_id=point.session_id,
        invocation_id=point.invocation_id,
        agent_name=(await run_of(plugin, point)).agent_name,
        worker="another-worker",
        lease_seconds=60,
    )
    assert held[0].status == "running"
    stored = await events_of(services, point.session_id)
    refused = await refusal(
        answer_and_resume(runner, plugin.waitpoints, point.id, {"colour": "red"}, user_id=USER)
    )
    assert isinstance(refused, LeaseHeld)
    assert (await plugin.waitpoints.get(point.id, user_id=USER)).status == "pending"
    assert await events_of(services, point.session_id) == stored


async def test_a_refused_answer_gives_the_claim_back(services: YuxiServices) -> None:
    runner, llm, plugin, point = await paused(services)
    with pytest.raises(AnswerRejected):
        await _collect(
            answer_and_resume(
                runner, plugin.waitpoints, point.id, {"colour": "\ud800"}, user_id=USER
            )
        )
    assert (await run_of(plugin, point)).status == "waiting"  # not held: resumable at once
    assert (await plugin.waitpoints.get(point.id, user_id=USER)).status == "pending"
    events = await _collect(
        answer_and_resume(runner, plugin.waitpoints, point.id, {"colour": "red"}, user_id=USER)
    )
    assert events[-1].content is not None and "red" in events[-1].content.parts[0].text
    assert len(llm.requests) == 2
