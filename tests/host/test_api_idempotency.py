"""`Idempotency-Key`: a retry starts nothing new and answers as the first time; the same
key with another body is 409; a refused request leaves no claim behind."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from adk_yuxi.host import ApiConfig
from adk_yuxi.host._idempotency import IdempotencyKeys, body_hash
from adk_yuxi.storage import open_services
from adk_yuxi.testing import call

from ._served import open_served
from .conftest import Api, new_session, parse_sse


async def test_session_create_retry_returns_the_same_session(api: Api) -> None:
    path = "/v1/agents/planner/sessions"
    headers = {**api.auth("mei"), "Idempotency-Key": "create-1"}
    first = await api.client.post(path, headers=headers)
    again = await api.client.post(path, headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"]
    listed = await api.client.get(path, headers=api.auth("mei"))
    assert len(listed.json()["sessions"]) == 1
    other = await api.client.post(path, headers=headers, json={"session_id": "named"})
    assert other.status_code == 409
    # bo's key space is his own.
    bo = await api.client.post(path, headers={**api.auth("bo"), "Idempotency-Key": "create-1"})
    assert bo.status_code == 201 and bo.json()["id"] != first.json()["id"]


async def test_refused_create_leaves_no_claim(api: Api) -> None:
    path = "/v1/agents/planner/sessions"
    await api.client.post(path, headers=api.auth("mei"), json={"session_id": "taken"})
    headers = {**api.auth("mei"), "Idempotency-Key": "k"}
    refused = await api.client.post(path, headers=headers, json={"session_id": "taken"})
    assert refused.status_code == 409
    services = open_services(api.url)
    try:
        async with services.store.read() as tx:
            assert await tx.fetchall("SELECT * FROM yx_api_idempotency") == []
    finally:
        await services.close()


async def test_run_retry_starts_nothing_and_replays(api: Api) -> None:
    api.llm.extend(["only once"])
    session = await new_session(api, "mei")
    path = f"/v1/agents/planner/sessions/{session}/runs"
    headers = {**api.auth("mei"), "Idempotency-Key": "run-1"}
    first = parse_sse((await api.client.post(path, json={"text": "hi"}, headers=headers)).text)
    again = parse_sse((await api.client.post(path, json={"text": "hi"}, headers=headers)).text)
    assert len(api.llm.requests) == 1  # the retry asked the model nothing
    ids = [f["id"] for f in first if f["event"] == "adk_event"]
    replayed = [f for f in again if f["event"] == "adk_event"]
    # The stored run begins with the user's message, which the live stream does not echo.
    assert replayed[0]["data"]["author"] == "user"
    assert ids and [f["id"] for f in replayed[1:]] == ids
    assert again[-1]["data"]["run_id"] == first[-1]["data"]["run_id"]
    other = await api.client.post(path, json={"text": "bye"}, headers=headers)
    assert other.status_code == 409
    for bad in ["", "a b", "x" * 129]:
        response = await api.client.post(
            path, json={"text": "hi"}, headers={**api.auth("mei"), "Idempotency-Key": bad}
        )
        assert response.status_code == 422, bad
    assert len(api.llm.requests) == 1


async def test_a_retry_answers_its_own_run_after_later_ones(api: Api) -> None:
    api.llm.extend(["first answer", "second answer"])
    session = await new_session(api, "mei")
    path = f"/v1/agents/planner/sessions/{session}/runs"
    keyed = {**api.auth("mei"), "Idempotency-Key": "run-1"}
    first = await api.client.post(path, json={"text": "one"}, headers=keyed)
    later = await api.client.post(path, json={"text": "two"}, headers=api.auth("mei"))
    retry = await api.client.post(path, json={"text": "one"}, headers=keyed)
    assert len(api.llm.requests) == 2
    run_id = first.headers["x-run-id"]
    assert retry.headers["x-run-id"] == run_id != later.headers["x-run-id"]
    frames, replayed = parse_sse(first.text), parse_sse(retry.text)
    events = [f for f in replayed if f["event"] == "adk_event"]
    assert events[0]["data"]["author"] == "user"  # the stored message of "one"
    assert [f["id"] for f in events[1:]] == [f["id"] for f in frames if f["event"] == "adk_event"]
    assert "second answer" not in retry.text
    assert replayed[-1]["event"] == "run_status"
    assert replayed[-1]["data"] == frames[-1]["data"] and replayed[-1]["data"]["run_id"] == run_id


QUESTIONS = [
    {
        "question": "Which day suits the launch?",
        "options": [{"label": "Friday", "value": "fri"}, {"label": "Monday", "value": "mon"}],
    }
]


async def _waiting(api: Api) -> tuple[str, str]:
    """A session of mei's paused on one question; (answer path, session id)."""
    api.llm.extend([call("ask_user_question", questions=QUESTIONS), "Friday it is."])
    session = await new_session(api, "mei")
    ran = await api.client.post(
        f"/v1/agents/planner/sessions/{session}/runs",
        json={"text": "plan"},
        headers=api.auth("mei"),
    )
    assert parse_sse(ran.text)[-1]["data"]["status"] == "waiting"
    base = f"/v1/agents/planner/sessions/{session}/waitpoints"
    (point,) = (await api.client.get(base, headers=api.auth("mei"))).json()["waitpoints"]
    return f"{base}/{point['id']}/answer", session


