"""The caller's artifacts over real HTTP: files an agent presented, listed, versioned and
downloaded as bytes; `user:` artifacts; another user's artifacts answered as missing;
names checked before they reach the artifact service; large payloads streamed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from google.genai import types

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord
from adk_yuxi.testing import call

from ._served import served_fixture, served_on_fixture, services_of  # noqa: F401
from .conftest import Api, new_session, parse_sse

BASE = "/v1/agents/planner"


async def _present(api: Api, session: str, tmp_path: Path, content: str) -> None:
    """mei's agent presents /workspace/reports/q3.txt holding `content`."""
    folder = tmp_path / "workspaces" / "mei" / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "q3.txt").write_text(content)
    api.llm.extend([call("present_artifacts", filepaths=["/workspace/reports/q3.txt"]), "Here."])
    response = await api.client.post(
        f"{BASE}/sessions/{session}/runs", json={"text": "show me"}, headers=api.auth("mei")
    )
    assert parse_sse(response.text)[-1]["data"]["status"] == "completed", response.text


async def _save(
    api: Api, tmp_path: Path, name: str, part: types.Part, session: str | None = None
) -> int:
    services = services_of(api, tmp_path)
    try:
        return await services.artifact_service.save_artifact(
            app_name="planner", user_id="mei", filename=name, artifact=part, session_id=session
        )
    finally:
        await services.close()


async def test_presented_files_are_listed_versioned_and_downloaded(
    served_on: Api, tmp_path: Path
) -> None:
    api = served_on
    session = await new_session(api, "mei")
    await _present(api, session, tmp_path, "first draft")
    await _present(api, session, tmp_path, "final numbers")
    auth = api.auth("mei")
    listed = await api.client.get(f"{BASE}/sessions/{session}/artifacts", headers=auth)
    assert listed.json() == {"artifacts": [{"name": "reports/q3.txt", "scope": "session"}]}
    versions = await api.client.get(
        f"{BASE}/sessions/{session}/artifact-versions/reports/q3.txt", headers=auth
    )
    assert versions.status_code == 200
    body = versions.json()
    assert body["name"] == "reports/q3.txt"
    assert [v["version"] for v in body["versions"]] == [0, 1]
    assert {v["mime_type"] for v in body["versions"]} == {"text/plain"}

    path = f"{BASE}/sessions/{session}/artifacts/reports/q3.txt"
    latest = await api.client.get(path, headers=auth)
    assert latest.status_code == 200 and latest.content == b"final numbers"
    assert latest.headers["content-type"].startswith("text/plain")
    assert latest.headers["content-length"] == str(len(b"final numbers"))
    assert latest.headers["content-disposition"].startswith('attachment; filename="q3.txt"')
    assert latest.headers["x-artifact-version"] == "1"
    assert latest.headers["etag"] == f'"{hashlib.sha256(b"final numbers").hexdigest()}"'
    assert latest.headers["x-content-type-options"] == "nosniff"
    first = await api.client.get(path, params={"version": 0}, headers=auth)
    assert first.content == b"first draft" and first.headers["x-artifact-version"] == "0"
    unknown = await api.client.get(path, params={"version": 7}, headers=auth)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    negative = await api.client.get(path, params={"version": -1}, headers=auth)
    assert negative.status_code == 422
    missing = await api.client.get(f"{BASE}/sessions/{session}/artifacts/nope.txt", headers=auth)
    assert missing.status_code == 404
    no_versions = await api.client.get(
        f"{BASE}/sessions/{session}/artifact-versions/nope.txt", headers=auth
    )
    assert no_versions.status_code == 404


