"""A host API run is one trace under the request's span: the route template, status and
run id on the request, and the run's decisions, ledger claim and waiting point under it
(the ASGI app over httpx's ASGI transport, a real SQLite database). FastAPI makes the
request spans (scope `fastapi`); the host adds the run id."""

from __future__ import annotations

from adk_yuxi.testing import call
from tests.host.conftest import Api, api, new_session, run

from .conftest import Spans

__all__ = ["api"]  # the fixture, imported for pytest

QUESTIONS = [{"question": "Which day?", "options": [{"label": "Friday", "value": "fri"}]}]
RUNS = "/v1/agents/{agent_id}/sessions/{session_id}/runs"


async def test_a_host_run_is_one_trace_under_its_request(api: Api, spans: Spans) -> None:
    api.llm.extend(
        [
            call("drop_everything"),  # no such tool for this user: refused
            call("ask_user_question", questions=QUESTIONS),
            "Friday it is.",
        ]
    )
    session = await new_session(api, "mei")
    frames = await run(api, "mei", session, "plan the launch")
    status = frames[-1]["data"]
    assert status["status"] == "waiting"

    request = spans.one("POST " + RUNS, http__route=RUNS)
    attributes = dict(request.attributes or {})
    assert attributes["http.route"] == RUNS
    assert attributes["http.request.method"] == "POST"
    assert attributes["http.response.status_code"] == 200
    assert attributes["yuxi.run.id"] == status["run_id"]
    assert not any("plan the launch" in str(v) for v in attributes.values())
    trace_id = request.context.trace_id

    refused = spans.one("yuxi.authorize tool", gen_ai__tool__name="drop_everything")
    assert refused.attributes is not None
    assert refused.attributes["yuxi.authz.rule"] == "tool_not_available"
    claim = spans.one("yuxi.ledger.claim")
    assert claim.attributes is not None and claim.attributes["yuxi.run.id"] == status["run_id"]
    assert claim.attributes["db.system.name"] == "sqlite"
    created = spans.one("yuxi.waitpoint.create")
    assert created.attributes is not None and created.attributes["yuxi.waitpoint.questions"] == 1
    closed = spans.one("yuxi.ledger.close", yuxi__ledger__outcome="closed")
    assert closed.attributes is not None and closed.attributes["yuxi.run.status"] == "waiting"
    for span in (refused, claim, created, closed):
        assert span.context.trace_id == trace_id
        assert request.name in spans.ancestors(span)
    assert all(s.context.trace_id == trace_id for s in spans.named("yuxi.authorize"))

    session_spans = spans.named("POST /v1/agents/{agent_id}/sessions")
    assert session_spans and session_spans[0].context.trace_id != trace_id  # its own request

    point = created.attributes["yuxi.waitpoint.id"]
    answer = f"/v1/agents/planner/sessions/{session}/waitpoints/{point}/answer"
    answered = await api.client.post(
        answer, json={"answers": {"q-1": "fri"}}, headers=api.auth("mei")
    )
    assert answered.status_code == 200
    done = spans.one("yuxi.waitpoint.answer")
    assert done.attributes is not None and done.attributes["yuxi.waitpoint.status"] == "answered"
    assert "Friday" not in str(done.attributes) and "fri" not in str(done.attributes)
    route = "/v1/agents/{agent_id}/sessions/{session_id}/waitpoints/{waitpoint_id}/answer"
    answer_request = spans.one("POST " + route, http__route=route)
    assert answer_request.attributes is not None
    assert answer_request.attributes["yuxi.run.id"] == status["run_id"]
    assert answer_request.name in spans.ancestors(done)


async def test_a_refused_request_has_its_status(api: Api, spans: Spans) -> None:
    response = await api.client.get("/v1/agents/planner/sessions", headers={"Authorization": "x"})
    assert response.status_code == 401
    route = "/v1/agents/{agent_id}/sessions"
    request = spans.one("GET " + route, http__route=route)
    assert request.attributes is not None
    assert request.attributes["http.response.status_code"] == 401
    assert "x" not in [str(v) for v in request.attributes.values()]