def _ids(frames: list[dict[str, Any]]) -> list[str]:
    return [f["id"] for f in frames if f["event"] == "adk_event"]


async def test_answer_retry_records_nothing_and_replays_the_resumed_run(api: Api) -> None:
    path, session = await _waiting(api)
    detail = f"/v1/agents/planner/sessions/{session}"
    before = (await api.client.get(detail, headers=api.auth("mei"))).json()["event_count"]
    headers = {**api.auth("mei"), "Idempotency-Key": "answer-1"}
    body = {"answers": {"q-1": "fri"}}
    first = parse_sse((await api.client.post(path, json=body, headers=headers)).text)
    assert first[-1]["data"]["status"] == "completed"
    asked = len(api.llm.requests)
    again = await api.client.post(path, json=body, headers=headers)
    assert again.status_code == 200 and again.headers["content-type"].startswith(
        "text/event-stream"
    )
    replayed = parse_sse(again.text)
    assert len(api.llm.requests) == asked  # nothing resumed twice
    # As for runs: the session from before the resume, so the stored resume message
    # (the user's answer) comes first, then every event the first stream had.
    extra, *rest = [f for f in replayed if f["event"] == "adk_event"]
    assert extra["data"]["author"] == "user"
    assert [f["id"] for f in rest] == _ids(first)
    assert replayed[-1]["data"] == first[-1]["data"]
    # The same key with another answer (or for another point) is 409; nothing changes.
    other = await api.client.post(path, json={"answers": {"q-1": "mon"}}, headers=headers)
    assert other.status_code == 409 and other.json()["error"]["code"] == "conflict"
    # Without a key, answering again is 409 as before.
    plain = await api.client.post(path, json=body, headers=api.auth("mei"))
    assert plain.status_code == 409
    services = open_services(api.url)
    try:
        async with services.store.read() as tx:
            (answers,) = await tx.fetchone("SELECT answers FROM yx_waitpoints")
    finally:
        await services.close()
    assert "fri" in answers and "mon" not in answers
    after = (await api.client.get(detail, headers=api.auth("mei"))).json()["event_count"]
    assert after == before + 1 + len(_ids(first))  # the answer and one resumed run


async def test_a_rejected_answer_releases_its_key(api: Api) -> None:
    path, _ = await _waiting(api)
    headers = {**api.auth("mei"), "Idempotency-Key": "answer-2"}
    rejected = await api.client.post(path, json={"answers": {"q-1": "sun"}}, headers=headers)
    assert rejected.status_code == 422
    fixed = await api.client.post(path, json={"answers": {"q-1": "fri"}}, headers=headers)
    assert fixed.status_code == 200
    assert parse_sse(fixed.text)[-1]["data"]["status"] == "completed"
    # bo reusing the key on mei's point is still 404, not a replay of hers.
    theirs = await api.client.post(
        path,
        json={"answers": {"q-1": "fri"}},
        headers={**api.auth("bo"), "Idempotency-Key": "answer-2"},
    )
    assert theirs.status_code == 404


