"""A run that paused at a waiting point, answered and resumed on the same worker before
its first drive has finished: the first stream ends ``waiting`` (what its drive did),
and its settling never closes the resumed run, which completes with its answer."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin

from adk_yuxi.host import create_app
from adk_yuxi.ledger import RunLedger
from adk_yuxi.storage import open_services
from adk_yuxi.testing import ScriptedLlm, call

from .conftest import Api, answer_in_background, make_config, new_session, parse_sse, seed
from .test_api_control import Hold
from .test_api_runs import QUESTIONS


class HoldTheEnd(BasePlugin):
    """Keeps the first run's drive open after the ledger plugin (an earlier stage)
    closed it as waiting, until the test lets it end."""

    def __init__(self) -> None:
        super().__init__(name="hold_the_end")
        self.reached = asyncio.Event()
        self.release = asyncio.Event()
        self.first = True

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        if self.first:
            self.first = False
            self.reached.set()
            await self.release.wait()


@pytest.fixture
async def held_api(db_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, HoldTheEnd]]:
    tokens = await seed(db_url)
    llm = ScriptedLlm([])
    hold = HoldTheEnd()
    config = dataclasses.replace(make_config(db_url, llm, tmp_path), capabilities=(hold,))
    app = create_app(config)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield Api(client=client, llm=llm, url=db_url, tokens=tokens), hold


async def test_a_run_resumed_before_its_paused_drive_settles_is_not_closed_by_it(
    held_api: tuple[Api, HoldTheEnd],
) -> None:
    api, hold = held_api
    answer = Hold("Friday it is.")
    api.llm.extend([call("ask_user_question", questions=QUESTIONS), answer])
    session = await new_session(api, "mei")
    base = f"/v1/agents/planner/sessions/{session}"
    first = asyncio.create_task(
        api.client.post(f"{base}/runs", json={"text": "plan"}, headers=api.auth("mei"))
    )
    await asyncio.wait_for(hold.reached.wait(), 30)  # paused, its drive not settled
    _, answering = await answer_in_background(api, "mei", session, {"q-1": "fri"})
    await asyncio.wait_for(answer.entered.wait(), 30)  # resumed here, in its model call
    hold.release.set()
    frames = parse_sse((await asyncio.wait_for(first, 30)).text)
    assert frames[-1]["data"]["status"] == "waiting", frames[-1]
    services = open_services(api.url)
    try:
        run_id = frames[-1]["data"]["run_id"]
        assert (await RunLedger(services.store).get(run_id)).status == "running"
        answer.release.set()
        resumed = parse_sse((await asyncio.wait_for(answering, 30)).text)
        assert resumed[-1]["data"]["status"] == "completed", resumed[-1]
        assert (await RunLedger(services.store).get(run_id)).status == "completed"
    finally:
        await services.close()
