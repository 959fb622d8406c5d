"""Concurrent retries of one session create, through two workers on one database: all
of them answer the one session the first created (a retry that overtakes the first
waits for its outcome), and a refused first request makes its retries 409 too."""

from __future__ import annotations

import asyncio

import pytest

from .conftest import Api
from .test_api_control import api_on, worker_b

__all__ = ["api_on", "worker_b"]

SESSIONS = "/v1/agents/planner/sessions"


@pytest.mark.parametrize("named", [False, True])
async def test_four_concurrent_retries_answer_the_one_created_session(
    api_on: Api, worker_b: Api, named: bool
) -> None:
    for round_ in range(10):
        headers = {**api_on.auth("mei"), "Idempotency-Key": f"create-{named}-{round_}"}
        body = {"session_id": f"named-{round_}"} if named else None
        clients = [api_on.client, worker_b.client] * 2
        answers = await asyncio.gather(
            *(client.post(SESSIONS, json=body, headers=headers) for client in clients)
        )
        assert [a.status_code for a in answers] == [201] * 4, [a.text for a in answers]
        ids = {a.json()["id"] for a in answers}
        assert len(ids) == 1, ids
        if named:
            assert ids == {f"named-{round_}"}
    listed = await api_on.client.get(
        SESSIONS, params={"page_size": 100}, headers=api_on.auth("mei")
    )
    assert len(listed.json()["sessions"]) == 10  # one session per key, none more


async def test_retries_of_a_refused_create_are_refused_too(api_on: Api, worker_b: Api) -> None:
    taken = await api_on.client.post(
        SESSIONS, json={"session_id": "taken"}, headers=api_on.auth("mei")
    )
    assert taken.status_code == 201
    for round_ in range(5):
        headers = {**api_on.auth("mei"), "Idempotency-Key": f"refused-{round_}"}
        answers = await asyncio.gather(
            *(
                client.post(SESSIONS, json={"session_id": "taken"}, headers=headers)
                for client in [api_on.client, worker_b.client] * 2
            )
        )
        assert [a.status_code for a in answers] == [409] * 4, [a.text for a in answers]
