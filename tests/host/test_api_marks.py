"""Improvement marks over HTTP: recorded by real runs, listed newest first; a user sees
their own, an admin everyone's; another user's mark is missing; filters and paging."""

from __future__ import annotations

from typing import Any

from adk_yuxi.access import AccessRepository, Role, User
from adk_yuxi.storage import open_services
from adk_yuxi.testing import call

from ._served import served_on_fixture  # noqa: F401
from .conftest import Api, new_session


async def _mark(api: Api, user: str, reason: str, agent: str = "planner") -> None:
    session = await new_session(api, user, agent)
    api.llm.extend([call("mark_for_improvement", reason=reason), "Noted."])
    response = await api.client.post(
        f"/v1/agents/{agent}/sessions/{session}/runs", json={"text": "go"}, headers=api.auth(user)
    )
    assert response.status_code == 200


async def _marks(api: Api, viewer: str, **params: Any) -> dict[str, Any]:
    response = await api.client.get("/v1/marks", params=params, headers=api.auth(viewer))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_marks_are_the_callers_own_and_all_for_admins(served_on: Api) -> None:
    api = served_on
    await _mark(api, "mei", "mei one")
    await _mark(api, "bo", "bo one")
    await _mark(api, "mei", "mei two")
    await _mark(api, "root", "root secret", agent="secret")

    mine = await _marks(api, "mei")
    assert [m["reason"] for m in mine["marks"]] == ["mei two", "mei one"]
    assert {m["user_id"] for m in mine["marks"]} == {"mei"}
    assert mine["marks"][0]["agent_id"] == "planner" and mine["next_page_token"] is None
    assert (await _marks(api, "mei", user="mei"))["marks"] == mine["marks"]
    # A non-admin naming anyone else is refused, whether that user exists or not.
    for other in ["bo", "ghost"]:
        refused = await api.client.get("/v1/marks", params={"user": other}, headers=api.auth("mei"))
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
        assert "bo one" not in refused.text

    everyone = await _marks(api, "root")
    assert [m["reason"] for m in everyone["marks"]] == [
        "root secret",
        "mei two",
        "bo one",
        "mei one",
    ]
    assert [m["reason"] for m in (await _marks(api, "root", user="bo"))["marks"]] == ["bo one"]
    assert [m["reason"] for m in (await _marks(api, "root", agent="secret"))["marks"]] == [
        "root secret"
    ]
    assert (await _marks(api, "root", agent="nobody"))["marks"] == []

    # Time window: since inclusive, until exclusive.
    at = {m["reason"]: m["created_at"] for m in everyone["marks"]}
    window = await _marks(api, "root", since=at["bo one"], until=at["root secret"])
    assert [m["reason"] for m in window["marks"]] == ["mei two", "bo one"]
    backwards = await api.client.get(
        "/v1/marks", params={"since": 10, "until": 5}, headers=api.auth("root")
    )
    assert backwards.status_code == 422

    # Paging walks every mark once.
    seen: list[str] = []
    token = None
    while True:
        params: dict[str, Any] = {"page_size": 1}
        if token:
            params["page_token"] = token
        page = await _marks(api, "root", **params)
        seen += [m["reason"] for m in page["marks"]]
        token = page["next_page_token"]
        if token is None:
            break
    assert seen == [m["reason"] for m in everyone["marks"]]


async def test_one_mark_by_id_and_another_users_is_missing(served_on: Api) -> None:
    api = served_on
    await _mark(api, "mei", "mei only")
    (mark,) = (await _marks(api, "mei"))["marks"]
    own = await api.client.get(f"/v1/marks/{mark['id']}", headers=api.auth("mei"))
    assert own.status_code == 200 and own.json() == mark
    theirs = await api.client.get(f"/v1/marks/{mark['id']}", headers=api.auth("bo"))
    absent = await api.client.get("/v1/marks/mark-nope", headers=api.auth("bo"))
    assert theirs.status_code == absent.status_code == 404
    assert theirs.json() == absent.json()
    assert "mei only" not in theirs.text
    admin = await api.client.get(f"/v1/marks/{mark['id']}", headers=api.auth("root"))
    assert admin.json() == mark
    assert (await _marks(api, "bo"))["marks"] == []
    assert (await api.client.get("/v1/marks")).status_code == 401


async def test_bad_mark_queries_are_422_without_echo(served_on: Api) -> None:
    api = served_on
    for params in [
        {"page_token": "SENTINEL"},
        {"page_token": "WzEsMiwzXQ"},  # a well-formed token of another listing's shape
        {"page_size": 0},
        {"page_size": 101},
        {"since": "SENTINEL"},
        {"until": -1},
    ]:
        response = await api.client.get("/v1/marks", params=params, headers=api.auth("root"))
        assert response.status_code == 422, (params, response.text)
        assert "SENTINEL" not in response.text and "WzEsMiwzXQ" not in response.text
        assert response.json()["error"]["code"] == "invalid_request"


async def test_a_demoted_admin_sees_only_their_own_at_once(served_on: Api) -> None:
    api = served_on
    await _mark(api, "mei", "mei one")
    await _mark(api, "root", "root one")
    assert len((await _marks(api, "root"))["marks"]) == 2
    services = open_services(api.url)
    try:
        await AccessRepository(services.store).save_user(User(id="root", role=Role.USER))
    finally:
        await services.close()
    assert [m["reason"] for m in (await _marks(api, "root"))["marks"]] == ["root one"]
    refused = await api.client.get("/v1/marks", params={"user": "mei"}, headers=api.auth("root"))
    assert refused.status_code == 403
    (mei,) = (await _marks(api, "mei"))["marks"]
    hidden = await api.client.get(f"/v1/marks/{mei['id']}", headers=api.auth("root"))
    assert hidden.status_code == 404