async def test_user_scoped_artifacts(served: Api, tmp_path: Path) -> None:
    api = served
    session = await new_session(api, "mei")
    profile = types.Part.from_bytes(data=b'{"tz": "UTC"}', mime_type="application/json")
    await _save(api, tmp_path, "user:profile.json", profile)
    await _save(api, tmp_path, "notes.md", types.Part(text="# notes"), session)
    auth = api.auth("mei")
    in_session = await api.client.get(f"{BASE}/sessions/{session}/artifacts", headers=auth)
    assert in_session.json()["artifacts"] == [
        {"name": "notes.md", "scope": "session"},
        {"name": "user:profile.json", "scope": "user"},
    ]
    users = await api.client.get(f"{BASE}/artifacts", headers=auth)
    assert users.json()["artifacts"] == [{"name": "user:profile.json", "scope": "user"}]
    for path in [
        f"{BASE}/artifacts/user:profile.json",
        f"{BASE}/artifacts/profile.json",
        f"{BASE}/sessions/{session}/artifacts/user:profile.json",
    ]:
        got = await api.client.get(path, headers=auth)
        assert got.status_code == 200, path
        assert got.content == b'{"tz": "UTC"}'
        assert got.headers["content-type"] == "application/json"
        assert 'filename="profile.json"' in got.headers["content-disposition"]
    # A session artifact is not a user artifact.
    assert (await api.client.get(f"{BASE}/artifacts/notes.md", headers=auth)).status_code == 404
    text = await api.client.get(f"{BASE}/sessions/{session}/artifacts/notes.md", headers=auth)
    assert text.content == b"# notes" and text.headers["content-type"].startswith("text/plain")
    versions = await api.client.get(f"{BASE}/artifact-versions/profile.json", headers=auth)
    assert [v["version"] for v in versions.json()["versions"]] == [0]


async def test_another_users_artifacts_are_missing(served: Api, tmp_path: Path) -> None:
    api = served
    session = await new_session(api, "mei")
    bo_session = await new_session(api, "bo")
    await _save(api, tmp_path, "plan.txt", types.Part(text="secret plan"), session)
    await _save(api, tmp_path, "user:keys.txt", types.Part(text="mei's"))
    stranger = f"{BASE}/sessions/no-such-session"
    for mine, missing in [
        (f"{BASE}/sessions/{session}/artifacts", f"{stranger}/artifacts"),
        (f"{BASE}/sessions/{session}/artifacts/plan.txt", f"{stranger}/artifacts/plan.txt"),
        (
            f"{BASE}/sessions/{session}/artifact-versions/plan.txt",
            f"{stranger}/artifact-versions/plan.txt",
        ),
        (f"{BASE}/sessions/{bo_session}/artifacts/plan.txt", None),
        (f"{BASE}/sessions/{bo_session}/artifacts/user:keys.txt", None),
        (f"{BASE}/artifacts/user:keys.txt", None),
        (f"{BASE}/artifact-versions/user:keys.txt", None),
    ]:
        theirs = await api.client.get(mine, headers=api.auth("bo"))
        assert theirs.status_code == 404, (mine, theirs.text)
        assert "secret plan" not in theirs.text and "mei" not in theirs.text
        if missing is not None:
            # Indistinguishable from a session that does not exist at all.
            absent = await api.client.get(missing, headers=api.auth("bo"))
            assert (absent.status_code, absent.json()) == (404, theirs.json())
    assert (await api.client.get(f"{BASE}/artifacts", headers=api.auth("bo"))).json() == {
        "artifacts": []
    }
    # An agent the caller may not use hides its artifacts too; no key is 401.
    hidden = await api.client.get("/v1/agents/secret/artifacts", headers=api.auth("mei"))
    assert hidden.status_code == 404
    anonymous = await api.client.get(f"{BASE}/sessions/{session}/artifacts/plan.txt")
    assert anonymous.status_code == 401
    # mei still gets hers.
    own = await api.client.get(
        f"{BASE}/sessions/{session}/artifacts/plan.txt", headers=api.auth("mei")
    )
    assert own.content == b"secret plan"


@pytest.mark.parametrize(
    "name",
    ["%2E%2E/%2E%2E/etc/passwd", "a//b", "a/%2E/b", "a%5Cb", "x%01y", "user:%2E%2E", "/abs"],
)
async def test_tricky_names_are_refused(served: Api, tmp_path: Path, name: str) -> None:
    api = served
    session = await new_session(api, "mei")
    for path in [
        f"{BASE}/sessions/{session}/artifacts/{name}",
        f"{BASE}/sessions/{session}/artifact-versions/{name}",
        f"{BASE}/artifacts/{name}",
    ]:
        response = await api.client.get(path, headers=api.auth("mei"))
        assert response.status_code == 422, (path, response.text)
        assert response.json()["error"]["code"] == "invalid_name"
        assert "passwd" not in response.text


