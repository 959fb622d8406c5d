"""An answer is text: a lone surrogate (a JSON "\\ud800" escape) sent to the answer route
is 422 with the point still pending, with or without an Idempotency-Key, and a valid
answer then resumes the run. SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk_yuxi.testing import call

from .conftest import Api, new_session, open_api, parse_sse, run

FREE = [{"question": "What should the launch be called?"}]


@pytest.fixture
async def api_on(db_url: str, tmp_path: Path) -> AsyncIterator[Api]:
    async for opened in open_api(db_url, tmp_path):
        yield opened


def raw(body: str, api: Api, key: str | None = None) -> dict[str, str]:
    headers = {**api.auth("mei"), "Content-Type": "application/json"}
    return headers if key is None else {**headers, "Idempotency-Key": key}


async def test_a_lone_surrogate_answer_is_422_and_the_point_stays_pending(api_on: Api) -> None:
    api = api_on
    api.llm.extend([call("ask_user_question", questions=FREE), "Named."])
    session = await new_session(api, "mei")
    assert (await run(api, "mei", session, "plan"))[-1]["data"]["status"] == "waiting"
    base = f"/v1/agents/planner/sessions/{session}/waitpoints"
    (point,) = (await api.client.get(base, headers=api.auth("mei"))).json()["waitpoints"]
    path = f"{base}/{point['id']}/answer"
    bodies = [
        ('{"answers": {"q-1": "Nova \\ud800"}}', "lone surrogate"),
        ('{"answers": {"q-1": "Nova", "\\udfff": "x"}}', "no such question"),
    ]
    for key in (None, "surrogate-1"):
        for body, problem in bodies:
            refused = await api.client.post(path, content=body, headers=raw(body, api, key))
            assert refused.status_code == 422, refused.text
            error = refused.json()["error"]
            assert error["code"] == "answer_rejected"
            assert problem in error["problems"][0]["problem"]
            listed = await api.client.get(base, headers=api.auth("mei"))
            assert [p["status"] for p in listed.json()["waitpoints"]] == ["pending"]
    runs = await api.client.get(
        f"/v1/agents/planner/sessions/{session}/runs", headers=api.auth("mei")
    )
    assert [r["status"] for r in runs.json()["runs"]] == ["waiting"]
    # The same key with a valid answer is a new request (the refused one left no claim).
    good = '{"answers": {"q-1": "Nova"}}'
    answered = await api.client.post(path, content=good, headers=raw(good, api, "surrogate-1"))
    assert answered.status_code == 200, answered.text
    assert parse_sse(answered.text)[-1]["data"]["status"] == "completed"
