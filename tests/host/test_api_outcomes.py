"""What a caller is told of a run's outcome, over a loopback socket (SQLite and
PostgreSQL). A model host that fails: the run ends `failed` with the model's code, the
same in its stream, its replay and the run list (one source: the ledger row), and what a
caller sees of it, streamed live, replayed by `GET …/events`, or stored in the session,
is the code's public sentence only. The model's URL and the variables to check go to
the operator log (the developer at `adk run` keeps them:
tests/models/test_openai_failures.py). A session that never ran is followed to
`run_status` `none`, never `completed`."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk_yuxi.models import MODEL_REJECTED, OpenAICompatibleLlm, model_error_text
from adk_yuxi.testing import ErrorReply, OpenAIScriptServer

from ._served import open_served, served_on_fixture, services_of  # noqa: F401
from .conftest import Api, new_session, parse_sse

SENTENCE = model_error_text(MODEL_REJECTED)
CASES = {
    # status: how the model is misconfigured, what its detail names
    "500": ("", "test-key", "HTTP 500"),
    "401": ("", "wrong-key", "OPENAI_API_KEY"),
    "404": ("/nope", "test-key", "OPENAI_BASE_URL"),
}


@pytest.fixture
def model_host() -> AsyncIterator[OpenAIScriptServer]:
    # The client retries a 500 twice: one refusal per attempt.
    with OpenAIScriptServer([ErrorReply(500, "upstream exploded")] * 3) as host:
        yield host


@pytest.fixture(params=sorted(CASES))
async def failing(
    request: pytest.FixtureRequest, model_host: OpenAIScriptServer, db_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Api, str, str]]:
    suffix, key, named = CASES[request.param]
    base = model_host.base_url + suffix
    model = OpenAICompatibleLlm(model="m", api_key=key, base_url=base)
    async for api in open_served(db_url, tmp_path, model=model):
        yield api, base, named


def _leaks(text: str, base: str, named: str) -> list[str]:
    return [s for s in (base, "127.0.0.1", "OPENAI_", named, "'m'") if s in text]


async def test_a_failing_model_host_is_told_by_its_code_only(
    failing: tuple[Api, str, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    api, base, named = failing
    caplog.set_level(logging.WARNING, logger="adk_yuxi.host")
    session = await new_session(api, "mei")
    path = f"/v1/agents/planner/sessions/{session}"
    live = await api.client.post(f"{path}/runs", json={"text": "hi"}, headers=api.auth("mei"))
    assert live.status_code == 200, live.text
    replay = await api.client.get(f"{path}/events", headers=api.auth("mei"))
    runs = await api.client.get(f"{path}/runs", headers=api.auth("mei"))

    for body in (live.text, replay.text, runs.text):
        assert _leaks(body, base, named) == [], body
    for frames in (parse_sse(live.text), parse_sse(replay.text)):
        events = [f["data"] for f in frames if f["event"] == "adk_event"]
        errors = [e for e in events if "errorCode" in e]
        assert len(errors) == 1
        assert errors[0]["errorCode"] == MODEL_REJECTED
        assert errors[0]["errorMessage"] == SENTENCE
        assert errors[0]["content"]["parts"] == [{"text": f"[{MODEL_REJECTED}] {SENTENCE}"}]
        status = frames[-1]
        assert status["event"] == "run_status"
        assert status["data"]["status"] == "failed"
        assert status["data"]["error_code"] == MODEL_REJECTED
    listed = runs.json()["runs"]
    assert [(r["status"], r["error_code"]) for r in listed] == [("failed", MODEL_REJECTED)]
    one = await api.client.get(f"{path}/runs/{listed[0]['id']}", headers=api.auth("mei"))
    assert one.json()["error_code"] == MODEL_REJECTED
    # What the session store holds is what a caller may see, whatever reads it later.
    services = services_of(api, tmp_path)
    try:
        stored = await services.session_service.get_session(
            app_name="planner", user_id="mei", session_id=session
        )
    finally:
        await services.close()
    assert stored is not None
    dumped = json.dumps([e.model_dump(mode="json") for e in stored.events])
    assert _leaks(dumped, base, named) == []
    assert SENTENCE in dumped
    # The operator log keeps the detail.
    logged = [r.getMessage() for r in caplog.records if r.name == "adk_yuxi.host"]
    assert any(base in m and named in m for m in logged), logged


async def test_a_session_that_never_ran_is_followed_to_no_run(served_on: Api) -> None:
    """Not `completed` with no run id: nothing ran, and the stream says so."""
    session = await new_session(served_on, "mei")
    path = f"/v1/agents/planner/sessions/{session}"
    followed = await served_on.client.get(f"{path}/events", headers=served_on.auth("mei"))
    assert followed.status_code == 200
    frames = parse_sse(followed.text)
    assert frames == [
        {
            "event": "run_status",
            "data": {"status": "none", "run_id": None, "invocation_id": None, "error_code": None},
        }
    ]
    listed = await served_on.client.get(f"{path}/runs", headers=served_on.auth("mei"))
    assert listed.json()["runs"] == []
    # Once it ran, the same stream ends with that run's outcome.
    served_on.llm.extend(["hello"])
    ran = await served_on.client.post(
        f"{path}/runs", json={"text": "hi"}, headers=served_on.auth("mei")
    )
    live = parse_sse(ran.text)[-1]["data"]
    again = parse_sse(
        (await served_on.client.get(f"{path}/events", headers=served_on.auth("mei"))).text
    )[-1]["data"]
    assert live["status"] == again["status"] == "completed"
    assert live["run_id"] == again["run_id"] == ran.headers["X-Run-Id"]


async def test_a_run_that_raises_is_internal_error_in_its_stream_and_its_row(
    served_on: Api,
) -> None:
    """An exception inside the run: no event carries it; the stream, the run list and
    the run all say `internal_error`, from the same ledger row."""

    def explode(_: object) -> str:
        raise RuntimeError("secret detail at /srv/models/key.txt")

    served_on.llm.extend([explode])
    session = await new_session(served_on, "mei")
    path = f"/v1/agents/planner/sessions/{session}"
    auth = served_on.auth("mei")
    live = await served_on.client.post(f"{path}/runs", json={"text": "hi"}, headers=auth)
    replay = await served_on.client.get(f"{path}/events", headers=auth)
    runs = await served_on.client.get(f"{path}/runs", headers=auth)
    for body in (live.text, replay.text, runs.text):
        assert "secret" not in body
    outcomes = [parse_sse(live.text)[-1]["data"], parse_sse(replay.text)[-1]["data"]]
    outcomes += runs.json()["runs"]
    assert [(o["status"], o["error_code"]) for o in outcomes] == [("failed", "internal_error")] * 3
