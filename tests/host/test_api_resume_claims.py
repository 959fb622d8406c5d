"""The host API and the library resume path claim runs in one ledger: while an answer
given through the API is being resumed (inside its model call), a library resume of the
same point on another worker is refused before ADK stores anything, the API's stream
finishes with its answer, and once the run has completed nobody resumes it again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner

from adk_yuxi.ledger import LeaseHeld, LedgerPlugin, RunEnded, resume_waitpoint
from adk_yuxi.storage import open_services
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.waitpoints import WaitpointStore

from .conftest import Api, answer_in_background, new_session, open_api, parse_sse, run
from .test_api_control import Hold
from .test_api_runs import QUESTIONS


@pytest.fixture
async def api_on(db_url: str, tmp_path: Path) -> AsyncIterator[Api]:
    async for opened in open_api(db_url, tmp_path):
        yield opened


async def _refused(stream: AsyncIterator[Any]) -> BaseException:
    with pytest.raises(Exception) as raised:
        async for _ in stream:
            pass
    return raised.value


async def test_a_library_resume_beside_the_apis_is_refused_before_anything_is_stored(
    api_on: Api,
) -> None:
    api = api_on
    held = Hold("Friday it is.")
    api.llm.extend([call("ask_user_question", questions=QUESTIONS), held])
    session = await new_session(api, "mei")
    assert (await run(api, "mei", session, "plan the launch"))[-1]["data"]["status"] == "waiting"
    point_id, answering = await answer_in_background(api, "mei", session, {"q-1": "fri"})
    await asyncio.wait_for(held.entered.wait(), 30)  # the API's resume is in its model call

    # Another worker, through the library, with the answer the API recorded.
    services = open_services(api.url)
    other_llm = ScriptedLlm(["never said"])
    plugin = LedgerPlugin(services.store, worker="library-worker")
    runner = Runner(
        app=App(
            name="planner",
            root_agent=LlmAgent(name="planner", model=other_llm),
            plugins=[plugin],
        ),
        session_service=services.session_service,
    )
    try:
        answered = await WaitpointStore(services.store).get(point_id, user_id="mei")
        stored = await services.session_service.get_session(
            app_name="planner", user_id="mei", session_id=session
        )
        assert stored is not None
        refused = await _refused(resume_waitpoint(runner, answered))
        assert isinstance(refused, LeaseHeld)
        plain = runner.run_async(
            user_id="mei", session_id=session, new_message=answered.resume_message()
        )
        assert isinstance((await _refused(plain)).__cause__, LeaseHeld)
        after = await services.session_service.get_session(
            app_name="planner", user_id="mei", session_id=session
        )
        assert after is not None and [e.id for e in after.events] == [
            e.id for e in stored.events
        ]  # nothing appended: the API's next write is not stale

        held.release.set()
        response = await asyncio.wait_for(answering, 30)
        frames = parse_sse(response.text)
        assert frames[-1]["data"]["status"] == "completed", frames[-1]
        assert "Friday it is." in response.text

        # Completed: closed for every path from now on.
        assert isinstance(await _refused(resume_waitpoint(runner, answered)), RunEnded)
        assert other_llm.requests == []
    finally:
        await runner.close()
        await services.close()