async def test_concurrent_answers_with_one_key_resume_once(api: Api) -> None:
    path, _ = await _waiting(api)
    headers = {**api.auth("mei"), "Idempotency-Key": "answer-3"}
    body = {"answers": {"q-1": "fri"}}
    asked = len(api.llm.requests)
    one, two = await asyncio.gather(
        api.client.post(path, json=body, headers=headers),
        api.client.post(path, json=body, headers=headers),
    )
    assert one.status_code == two.status_code == 200
    assert len(api.llm.requests) == asked + 1
    first, second = parse_sse(one.text), parse_sse(two.text)
    assert first[-1]["data"]["status"] == second[-1]["data"]["status"] == "completed"
    # The winner streamed the resumed run; the other replays it (after the stored answer).
    short, long = sorted([_ids(first), _ids(second)], key=len)
    assert short and long[-len(short) :] == short and len(long) == len(short) + 1


async def test_keys_expire_after_the_retention(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'api.db'}"
    async for api in open_served(url, tmp_path, idempotency_ttl_seconds=0.3):
        path = "/v1/agents/planner/sessions"
        headers = {**api.auth("mei"), "Idempotency-Key": "old"}
        first = await api.client.post(path, headers=headers)
        assert (await api.client.post(path, headers=headers)).json()["id"] == first.json()["id"]
        await asyncio.sleep(0.4)
        # Expired: the same key is a new request now.
        later = await api.client.post(path, headers=headers)
        assert later.status_code == 201 and later.json()["id"] != first.json()["id"]
        await asyncio.sleep(0.4)
        await api.client.post(path, headers={**api.auth("mei"), "Idempotency-Key": "new"})
        services = open_services(url)
        try:
            async with services.store.read() as tx:
                rows = await tx.fetchall("SELECT idem_key FROM yx_api_idempotency")
        finally:
            await services.close()
        assert [r[0] for r in rows] == ["new"]  # the expired claim was purged


def test_retention_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="idempotency_ttl_seconds"):
        ApiConfig(database_url="sqlite+aiosqlite://", agents=(), idempotency_ttl_seconds=0)


async def _claim_first(api: Api, path: str, session: str, body: dict[str, Any], key: str) -> None:
    """What a first request with `key` has done before it records its answer: the claim."""
    detail = await api.client.get(
        f"/v1/agents/planner/sessions/{session}/events", headers=api.auth("mei")
    )
    cursor = [f["id"] for f in parse_sse(detail.text) if f["event"] == "adk_event"][-1]
    services = open_services(api.url)
    try:
        claimed, _ = await IdempotencyKeys(services.store).claim(
            "mei",
            f"answer:planner:{session}",
            key,
            body_hash({"waitpoint_id": path.split("/")[-2], **body}),
            {"cursor": cursor},
        )
    finally:
        await services.close()
    assert claimed


async def test_a_retry_that_overtakes_the_first_request_waits_for_its_resume(api: Api) -> None:
    path, session = await _waiting(api)
    body = {"answers": {"q-1": "fri"}}
    await _claim_first(api, path, session, body, "slow-first")
    retry = asyncio.create_task(
        api.client.post(
            path, json=body, headers={**api.auth("mei"), "Idempotency-Key": "slow-first"}
        )
    )
    await asyncio.sleep(0.5)
    assert not retry.done()  # the answer is not recorded yet: the retry waits
    # The first request records its answer and resumes (here: the same answer, keyless).
    resumed = await api.client.post(path, json=body, headers=api.auth("mei"))
    assert parse_sse(resumed.text)[-1]["data"]["status"] == "completed"
    replayed = parse_sse((await retry).text)
    assert replayed[-1]["data"]["status"] == "completed"
    assert _ids(replayed)[-len(_ids(parse_sse(resumed.text))) :] == _ids(parse_sse(resumed.text))


async def test_a_retry_of_a_refused_first_request_is_409(api: Api) -> None:
    path, session = await _waiting(api)
    body = {"answers": {"q-1": "fri"}}
    await _claim_first(api, path, session, body, "doomed")
    retry = asyncio.create_task(
        api.client.post(path, json=body, headers={**api.auth("mei"), "Idempotency-Key": "doomed"})
    )
    await asyncio.sleep(0.5)
    services = open_services(api.url)
    try:  # the first request's answer was refused: it releases its key
        await IdempotencyKeys(services.store).release("mei", f"answer:planner:{session}", "doomed")
    finally:
        await services.close()
    refused = await retry
    assert refused.status_code == 409, refused.text
    base = path.rsplit("/", 2)[0]
    (point,) = (await api.client.get(base, headers=api.auth("mei"))).json()["waitpoints"]
    assert point["status"] == "pending"
