"""The OpenAPI document matches what the API does: every answer a real call gets is a
status its operation documents, with a body that validates against the documented
schema (JSON), or the documented stream / download type; every operation is called."""

from __future__ import annotations

import re
from typing import Any

import httpx
import jsonschema
from google.genai import types

from adk_yuxi.testing import call

from ._served import served_fixture, services_of  # noqa: F401
from .conftest import Api, parse_sse

QUESTIONS = [{"question": "Which day?", "options": [{"label": "Friday", "value": "fri"}]}]
FILL = {
    "agent_id": "planner",
    "session_id": "s-missing",
    "waitpoint_id": "w-missing",
    "name": "x.txt",
    "mark_id": "m-missing",
    "key_id": "k-missing",
    "user_id": "me",
    "run_id": "r-missing",
}
BODIES = {"runs": {"text": "hi"}, "answer": {"answers": {}}}


class Checker:
    """Matches each response to its operation and checks it against the document."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.called: set[tuple[str, str]] = set()
        self.operations = [
            (method.upper(), path, op)
            for path, ops in doc["paths"].items()
            for method, op in ops.items()
        ]
        # A literal path segment beats a parameter; `{name}` takes the rest of the path.
        self.operations.sort(key=lambda o: (o[1].count("{"), -len(o[1])))

    def _match(self, method: str, path: str) -> tuple[str, dict[str, Any]]:
        for op_method, template, op in self.operations:
            pattern = re.sub(r"\\\{name\\\}", ".+", re.escape(template))
            pattern = re.sub(r"\\\{\w+\\\}", "[^/]+", pattern)
            if op_method == method and re.fullmatch(pattern, path):
                return template, op
        raise AssertionError(f"{method} {path} is not in the document")

    def check(self, response: httpx.Response) -> httpx.Response:
        method, path = response.request.method, response.request.url.path
        template, op = self._match(method, path)
        self.called.add((method, template))
        status = str(response.status_code)
        assert status in op["responses"], (method, template, status, response.text)
        documented = op["responses"][status].get("content", {})
        kind = response.headers.get("content-type", "").split(";")[0]
        if kind == "application/json":
            schema = documented["application/json"]["schema"]
            jsonschema.validate(response.json(), {**schema, "components": self.doc["components"]})
        elif kind == "text/event-stream":
            assert "text/event-stream" in documented, (method, template)
            assert parse_sse(response.text)[-1]["event"] == "run_status"
        elif response.status_code == 200:
            assert "*/*" in documented, (method, template, kind)
        else:
            assert response.status_code == 204 and not response.content
        return response


def _fill(template: str, **values: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], FILL[m[1]]), template)


def _body(template: str) -> dict[str, Any]:
    return BODIES.get(template.rsplit("/", 1)[-1], {})


async def test_the_document_declares_errors_streams_and_security(served: Api) -> None:
    doc = (await served.client.get("/openapi.json")).json()
    streams = set()
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            responses = op["responses"]
            for status, answer in responses.items():
                if int(status) >= 400:  # 431 and 500 too: every route can meet them
                    assert answer["content"] == {
                        "application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
                    }, (method, path, status)
            if path == "/healthz":
                assert "security" not in op and set(responses) == {"200", "431", "500"}
                continue
            assert op["security"] == [{"apiKey": []}] and "401" in responses, (method, path)
            assert "503" in responses, (method, path)  # every one reads the database
            if "{" in path:  # a named resource that is not the caller's
                assert {"403", "404"} & set(responses), (method, path)
            if "requestBody" in op:
                assert {"413", "422"} <= set(responses), (method, path)
            if any(p["in"] in ("query", "header") for p in op.get("parameters", [])):
                assert "422" in responses, (method, path)
            if "text/event-stream" in responses.get("200", {}).get("content", {}):
                streams.add((method, path))
                assert "run_status" in responses["200"]["description"]
                assert "heartbeat" in responses["200"]["description"]
    base = "/v1/agents/{agent_id}/sessions/{session_id}"
    assert streams == {
        ("post", f"{base}/runs"),
        ("get", f"{base}/events"),
        ("post", f"{base}/waitpoints/{{waitpoint_id}}/answer"),
    }
    assert "HTTPValidationError" not in doc["components"]["schemas"]


async def test_real_answers_match_the_document(served: Api, tmp_path: Any) -> None:
    api = served
    check = Checker((await api.client.get("/openapi.json")).json())
    mei, c = api.auth("mei"), api.client

    # Every operation: no key, an unknown agent, a body too large, a body not JSON, a
    # session that does not exist.
    for method, template, op in check.operations:
        path = _fill(template)
        body = _body(template) if "requestBody" in op else None
        if "security" in op:
            assert check.check(await c.request(method, path, json=body)).status_code == 401
        if "{agent_id}" in template:
            ghost = await c.request(
                method, _fill(template, agent_id="ghost"), json=body, headers=mei
            )
            assert check.check(ghost).status_code == 404
        if "{session_id}" in template:
            missing = await c.request(method, path, json=body, headers=mei)
            assert check.check(missing).status_code == 404
            odd = await c.request(method, _fill(template, session_id="%01"), json=body, headers=mei)
            assert check.check(odd).status_code == 422  # not a storable id
        if "requestBody" in op:
            big = await c.request(method, path, content=b"x" * 70_000, headers=mei)
            assert check.check(big).status_code == 413
            bad = await c.request(
                method, path, content=b"{nope", headers={**mei, "content-type": "application/json"}
            )
            assert check.check(bad).status_code == 422

    # The success path of every operation, and the errors that need state.
    check.check(await c.get("/healthz"))
    assert check.check(await c.get("/healthz", params={"q": "a" * 20_000})).status_code == 431
    check.check(await c.get("/v1/agents", headers=mei))
    issued = check.check(await c.post("/v1/users/me/api-keys", json={"label": "x"}, headers=mei))
    check.check(await c.get("/v1/users/me/api-keys", headers=mei))
    check.check(await c.get("/v1/users/bo/api-keys", headers=mei))  # 403
    check.check(await c.delete(f"/v1/api-keys/{issued.json()['key']['id']}", headers=mei))
    sessions = "/v1/agents/planner/sessions"
    created = check.check(await c.post(sessions, json={"session_id": "s1"}, headers=mei))
    assert created.status_code == 201
    check.check(await c.post(sessions, json={"session_id": "s1"}, headers=mei))  # 409
    check.check(await c.post(sessions, json={"session_id": "a b"}, headers=mei))  # 422
    check.check(await c.get(sessions, headers=mei))
    check.check(await c.get(sessions, params={"page_token": "bad"}, headers=mei))  # 422
    check.check(await c.get(f"{sessions}/s1", headers=mei))
    api.llm.extend(
        [
            call("mark_for_improvement", reason="slow"),
            call("ask_user_question", questions=QUESTIONS),
            "Friday.",
        ]
    )
    run = check.check(await c.post(f"{sessions}/s1/runs", json={"text": "plan"}, headers=mei))
    first_id = next(f["id"] for f in parse_sse(run.text) if f["event"] == "adk_event")
    check.check(await c.get(f"{sessions}/s1/events", headers={**mei, "Last-Event-ID": first_id}))
    check.check(await c.get(f"{sessions}/s1/events", headers={**mei, "Last-Event-ID": "nope"}))
    points = check.check(await c.get(f"{sessions}/s1/waitpoints", headers=mei))
    answer = f"{sessions}/s1/waitpoints/{points.json()['waitpoints'][0]['id']}/answer"
    check.check(await c.post(answer, json={"answers": {"q-1": "sun"}}, headers=mei))  # 422
    check.check(await c.post(answer, json={"answers": {"q-1": "fri"}}, headers=mei))
    check.check(await c.post(answer, json={"answers": {"q-1": "fri"}}, headers=mei))  # 409
    runs = check.check(await c.get(f"{sessions}/s1/runs", headers=mei))
    run_id = runs.json()["runs"][0]["id"]
    check.check(await c.get(f"{sessions}/s1/runs/{run_id}", headers=mei))
    check.check(await c.get(f"{sessions}/s1/runs/r-missing", headers=mei))  # 404
    ended = check.check(await c.post(f"{sessions}/s1/runs/{run_id}/cancel", headers=mei))
    assert ended.status_code == 409
    services = services_of(api, tmp_path)
    try:
        for name, session in [("r.txt", "s1"), ("user:u.txt", None)]:
            await services.artifact_service.save_artifact(
                app_name="planner",
                user_id="mei",
                filename=name,
                artifact=types.Part(text="hi"),
                session_id=session,
            )
    finally:
        await services.close()
    for path in [
        f"{sessions}/s1/artifacts",
        f"{sessions}/s1/artifact-versions/r.txt",
        f"{sessions}/s1/artifacts/r.txt",
        f"{sessions}/s1/artifacts/a//b",  # 422
        "/v1/agents/planner/artifacts",
        "/v1/agents/planner/artifact-versions/user:u.txt",
        "/v1/agents/planner/artifacts/user:u.txt",
        "/v1/agents/planner/artifacts/user:missing",  # 404
    ]:
        check.check(await c.get(path, headers=mei))
    marks = check.check(await c.get("/v1/marks", headers=mei))
    check.check(await c.get("/v1/marks", params={"user": "bo"}, headers=mei))  # 403
    check.check(await c.get("/v1/marks", params={"page_size": 0}, headers=mei))  # 422
    check.check(await c.get(f"/v1/marks/{marks.json()['marks'][0]['id']}", headers=mei))
    check.check(await c.delete(f"{sessions}/s1", headers=mei))

    documented = {(m, t) for m, t, _ in check.operations}
    assert check.called == documented, documented - check.called
