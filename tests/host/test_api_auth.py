"""Who may call what: keys (missing, malformed, revoked, expired, disabled user), admin
issuing, and another user's resources answered as missing."""

from __future__ import annotations

import asyncio

import pytest

from adk_yuxi.access import AccessRepository, Role, User
from adk_yuxi.storage import open_services

from .conftest import Api, new_session

ROUTES = [
    ("GET", "/v1/agents"),
    ("GET", "/v1/agents/planner/sessions"),
    ("POST", "/v1/agents/planner/sessions"),
    ("GET", "/v1/agents/planner/sessions/s1"),
    ("DELETE", "/v1/agents/planner/sessions/s1"),
    ("POST", "/v1/agents/planner/sessions/s1/runs"),
    ("GET", "/v1/agents/planner/sessions/s1/waitpoints"),
    ("POST", "/v1/agents/planner/sessions/s1/waitpoints/w1/answer"),
    ("POST", "/v1/users/me/api-keys"),
    ("GET", "/v1/users/me/api-keys"),
    ("DELETE", "/v1/api-keys/k1"),
]


async def test_health_answers_anonymously(api: Api) -> None:
    response = await api.client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.parametrize(
    "header",
    [None, "Bearer", "Basic bWVpOnB3", "Bearer yxk_not-a-real-key", "Bearer \x00", "yxk_abc"],
)
async def test_every_route_refuses_without_a_live_key(api: Api, header: str | None) -> None:
    headers = {} if header is None else {"Authorization": header}
    for method, path in ROUTES:
        response = await api.client.request(method, path, headers=headers, json={})
        assert response.status_code == 401, (method, path, response.text)
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "unauthenticated"


async def test_revoked_key_is_refused_at_once(api: Api) -> None:
    issued = await api.client.post("/v1/users/me/api-keys", headers=api.auth("mei"), json={})
    assert issued.status_code == 201
    token, key_id = issued.json()["token"], issued.json()["key"]["id"]
    mine = {"Authorization": f"Bearer {token}"}
    assert (await api.client.get("/v1/agents", headers=mine)).status_code == 200
    revoked = await api.client.delete(f"/v1/api-keys/{key_id}", headers=api.auth("mei"))
    assert revoked.status_code == 200 and revoked.json()["key"]["revoked_at"] is not None
    assert (await api.client.get("/v1/agents", headers=mine)).status_code == 401
    # The user's other key still works.
    assert (await api.client.get("/v1/agents", headers=api.auth("mei"))).status_code == 200


async def test_expired_key_is_refused(api: Api) -> None:
    issued = await api.client.post(
        "/v1/users/me/api-keys", headers=api.auth("mei"), json={"ttl_seconds": 0.05}
    )
    assert issued.status_code == 201
    headers = {"Authorization": f"Bearer {issued.json()['token']}"}
    await asyncio.sleep(0.1)
    assert (await api.client.get("/v1/agents", headers=headers)).status_code == 401


async def test_disabled_user_keys_are_refused(api: Api) -> None:
    services = open_services(api.url)
    try:
        await AccessRepository(services.store).set_user_active("mei", False)
    finally:
        await services.close()
    assert (await api.client.get("/v1/agents", headers=api.auth("mei"))).status_code == 401


async def test_tokens_are_stored_hashed(api: Api) -> None:
    services = open_services(api.url)
    try:
        async with services.store.read() as tx:
            rows = await tx.fetchall("SELECT token_hash FROM yx_api_keys")
    finally:
        await services.close()
    stored = {str(r[0]) for r in rows}
    assert len(stored) == 3
    assert not any(token in stored for token in api.tokens.values())
    assert all(len(h) == 64 for h in stored)


async def test_only_admins_issue_keys_for_others(api: Api) -> None:
    refused = await api.client.post("/v1/users/bo/api-keys", headers=api.auth("mei"), json={})
    assert refused.status_code == 403
    assert (
        await api.client.get("/v1/users/bo/api-keys", headers=api.auth("mei"))
    ).status_code == 403
    issued = await api.client.post(
        "/v1/users/bo/api-keys", headers=api.auth("root"), json={"label": "ci"}
    )
    assert issued.status_code == 201
    body = issued.json()
    assert body["key"]["user_id"] == "bo" and body["key"]["created_by"] == "root"
    bo = {"Authorization": f"Bearer {body['token']}"}
    assert (await api.client.get("/v1/agents", headers=bo)).status_code == 200
    listed = await api.client.get("/v1/users/me/api-keys", headers=bo)
    assert len(listed.json()["keys"]) == 2 and "token" not in listed.text
    # mei cannot revoke bo's key: it is not hers, so it does not exist for her.
    other = await api.client.delete(f"/v1/api-keys/{body['key']['id']}", headers=api.auth("mei"))
    assert other.status_code == 404
    assert (await api.client.get("/v1/agents", headers=bo)).status_code == 200
    unknown = await api.client.post("/v1/users/ghost/api-keys", headers=api.auth("root"), json={})
    assert unknown.status_code == 403


async def test_an_admin_cannot_act_for_the_superadmin(api: Api) -> None:
    services = open_services(api.url)
    try:
        await AccessRepository(services.store).save_user(User(id="mei", role=Role.ADMIN))
    finally:
        await services.close()
    mei = api.auth("mei")
    assert (
        await api.client.post("/v1/users/root/api-keys", headers=mei, json={})
    ).status_code == 403
    assert (await api.client.get("/v1/users/root/api-keys", headers=mei)).status_code == 403
    root_keys = await api.client.get("/v1/users/me/api-keys", headers=api.auth("root"))
    root_key = root_keys.json()["keys"][0]["id"]
    assert (await api.client.delete(f"/v1/api-keys/{root_key}", headers=mei)).status_code == 404
    assert (await api.client.get("/v1/agents", headers=api.auth("root"))).status_code == 200
    # As an admin she still manages a user's keys.
    assert (await api.client.post("/v1/users/bo/api-keys", headers=mei, json={})).status_code == 201


async def test_agents_listed_are_the_usable_ones(api: Api) -> None:
    mei = await api.client.get("/v1/agents", headers=api.auth("mei"))
    assert [a["id"] for a in mei.json()["agents"]] == ["planner"]
    root = await api.client.get("/v1/agents", headers=api.auth("root"))
    assert sorted(a["id"] for a in root.json()["agents"]) == ["planner", "secret"]
    hidden = await api.client.get("/v1/agents/secret/sessions", headers=api.auth("mei"))
    assert hidden.status_code == 404


async def test_another_users_session_is_missing(api: Api) -> None:
    session = await new_session(api, "mei")
    base = f"/v1/agents/planner/sessions/{session}"
    for method, path, body in [
        ("GET", base, None),
        ("DELETE", base, None),
        ("POST", f"{base}/runs", {"text": "hi"}),
        ("GET", f"{base}/waitpoints", None),
        ("POST", f"{base}/waitpoints/w1/answer", {"answers": {}}),
    ]:
        response = await api.client.request(method, path, headers=api.auth("bo"), json=body)
        assert response.status_code == 404, (method, path, response.text)
    assert api.llm.requests == []
    assert (await api.client.get(base, headers=api.auth("mei"))).status_code == 200
    listed = await api.client.get("/v1/agents/planner/sessions", headers=api.auth("bo"))
    assert listed.json()["sessions"] == []