async def test_headers_are_safe_whatever_the_agent_saved(served: Api, tmp_path: Path) -> None:
    api = served
    session = await new_session(api, "mei")
    html = types.Part.from_bytes(data=b"<script>alert(1)</script>", mime_type="text/html")
    await _save(api, tmp_path, 'out/résumé "final".html', html, session)
    odd = types.Part.from_bytes(data=b"x", mime_type="text/plain\r\nX-Injected: 1")
    await _save(api, tmp_path, "odd.bin", odd, session)
    external = types.Part(
        file_data=types.FileData(file_uri="gs://bucket/report.pdf", mime_type="application/pdf")
    )
    await _save(api, tmp_path, "remote.pdf", external, session)
    loop = f"artifact://apps/planner/users/mei/sessions/{session}/artifacts/loop.txt/versions/0"
    await _save(
        api, tmp_path, "loop.txt", types.Part(file_data=types.FileData(file_uri=loop)), session
    )
    auth = api.auth("mei")
    page = await api.client.get(
        f'{BASE}/sessions/{session}/artifacts/out/résumé "final".html', headers=auth
    )
    assert page.status_code == 200
    assert page.headers["content-disposition"] == (
        'attachment; filename="r_sum___final_.html"; '
        "filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.html"
    )
    assert page.headers["content-security-policy"] == "sandbox"
    assert page.headers["x-content-type-options"] == "nosniff"
    bad_type = await api.client.get(f"{BASE}/sessions/{session}/artifacts/odd.bin", headers=auth)
    assert bad_type.headers["content-type"] == "application/octet-stream"
    assert "x-injected" not in bad_type.headers
    remote = await api.client.get(f"{BASE}/sessions/{session}/artifacts/remote.pdf", headers=auth)
    assert remote.status_code == 404 and "gs://" not in remote.text
    looped = await api.client.get(f"{BASE}/sessions/{session}/artifacts/loop.txt", headers=auth)
    assert looped.status_code == 404 and "artifact://" not in looped.text
    listed = await api.client.get(
        f"{BASE}/sessions/{session}/artifact-versions/remote.pdf", headers=auth
    )
    assert listed.json()["versions"][0]["mime_type"] == "application/pdf"


async def test_a_large_download_is_streamed_and_survives_a_delete(
    served: Api, tmp_path: Path
) -> None:
    api = served
    session = await new_session(api, "mei")
    data = os.urandom(12 * 1024 * 1024)
    await _save(
        api,
        tmp_path,
        "big.bin",
        types.Part.from_bytes(data=data, mime_type="application/zip"),
        session,
    )
    received = bytearray()
    path = f"{BASE}/sessions/{session}/artifacts/big.bin"
    async with api.client.stream("GET", path, headers=api.auth("mei")) as response:
        assert response.status_code == 200
        assert response.headers["content-length"] == str(len(data))
        assert response.headers["etag"] == f'"{hashlib.sha256(data).hexdigest()}"'
        chunks = response.aiter_bytes()
        received += await chunks.__anext__()
        # The artifact is deleted (and its payload file removed) mid-download.
        services = services_of(api, tmp_path)
        try:
            await services.artifact_service.delete_artifact(
                app_name="planner", user_id="mei", filename="big.bin", session_id=session
            )
        finally:
            await services.close()
        async for chunk in chunks:
            received += chunk
    assert bytes(received) == data
    assert not list((tmp_path / "blobs").glob("??/??/*"))  # the file is gone from the store
    gone = await api.client.get(path, headers=api.auth("mei"))
    assert gone.status_code == 404


async def test_revoked_rights_hide_artifacts_at_once(served: Api, tmp_path: Path) -> None:
    api = served
    session = await new_session(api, "mei")
    await _save(api, tmp_path, "plan.txt", types.Part(text="plan"), session)
    path = f"{BASE}/sessions/{session}/artifacts/plan.txt"
    assert (await api.client.get(path, headers=api.auth("mei"))).status_code == 200
    services = services_of(api, tmp_path)
    try:  # the agent is no longer shared with mei
        await AccessRepository(services.store).save_resource(
            ResourceRecord(kind=ResourceKind.AGENT, id="planner", creator_id="root")
        )
    finally:
        await services.close()
    for route in [path, f"{BASE}/sessions/{session}/artifacts", f"{BASE}/artifacts"]:
        assert (await api.client.get(route, headers=api.auth("mei"))).status_code == 404
    services = services_of(api, tmp_path)
    try:  # and then her account is disabled
        await AccessRepository(services.store).set_user_active("mei", False)
    finally:
        await services.close()
    assert (await api.client.get(path, headers=api.auth("mei"))).status_code == 401
