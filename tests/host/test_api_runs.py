"""Sessions, runs as event streams, waiting points answered through the API, errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk_yuxi.testing import call

from .conftest import Api, new_session, open_api, parse_sse, run

QUESTIONS = [
    {
        "question": "Which day suits the launch?",
        "options": [{"label": "Friday", "value": "fri"}, {"label": "Monday", "value": "mon"}],
    }
]


@pytest.fixture
async def api_on(db_url: str, tmp_path: Path) -> AsyncIterator[Api]:
    async for opened in open_api(db_url, tmp_path):
        yield opened


async def test_a_run_streams_adk_events_and_its_status(api: Api) -> None:
    api.llm.extend(["Hello, mei."])
    session = await new_session(api, "mei")
    frames = await run(api, "mei", session, "hi")
    events = [f for f in frames if f["event"] == "adk_event"]
    assert [e["data"]["content"]["parts"][0]["text"] for e in events] == ["Hello, mei."]
    assert all(e["id"] == e["data"]["id"] for e in events)
    status = frames[-1]
    assert status["event"] == "run_status"
    assert status["data"]["status"] == "completed" and status["data"]["run_id"]
    got = await api.client.get(f"/v1/agents/planner/sessions/{session}", headers=api.auth("mei"))
    assert got.json()["event_count"] == 2  # the user's message and the answer


async def test_a_waiting_point_answered_through_the_api(api_on: Api) -> None:
    api = api_on
    api.llm.extend([call("ask_user_question", questions=QUESTIONS), "Friday it is."])
    session = await new_session(api, "mei")
    frames = await run(api, "mei", session, "plan the launch")
    assert frames[-1]["data"]["status"] == "waiting"
    base = f"/v1/agents/planner/sessions/{session}/waitpoints"

    pending = await api.client.get(base, headers=api.auth("mei"))
    (point,) = pending.json()["waitpoints"]
    assert point["questions"][0]["question"] == "Which day suits the launch?"
    assert "user_id" not in point and point["agent_id"] == "planner"

    rejected = await api.client.post(
        f"{base}/{point['id']}/answer", json={"answers": {"q-1": "sun"}}, headers=api.auth("mei")
    )
    assert rejected.status_code == 422 and rejected.json()["error"]["problems"]
    answered = await api.client.post(
        f"{base}/{point['id']}/answer", json={"answers": {"q-1": "fri"}}, headers=api.auth("mei")
    )
    assert answered.status_code == 200, answered.text
    resumed = parse_sse(answered.text)
    texts = [
        p.get("text")
        for f in resumed
        if f["event"] == "adk_event"
        for p in f["data"].get("content", {}).get("parts", [])
    ]
    assert "Friday it is." in texts
    assert resumed[-1]["data"]["status"] == "completed"
    assert api.llm.remaining == 0

    stale = await api.client.post(
        f"{base}/{point['id']}/answer", json={"answers": {"q-1": "mon"}}, headers=api.auth("mei")
    )
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "conflict"
    assert (await api.client.get(base, headers=api.auth("mei"))).json()["waitpoints"] == []
    assert api.llm.remaining == 0


async def test_another_users_waiting_point_is_missing(api: Api) -> None:
    api.llm.extend([call("ask_user_question", questions=QUESTIONS)])
    session = await new_session(api, "mei")
    await run(api, "mei", session, "plan")
    base = f"/v1/agents/planner/sessions/{session}/waitpoints"
    (point,) = (await api.client.get(base, headers=api.auth("mei"))).json()["waitpoints"]
    bo_session = await new_session(api, "bo")
    # bo names mei's point under his own session: still not his.
    theft = await api.client.post(
        f"/v1/agents/planner/sessions/{bo_session}/waitpoints/{point['id']}/answer",
        json={"answers": {"q-1": "fri"}},
        headers=api.auth("bo"),
    )
    assert theft.status_code == 404
    (still,) = (await api.client.get(base, headers=api.auth("mei"))).json()["waitpoints"]
    assert still["status"] == "pending"


async def test_sessions_are_paged_and_deleted(api: Api) -> None:
    made = {await new_session(api, "mei") for _ in range(3)}
    path = "/v1/agents/planner/sessions"
    first = (await api.client.get(path, params={"page_size": 2}, headers=api.auth("mei"))).json()
    assert len(first["sessions"]) == 2 and first["next_page_token"]
    second = (
        await api.client.get(
            path,
            params={"page_size": 2, "page_token": first["next_page_token"]},
            headers=api.auth("mei"),
        )
    ).json()
    assert second["next_page_token"] is None
    assert {s["id"] for s in first["sessions"] + second["sessions"]} == made
    bad = await api.client.get(path, params={"page_token": "nonsense"}, headers=api.auth("mei"))
    assert bad.status_code == 422
    gone = made.pop()
    assert (await api.client.delete(f"{path}/{gone}", headers=api.auth("mei"))).status_code == 204
    assert (await api.client.get(f"{path}/{gone}", headers=api.auth("mei"))).status_code == 404


async def test_named_session_and_duplicate(api: Api) -> None:
    path = "/v1/agents/planner/sessions"
    made = await api.client.post(path, json={"session_id": "trip-1"}, headers=api.auth("mei"))
    assert made.status_code == 201 and made.json()["id"] == "trip-1"
    again = await api.client.post(path, json={"session_id": "trip-1"}, headers=api.auth("mei"))
    assert again.status_code == 409
    # bo may use the same id: sessions are per user.
    bo = await api.client.post(path, json={"session_id": "trip-1"}, headers=api.auth("bo"))
    assert bo.status_code == 201


@pytest.mark.parametrize(
    "body",
    [
        {"text": ""},
        {"text": "hi", "extra": "SENTINEL"},
        {"message": "SENTINEL"},
        {"text": ["SENTINEL"]},
    ],
)
async def test_bad_run_bodies_are_422_and_run_nothing(api: Api, body: dict[str, object]) -> None:
    session = await new_session(api, "mei")
    response = await api.client.post(
        f"/v1/agents/planner/sessions/{session}/runs", json=body, headers=api.auth("mei")
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["problems"]
    assert "SENTINEL" not in response.text  # the input is not echoed back
    assert api.llm.requests == []


@pytest.mark.parametrize("session_id", ["a b", "../x", "é", "x" * 200, ""])
async def test_odd_session_ids_are_refused(api: Api, session_id: str) -> None:
    response = await api.client.post(
        "/v1/agents/planner/sessions", json={"session_id": session_id}, headers=api.auth("mei")
    )
    assert response.status_code == 422


async def test_oversized_bodies_are_413(api: Api) -> None:
    session = await new_session(api, "mei")
    path = f"/v1/agents/planner/sessions/{session}/runs"
    big = await api.client.post(path, json={"text": "x" * 70_000}, headers=api.auth("mei"))
    assert big.status_code == 413 and big.json()["error"]["code"] == "too_large"

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(80):
            yield b"x" * 1024

    chunked = await api.client.post(path, content=chunks(), headers=api.auth("mei"))
    assert chunked.status_code == 413
    assert api.llm.requests == []


async def test_a_failing_model_ends_the_stream_with_failed_and_no_trace(api: Api) -> None:
    # The script is empty: the model raises ScriptExhaustedError inside the run.
    session = await new_session(api, "mei")
    frames = await run(api, "mei", session, "hi")
    assert frames[-1]["event"] == "run_status"
    assert frames[-1]["data"]["status"] == "failed"
    text = str(frames)
    assert "Traceback" not in text and "ScriptedLlm" not in text and "/work" not in text


async def test_last_event_id_replays_the_rest_and_the_status(api: Api) -> None:
    api.llm.extend([call("ask_user_question", questions=QUESTIONS)])
    session = await new_session(api, "mei")
    frames = await run(api, "mei", session, "plan")
    ids = [f["id"] for f in frames if f["event"] == "adk_event"]
    assert len(ids) >= 2
    path = f"/v1/agents/planner/sessions/{session}/events"
    # A client that saw only the first event of the run reconnects.
    resumed = await api.client.get(path, headers={**api.auth("mei"), "Last-Event-ID": ids[0]})
    assert resumed.status_code == 200
    replayed = parse_sse(resumed.text)
    assert [f["id"] for f in replayed if f["event"] == "adk_event"] == ids[1:]
    assert replayed[-1]["event"] == "run_status"
    assert replayed[-1]["data"]["status"] == "waiting"
    assert replayed[-1]["data"]["run_id"] == frames[-1]["data"]["run_id"]
    # Without a cursor: the user's message and every event of the run.
    everything = parse_sse((await api.client.get(path, headers=api.auth("mei"))).text)
    assert [f["id"] for f in everything if f["event"] == "adk_event"][-len(ids) :] == ids
    bad = await api.client.get(path, headers={**api.auth("mei"), "Last-Event-ID": "nope"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_cursor"
    other = await api.client.get(path, headers=api.auth("bo"))
    assert other.status_code == 404
