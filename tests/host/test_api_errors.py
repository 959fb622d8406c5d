"""The error audit over real HTTP: bad tokens, odd ids, bad JSON, wrong content types,
unknown fields, oversize bodies (declared and chunked) and headers, a server failure.
Every answer is JSON with a stable code, echoes nothing, and names no path, SQL or
trace."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, cast

import pytest
from google.genai import types

from tests.sql_backends import relayed_pg_url

from ._served import open_served, served_fixture, services_of  # noqa: F401
from .conftest import Api, new_session

SENTINEL = "SENTINEL"
LEAKS = ["Traceback", "/tmp", "/work", "site-packages", "SELECT", "sqlite", "asyncpg", SENTINEL]
JSON = {"content-type": "application/json"}


def _clean(status: int, body: bytes, code: str | None = None) -> dict[str, Any]:
    text = body.decode("utf-8", "replace")
    for leak in LEAKS:
        assert leak.lower() not in text.lower(), (leak, text)
    error: dict[str, Any] = json.loads(text)["error"]
    assert error["message"] and (code is None or error["code"] == code), (status, text)
    return error


async def _raw(api: Api, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """One request written byte for byte on a fresh connection."""
    host, port = api.client.base_url.host, api.client.base_url.port
    assert port is not None
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(data)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v for k, _, v in (h.partition(": ") for h in lines[1:] if h)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return int(lines[0].split()[1]), headers, body
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "code"),
    [
        ("GET", "/v1/agents/planner/sessions", {"params": {"page_token": SENTINEL}}, 422, None),
        ("GET", "/v1/agents/planner/sessions", {"params": {"page_token": "WzFd"}}, 422, None),
        ("GET", "/v1/marks", {"params": {"page_token": SENTINEL}}, 422, None),
        ("GET", "/v1/agents/planner/sessions", {"params": {"page_size": "9" * 400}}, 422, None),
        ("GET", "/v1/agents/planner/sessions/%01SENTINEL", {}, 422, "invalid_request"),
        ("GET", "/v1/agents/planner/sessions/" + "S" * 300, {}, 422, "invalid_request"),
        ("GET", "/v1/agents/SENTINEL/sessions", {}, 404, "not_found"),
        ("PUT", "/v1/agents", {}, 405, "method_not_allowed"),
        ("GET", "/v1/SENTINEL", {}, 404, "not_found"),
        (
            "POST",
            "/v1/agents/planner/sessions",
            {"content": b"{SENTINEL", "headers": JSON},
            422,
            None,
        ),
        (
            "POST",
            "/v1/agents/planner/sessions",
            {"content": b"[" * 5000, "headers": JSON},
            422,
            None,
        ),
        (
            "POST",
            "/v1/agents/planner/sessions",
            {"content": b'{"session_id": "\xffSENTINEL"}', "headers": JSON},
            422,
            None,
        ),
        (
            "POST",
            "/v1/agents/planner/sessions",
            {"content": b"session_id=SENTINEL", "headers": {"content-type": "text/plain"}},
            415,
            "unsupported_media_type",
        ),
        (
            "POST",
            "/v1/agents/planner/sessions",
            {"content": b'{"session_id": "SENTINEL"}'},  # JSON, but not said to be
            415,
            "unsupported_media_type",
        ),
        (
            "POST",
            "/v1/agents/planner/sessions",
            {
                "content": b"session_id=x",
                "headers": {"content-type": "application/x-www-form-urlencoded"},
            },
            415,
            "unsupported_media_type",
        ),
        ("POST", "/v1/agents/planner/sessions", {"json": {"extra": SENTINEL}}, 422, None),
        ("POST", "/v1/agents/planner/sessions", {"json": {"session_id": SENTINEL * 40}}, 422, None),
        ("POST", "/v1/agents/planner/sessions", {"json": [SENTINEL]}, 422, None),
        (
            "POST",
            "/v1/agents/planner/sessions",
            {"headers": {"Idempotency-Key": SENTINEL + " x"}},
            422,
            None,
        ),
        ("GET", "/v1/marks", {"params": {"since": "nan"}}, 422, None),
        ("GET", "/v1/marks", {"params": {"user": "bo"}}, 403, "forbidden"),
    ],
)
async def test_bad_requests_get_clean_json_errors(
    served: Api, method: str, path: str, kwargs: dict[str, Any], status: int, code: str | None
) -> None:
    headers = {**served.auth("mei"), **kwargs.pop("headers", {})}
    response = await served.client.request(method, path, headers=headers, **kwargs)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = _clean(status, response.content, code)
    if status == 422 and "problems" in error:
        assert all(set(p) == {"loc", "msg"} for p in error["problems"])


async def test_oversize_headers_are_431(served: Api) -> None:
    ok = await served.client.get("/v1/agents", headers={**served.auth("mei"), "X-Pad": "a" * 8000})
    assert ok.status_code == 200
    for headers in [
        {"X-Pad": "a" * 20_000},
        {f"X-Pad-{i}": "a" * 1000 for i in range(20)},
        {"Authorization": "Bearer " + "a" * 20_000},
    ]:
        response = await served.client.get("/v1/agents", headers={**served.auth("mei"), **headers})
        assert response.status_code == 431
        _clean(431, response.content, "headers_too_large")
    long_query = await served.client.get("/healthz", params={"q": "a" * 20_000})
    assert long_query.status_code == 431


async def test_oversize_bodies_are_413_declared_or_chunked(served: Api) -> None:
    session = await new_session(served, "mei")
    token = served.tokens["mei"]
    path = f"/v1/agents/planner/sessions/{session}/runs"
    start = f"POST {path} HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer {token}\r\n"
    declared = (
        start + "Content-Type: application/json\r\nContent-Length: 999999999\r\n\r\n"
    ).encode()
    status, _, body = await _raw(served, declared)
    assert status == 413
    _clean(status, body, "too_large")
    chunk = b"x" * 8192
    chunked = (start + "Transfer-Encoding: chunked\r\n\r\n").encode()
    chunked += b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(10)) + b"0\r\n\r\n"
    status, _, body = await _raw(served, chunked)
    assert status == 413
    _clean(status, body, "too_large")
    # A client still sending its body reads the 413, not a reset connection.
    for _ in range(20):
        sent = await served.client.post(path, content=b"x" * 200_000, headers=served.auth("mei"))
        assert sent.status_code == 413
    assert served.llm.requests == []


async def test_a_server_failure_is_a_bare_500(served: Api, tmp_path: Path) -> None:
    session = await new_session(served, "mei")
    services = services_of(served, tmp_path)
    try:
        await services.artifact_service.save_artifact(
            app_name="planner",
            user_id="mei",
            filename="lost.txt",
            artifact=types.Part(text="soon gone"),
            session_id=session,
        )
    finally:
        await services.close()
    for blob in (tmp_path / "blobs").glob("??/??/*"):
        blob.unlink()  # the blob directory no longer matches the database
    response = await served.client.get(
        f"/v1/agents/planner/sessions/{session}/artifacts/lost.txt", headers=served.auth("mei")
    )
    assert response.status_code == 500
    error = _clean(500, response.content, "internal_error")
    assert "blob" not in error["message"] and "lost.txt" not in response.text


async def test_a_lost_database_is_503_with_retry_after_and_the_api_recovers(
    pg_schema: str, tmp_path: Path
) -> None:
    """The database cut off (every connection, and new ones refused): an authenticated
    request is 503 `unavailable` with `Retry-After`, naming neither host nor driver; once
    the database is back, the API answers again without a restart."""
    link, url = await relayed_pg_url(pg_schema)
    opened = cast(AsyncGenerator[Api, None], open_served(url, tmp_path))
    api = await anext(opened)
    try:
        assert (await api.client.get("/v1/agents", headers=api.auth("mei"))).status_code == 200
        await link.stop()
        response = await api.client.get("/v1/agents", headers=api.auth("mei"))
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "1"
        _clean(503, response.content, "unavailable")
        assert str(link.port) not in response.text and "127.0.0.1" not in response.text
        assert (await api.client.get("/healthz")).status_code == 200  # the process is up
        await link.start()
        await asyncio.sleep(2.2)  # idle past the ping threshold: dead connections are replaced
        assert (await api.client.get("/v1/agents", headers=api.auth("mei"))).status_code == 200
    finally:
        await opened.aclose()
        await link.stop()
