"""`Idempotency-Key`: a retry starts nothing new and answers as the first time; the same
key with another body is 409; a refused request leaves no claim behind."""

from __future__ import annotations

from adk_yuxi.storage import open_services

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
    assert ids and [f["id"] for f in again if f["event"] == "adk_event"][-len(ids) :] == ids
    assert again[-1]["data"]["run_id"] == first[-1]["data"]["run_id"]
    other = await api.client.post(path, json={"text": "bye"}, headers=headers)
    assert other.status_code == 409
    for bad in ["", "a b", "x" * 129]:
        response = await api.client.post(
            path, json={"text": "hi"}, headers={**api.auth("mei"), "Idempotency-Key": bad}
        )
        assert response.status_code == 422, bad
    assert len(api.llm.requests) == 1
