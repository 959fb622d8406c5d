"""One run at a time per session, cancelling a run (through the worker driving it and
through another one), and a dead worker's run closed as failed by whoever looks next."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_yuxi.host import create_app
from adk_yuxi.host._control import Claim, RunControl
from adk_yuxi.ledger import RunLedger
from adk_yuxi.storage import open_services
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.waitpoints import Question, WaitpointStore

from .conftest import Api, make_config, new_session, open_api, parse_sse, run
from .test_api_runs import QUESTIONS


class Hold:
    """A model turn that stays in flight until the test lets it answer (or the run is
    cancelled under it), as a slow real model would."""

    def __init__(self, answer: Any = "released") -> None:
        self.answer = answer
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False

    async def __call__(self, _: Any) -> Any:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return self.answer


@pytest.fixture
async def api_on(db_url: str, tmp_path: Path) -> AsyncIterator[Api]:
    async for opened in open_api(db_url, tmp_path):
        yield opened


@pytest.fixture
async def worker_b(api_on: Api, tmp_path: Path) -> AsyncIterator[Api]:
    """A second worker on the same database (its own Host, Runner and lease token)."""
    llm = ScriptedLlm([])
    config = dataclasses.replace(
        make_config(api_on.url, llm, tmp_path), worker="worker-b", cancel_poll_seconds=0.1
    )
    app = create_app(config)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://b") as client:
            yield Api(client=client, llm=llm, url=api_on.url, tokens=api_on.tokens)


def runs_path(session: str) -> str:
    return f"/v1/agents/planner/sessions/{session}/runs"


async def started(api: Api, session: str, hold: Hold) -> tuple[asyncio.Task[httpx.Response], str]:
    """Starts a run whose model call is held; returns the pending response and run id."""
    posted = asyncio.create_task(
        api.client.post(runs_path(session), json={"text": "go"}, headers=api.auth("mei"))
    )
    await asyncio.wait_for(hold.entered.wait(), 30)
    listed = await api.client.get(runs_path(session), headers=api.auth("mei"))
    (current,) = [r for r in listed.json()["runs"] if r["status"] == "running"]
    return posted, str(current["id"])


async def test_cancel_a_running_run_on_its_own_worker(api_on: Api) -> None:
    api, hold = api_on, Hold()
    api.llm.extend([hold, "after the cancel"])
    session = await new_session(api, "mei")
    posted, run_id = await started(api, session, hold)
    follower = asyncio.create_task(
        api.client.get(f"/v1/agents/planner/sessions/{session}/events", headers=api.auth("mei"))
    )
    cancel = await api.client.post(f"{runs_path(session)}/{run_id}/cancel", headers=api.auth("mei"))
    assert cancel.status_code == 202, cancel.text
    assert cancel.json()["cancel_requested_at"] is not None
    response = await asyncio.wait_for(posted, 30)
    assert response.headers["x-run-id"] == run_id
    final = parse_sse(response.text)[-1]
    assert final["event"] == "run_status"
    assert final["data"]["status"] == "cancelled" and final["data"]["run_id"] == run_id
    assert hold.cancelled  # the model call in flight was cancelled, not waited for
    followed = parse_sse((await asyncio.wait_for(follower, 30)).text)
    assert followed[-1]["data"]["status"] == "cancelled"

    again = await api.client.post(f"{runs_path(session)}/{run_id}/cancel", headers=api.auth("mei"))
    assert again.status_code == 409 and again.json()["error"]["code"] == "run_ended"
    got = await api.client.get(f"{runs_path(session)}/{run_id}", headers=api.auth("mei"))
    assert got.json()["status"] == "cancelled" and "worker" not in got.json()
    # The session is free again: the next message runs.
    frames = await run(api, "mei", session, "and now?")
    assert frames[-1]["data"]["status"] == "completed"
    assert api.llm.remaining == 0


async def test_cancel_through_another_worker(api_on: Api, worker_b: Api) -> None:
    api, hold = api_on, Hold()
    api.llm.extend([hold])
    session = await new_session(api, "mei")
    posted, run_id = await started(api, session, hold)
    # Worker B has no memory of the run: it records the request in the ledger, and
    # worker A's poller (every cancel_poll_seconds) aborts the run.
    cancel = await worker_b.client.post(
        f"{runs_path(session)}/{run_id}/cancel", headers=api.auth("mei")
    )
    assert cancel.status_code == 202, cancel.text
    final = parse_sse((await asyncio.wait_for(posted, 30)).text)[-1]
    assert final["data"]["status"] == "cancelled"
    assert hold.cancelled
    assert worker_b.llm.requests == []


async def test_a_second_run_is_409_and_stores_nothing(api_on: Api, worker_b: Api) -> None:
    api, hold = api_on, Hold("first answer")
    api.llm.extend([hold])
    session = await new_session(api, "mei")
    posted, run_id = await started(api, session, hold)
    before = (
        await api.client.get(f"/v1/agents/planner/sessions/{session}", headers=api.auth("mei"))
    ).json()
    for client in (api.client, worker_b.client):  # the same worker, and another one
        second = await client.post(
            runs_path(session), json={"text": "me too"}, headers=api.auth("mei")
        )
        assert second.status_code == 409, second.text
        assert second.json()["error"]["code"] == "run_in_progress"
    after = (
        await api.client.get(f"/v1/agents/planner/sessions/{session}", headers=api.auth("mei"))
    ).json()
    assert after["event_count"] == before["event_count"]  # no half-turn stored
    assert worker_b.llm.requests == []
    hold.release.set()
    final = parse_sse((await asyncio.wait_for(posted, 30)).text)[-1]
    assert final["data"] == {**final["data"], "status": "completed", "run_id": run_id}


async def test_two_workers_racing_for_one_session_run_it_once(api_on: Api, worker_b: Api) -> None:
    api = api_on
    holds = [Hold("from a"), Hold("from b")]
    api.llm.extend([holds[0]])
    worker_b.llm.extend([holds[1]])
    session = await new_session(api, "mei")
    posts = [
        asyncio.create_task(
            w.client.post(runs_path(session), json={"text": "race"}, headers=api.auth("mei"))
        )
        for w in (api, worker_b)
    ]
    done, _ = await asyncio.wait(posts, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    (loser,) = done
    assert loser.result().status_code == 409
    assert loser.result().json()["error"]["code"] == "run_in_progress"
    entered = [asyncio.create_task(h.entered.wait()) for h in holds]
    await asyncio.wait(entered, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.sleep(0.3)  # time for a second model call, were there one
    for task in entered:
        task.cancel()
    winner = next(h for h in holds if h.entered.is_set())
    assert sum(h.entered.is_set() for h in holds) == 1
    winner.release.set()
    (rest,) = [p for p in posts if p is not loser]
    assert parse_sse((await asyncio.wait_for(rest, 30)).text)[-1]["data"]["status"] == "completed"
    assert len(api.llm.requests) + len(worker_b.llm.requests) == 1


async def test_a_new_message_while_waiting_is_409_until_the_run_is_cancelled(api_on: Api) -> None:
    api = api_on
    api.llm.extend([call("ask_user_question", questions=QUESTIONS), "fresh start"])
    session = await new_session(api, "mei")
    waiting = (await run(api, "mei", session, "plan"))[-1]["data"]
    assert waiting["status"] == "waiting"
    refused = await api.client.post(
        runs_path(session), json={"text": "never mind"}, headers=api.auth("mei")
    )
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "run_waiting"
    points = f"/v1/agents/planner/sessions/{session}/waitpoints"
    (point,) = (await api.client.get(points, headers=api.auth("mei"))).json()["waitpoints"]

    other = await api.client.post(
        f"{runs_path(session)}/{waiting['run_id']}/cancel", headers=api.auth("bo")
    )
    assert other.status_code == 404  # bo cannot even see mei's session
    bo_session = await new_session(api, "bo")
    for method, suffix in (("POST", "/cancel"), ("GET", "")):
        # bo names mei's run under his own session: still not his.
        theft = await api.client.request(
            method, f"{runs_path(bo_session)}/{waiting['run_id']}{suffix}", headers=api.auth("bo")
        )
        assert theft.status_code == 404 and theft.json()["error"]["code"] == "not_found"
    cancel = await api.client.post(
        f"{runs_path(session)}/{waiting['run_id']}/cancel", headers=api.auth("mei")
    )
    assert cancel.status_code == 200 and cancel.json()["status"] == "cancelled"
    assert (await api.client.get(points, headers=api.auth("mei"))).json()["waitpoints"] == []
    late = await api.client.post(
        f"{points}/{point['id']}/answer", json={"answers": {"q-1": "fri"}}, headers=api.auth("mei")
    )
    assert late.status_code == 409
    frames = await run(api, "mei", session, "never mind")
    assert frames[-1]["data"]["status"] == "completed"
    assert api.llm.remaining == 0
    paths = (await api.client.get("/openapi.json")).json()["paths"]
    assert "post" in paths["/v1/agents/{agent_id}/sessions/{session_id}/runs/{run_id}/cancel"]


async def test_a_dead_workers_run_ends_followers_and_frees_the_session(api_on: Api) -> None:
    api = api_on
    api.llm.extend(["after the dead worker"])
    session = await new_session(api, "mei")
    # A worker claimed the session and died at once: its lease lapses unrenewed.
    services = open_services(api.url)
    try:
        dead = await RunLedger(services.store).claim_new(
            app_name="planner",
            user_id="mei",
            session_id=session,
            invocation_id="e-dead",
            agent_name="planner",
            worker="dead-worker",
            lease_seconds=1.5,  # long enough to outlast the refused request on a busy machine
        )
    finally:
        await services.close()
    refused = await api.client.post(
        runs_path(session), json={"text": "hi"}, headers=api.auth("mei")
    )
    assert refused.status_code == 409  # its lease is still live
    await asyncio.sleep(max(0.0, dead.lease_expires_at - time.time()) + 0.1)
    followed = await api.client.get(
        f"/v1/agents/planner/sessions/{session}/events", headers=api.auth("mei")
    )
    final = parse_sse(followed.text)[-1]["data"]
    assert final["status"] == "failed" and final["error_code"] == "worker_lease_expired"
    assert final["run_id"] == dead.run_id
    frames = await run(api, "mei", session, "hi")
    assert frames[-1]["data"]["status"] == "completed"
    got = await api.client.get(f"{runs_path(session)}/{dead.run_id}", headers=api.auth("mei"))
    assert got.json()["error_code"] == "worker_lease_expired"


async def test_a_cancel_that_meets_a_pausing_run_still_cancels_it(db_url: str) -> None:
    """The request lands while the run runs; the run pauses at a waiting point before
    its worker notices: after the run the worker closes it cancelled all the same."""
    services = open_services(db_url)
    try:
        await services.prepare()
        waitpoints = WaitpointStore(services.store)
        control = RunControl(services.store, worker="w", lease_seconds=60, poll_seconds=60)
        record = await control.runs.claim_new(
            app_name="planner",
            user_id="mei",
            session_id="s",
            invocation_id="e-1",
            agent_name="planner",
            worker="w",
            lease_seconds=60,
        )
        claim = Claim(record)
        point = await waitpoints.open(
            app_name="planner",
            user_id="mei",
            session_id="s",
            invocation_id="e-1",
            call_id="c-1",
            questions=[Question.model_validate(q) for q in QUESTIONS],
        )
        _, changed = await RunLedger(services.store).cancel(record)  # through worker B
        assert changed
        assert await RunLedger(services.store).finish(record.run_id, "w", "waiting")
        await control.settle(claim, "failed", "never began")
        closed = await RunLedger(services.store).get(record.run_id)
        assert closed.status == "cancelled"
        assert (await waitpoints.get(point.id, user_id="mei")).status == "cancelled"
    finally:
        await services.close()
