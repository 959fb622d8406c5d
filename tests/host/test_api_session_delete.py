"""Deleting a session deletes all of it: runs, waiting points, idempotency keys,
artifacts and the memories made from it go in one transaction, so a session re-created
with the same id starts clean; while a run is running the delete is 409 and changes
nothing. SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from typing import Any

from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_yuxi.ledger import RunLedger
from adk_yuxi.storage import open_services
from adk_yuxi.testing import call

from .conftest import Api, parse_sse, run
from .test_api_control import Hold, api_on, runs_path, started, worker_b
from .test_api_idempotency import QUESTIONS

__all__ = ["api_on", "worker_b"]

SESSIONS = "/v1/agents/planner/sessions"


async def create(api: Api, sid: str, user: str = "mei", key: str | None = None) -> None:
    headers = api.auth(user) if key is None else {**api.auth(user), "Idempotency-Key": key}
    made = await api.client.post(SESSIONS, json={"session_id": sid}, headers=headers)
    assert made.status_code == 201, made.text


async def rows_of(url: str, sid: str) -> dict[str, int]:
    """How many rows of each kind the database holds for session `sid`."""
    services = open_services(url)
    queries = {
        "sessions": "SELECT COUNT(*) FROM yx_sessions WHERE session_id = :s",
        "runs": "SELECT COUNT(*) FROM yx_runs WHERE session_id = :s",
        "waitpoints": "SELECT COUNT(*) FROM yx_waitpoints WHERE session_id = :s",
        "keys": "SELECT COUNT(*) FROM yx_api_idempotency WHERE scope LIKE :scope"
        " OR result LIKE :made",
        "artifacts": "SELECT COUNT(*) FROM yx_artifact_versions WHERE scope = :s",
        "memories": "SELECT COUNT(*) FROM yx_memories WHERE session_id = :s AND content <> ''",
    }
    try:
        async with services.store.read() as tx:
            return {
                name: int(
                    (await tx.fetchone(sql, {"s": sid, "scope": f"%:{sid}", "made": f'%"{sid}"%'}))[
                        0
                    ]
                )
                for name, sql in queries.items()
            }
    finally:
        await services.close()


async def save_artifacts(url: str, sid: str) -> None:
    """A session-scoped artifact of `sid` and a user-scoped one of mei; a memory made
    from `sid` and one from another session."""
    services = open_services(url)
    try:
        for name, session in (("report.md", sid), ("user:profile.md", None)):
            await services.artifact_service.save_artifact(
                app_name="planner",
                user_id="mei",
                session_id=session,
                filename=name,
                artifact=types.Part.from_bytes(data=name.encode(), mime_type="text/markdown"),
            )
        for session, words in ((sid, "the launch code is tangerine"), ("other", "kiwi harbour")):
            said = Event(
                author="user",
                content=types.Content(role="user", parts=[types.Part(text=words)]),
            )
            await services.memory_service.add_events_to_memory(
                app_name="planner", user_id="mei", events=[said], session_id=session
            )
    finally:
        await services.close()


async def recalled(url: str, query: str) -> list[str]:
    services = open_services(url)
    try:
        found = await services.memory_service.search_memory(
            app_name="planner", user_id="mei", query=query
        )
        return [str(m.content.parts[0].text) for m in found.memories if m.content.parts]
    finally:
        await services.close()


async def test_a_deleted_waiting_session_recreated_with_its_id_starts_clean(api_on: Api) -> None:
    api, sid = api_on, "launch-plan"
    await create(api, sid, key="make-launch-plan")
    keyed = {**api.auth("mei"), "Idempotency-Key": "first-message"}
    api.llm.extend([call("ask_user_question", questions=QUESTIONS)])
    ran = await api.client.post(f"{runs_path(sid)}", json={"text": "plan"}, headers=keyed)
    assert parse_sse(ran.text)[-1]["data"]["status"] == "waiting"
    points = f"{SESSIONS}/{sid}/waitpoints"
    (point,) = (await api.client.get(points, headers=api.auth("mei"))).json()["waitpoints"]
    await save_artifacts(api.url, sid)
    before = await rows_of(api.url, sid)
    assert before == {
        "sessions": 1,
        "runs": 1,
        "waitpoints": 1,
        "keys": 2,
        "artifacts": 1,
        "memories": 1,
    }
    assert await recalled(api.url, "tangerine") == ["the launch code is tangerine"]

    deleted = await api.client.delete(f"{SESSIONS}/{sid}", headers=api.auth("mei"))
    assert deleted.status_code == 204, deleted.text
    assert await rows_of(api.url, sid) == dict.fromkeys(before, 0)
    gone = await api.client.get(f"{SESSIONS}/{sid}", headers=api.auth("mei"))
    assert gone.status_code == 404
    assert await recalled(api.url, "tangerine") == []  # what it said is forgotten too
    assert await recalled(api.url, "kiwi") == ["kiwi harbour"]  # other sessions' stay

    # The create's key went with the session: the same key and body make a new one.
    await create(api, sid, key="make-launch-plan")
    assert (await api.client.get(runs_path(sid), headers=api.auth("mei"))).json()["runs"] == []
    assert (await api.client.get(points, headers=api.auth("mei"))).json()["waitpoints"] == []
    answer = await api.client.post(
        f"{points}/{point['id']}/answer", json={"answers": {"q-1": "fri"}}, headers=api.auth("mei")
    )
    assert answer.status_code == 404  # the old question does not come back
    names = await api.client.get(f"{SESSIONS}/{sid}/artifacts", headers=api.auth("mei"))
    assert names.status_code == 200, names.text
    assert "report.md" not in str(names.json()) and "user:profile.md" in str(names.json())
    # The same key and body start a new run: nothing of the old session is replayed.
    api.llm.extend(["A fresh start."])
    again = await api.client.post(f"{runs_path(sid)}", json={"text": "plan"}, headers=keyed)
    frames = parse_sse(again.text)
    assert frames[-1]["data"]["status"] == "completed", again.text
    texts = [f["data"]["content"]["parts"][0].get("text") for f in frames[:-1]]
    assert texts == ["A fresh start."]
    listed = (await api.client.get(runs_path(sid), headers=api.auth("mei"))).json()["runs"]
    assert [r["status"] for r in listed] == ["completed"]


async def test_deleting_a_session_while_its_run_runs_is_409_and_changes_nothing(
    api_on: Api,
) -> None:
    api, hold, sid = api_on, Hold("done"), "busy"
    api.llm.extend([hold])
    await create(api, sid)
    posted, run_id = await started(api, sid, hold)
    before = await rows_of(api.url, sid)
    refused = await api.client.delete(f"{SESSIONS}/{sid}", headers=api.auth("mei"))
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "run_in_progress"
    assert await rows_of(api.url, sid) == before
    hold.release.set()
    assert parse_sse((await asyncio.wait_for(posted, 30)).text)[-1]["data"]["status"] == (
        "completed"
    )
    got = await api.client.get(f"{runs_path(sid)}/{run_id}", headers=api.auth("mei"))
    assert got.json()["status"] == "completed"
    deleted = await api.client.delete(f"{SESSIONS}/{sid}", headers=api.auth("mei"))
    assert deleted.status_code == 204
    assert (await rows_of(api.url, sid))["runs"] == 0


async def test_another_users_delete_is_404_and_keeps_everything(api_on: Api) -> None:
    api, sid = api_on, "mine"
    await create(api, sid)
    api.llm.extend(["hi"])
    await run(api, "mei", sid, "hello")
    before = await rows_of(api.url, sid)
    theirs = await api.client.delete(f"{SESSIONS}/{sid}", headers=api.auth("bo"))
    assert theirs.status_code == 404
    assert await rows_of(api.url, sid) == before


async def test_a_run_racing_a_delete_never_outlives_the_session(api_on: Api, worker_b: Api) -> None:
    """A new message and a delete at once, through two workers: either the run wins
    (the delete is 409, or 204 once it ended) or the delete does (the message is 404
    and leaves no run); a deleted session never keeps a run."""
    for round_ in range(8):
        sid = f"race-{round_}"
        await create(api_on, sid)
        api_on.llm.extend(["answered"])
        posted, deleted = await asyncio.gather(
            api_on.client.post(runs_path(sid), json={"text": "go"}, headers=api_on.auth("mei")),
            worker_b.client.delete(f"{SESSIONS}/{sid}", headers=api_on.auth("mei")),
        )
        assert (posted.status_code, deleted.status_code) in {(200, 204), (200, 409), (404, 204)}
        if posted.status_code == 200:
            assert parse_sse(posted.text)[-1]["data"]["status"] in ("completed", "failed")
        session = await api_on.client.get(f"{SESSIONS}/{sid}", headers=api_on.auth("mei"))
        rows = await rows_of(api_on.url, sid)
        if session.status_code == 404:
            assert rows == dict.fromkeys(rows, 0), (round_, rows)
        else:
            assert rows["runs"] == 1


def respond(request: LlmRequest) -> Any:
    """Asks the question on a new message; answers once the question is answered."""
    last = request.contents[-1].parts or []
    if any(p.function_response is not None for p in last):
        return "Friday it is."
    return call("ask_user_question", questions=QUESTIONS)


async def test_an_answer_racing_a_delete_resumes_fully_or_not_at_all(
    api_on: Api, worker_b: Api
) -> None:
    """An answer and a delete of a waiting session at once, through two workers: either
    the resume wins (its run completes; the delete is 409 while it runs) or the delete
    does (the answer is refused and resumes nothing); a deleted session keeps nothing."""
    for round_ in range(6):
        sid = f"asked-{round_}"
        await create(api_on, sid)
        api_on.llm.extend([respond])
        ran = await run(api_on, "mei", sid, "plan")
        assert ran[-1]["data"]["status"] == "waiting"
        points = f"{SESSIONS}/{sid}/waitpoints"
        (point,) = (await api_on.client.get(points, headers=api_on.auth("mei"))).json()[
            "waitpoints"
        ]
        asked = len(api_on.llm.requests)
        api_on.llm.extend([respond])  # left queued (and used next round) if not resumed
        answered, deleted = await asyncio.gather(
            api_on.client.post(
                f"{points}/{point['id']}/answer",
                json={"answers": {"q-1": "fri"}},
                headers=api_on.auth("mei"),
            ),
            worker_b.client.delete(f"{SESSIONS}/{sid}", headers=api_on.auth("mei")),
        )
        pair = (answered.status_code, deleted.status_code)
        assert pair in {(200, 409), (200, 204), (404, 204), (409, 204)}, (pair, answered.text)
        if answered.status_code == 200:
            assert parse_sse(answered.text)[-1]["data"]["status"] == "completed"
            assert len(api_on.llm.requests) == asked + 1
        else:
            assert len(api_on.llm.requests) == asked  # nothing resumed
        rows = await rows_of(api_on.url, sid)
        if deleted.status_code == 204:
            assert rows == dict.fromkeys(rows, 0), (round_, rows)
        else:
            assert rows["sessions"] == rows["runs"] == 1


async def test_a_dead_workers_run_is_409_while_its_lease_lives_then_deleted(api_on: Api) -> None:
    api, sid = api_on, "orphaned"
    await create(api, sid)
    services = open_services(api.url)
    try:  # a worker claimed the session and died at once: its lease lapses unrenewed
        await RunLedger(services.store).claim_new(
            app_name="planner",
            user_id="mei",
            session_id=sid,
            invocation_id="e-dead",
            agent_name="planner",
            worker="dead-worker",
            lease_seconds=0.5,
        )
    finally:
        await services.close()
    refused = await api.client.delete(f"{SESSIONS}/{sid}", headers=api.auth("mei"))
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "run_in_progress"
    await asyncio.sleep(0.6)
    deleted = await api.client.delete(f"{SESSIONS}/{sid}", headers=api.auth("mei"))
    assert deleted.status_code == 204, deleted.text
    rows = await rows_of(api.url, sid)
    assert rows == dict.fromkeys(rows, 0)
