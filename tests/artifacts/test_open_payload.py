"""`SqlArtifactService.open_payload`: a version's bytes as an open file, on both
backends; the same answer as `load_artifact` for every kind of version."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_yuxi.artifacts import ArtifactNotStoredError, SqlArtifactService
from adk_yuxi.storage import YuxiServices

KW: dict[str, Any] = {"app_name": "chat", "user_id": "u1", "session_id": "s1"}


@pytest.fixture
def artifacts(services: YuxiServices) -> SqlArtifactService:
    return services.artifact_service


async def _read(artifacts: SqlArtifactService, **kw: Any) -> tuple[bytes, str, int] | None:
    payload = await artifacts.open_payload(**{**KW, **kw})
    if payload is None:
        return None
    return b"".join(payload.chunks(chunk_size=3)), payload.mime_type, payload.version


async def test_every_kind_of_version(artifacts: SqlArtifactService) -> None:
    pdf = types.Part.from_bytes(data=b"%PDF-1", mime_type="application/pdf")
    await artifacts.save_artifact(filename="a.pdf", artifact=pdf, **KW)
    await artifacts.save_artifact(filename="a.pdf", artifact=types.Part(text="文本"), **KW)
    assert await _read(artifacts, filename="a.pdf") == (
        "文本".encode(),
        "text/plain; charset=utf-8",
        1,
    )
    assert await _read(artifacts, filename="a.pdf", version=0) == (b"%PDF-1", "application/pdf", 0)
    assert await _read(artifacts, filename="a.pdf", version=2) is None
    assert await _read(artifacts, filename="nope") is None
    # A reference is followed to its target's bytes.
    uri = "artifact://apps/chat/users/u1/sessions/s1/artifacts/a.pdf/versions/0"
    ref = types.Part(file_data=types.FileData(file_uri=uri, mime_type="application/pdf"))
    await artifacts.save_artifact(filename="ref.pdf", artifact=ref, **KW)
    assert await _read(artifacts, filename="ref.pdf") == (b"%PDF-1", "application/pdf", 0)
    # ADK's deletion marker reads as absent, as load_artifact says.
    marker = types.Part(inline_data=types.Blob(mime_type="application/octet-stream", data=b""))
    await artifacts.save_artifact(filename="gone", artifact=marker, **KW)
    assert await artifacts.load_artifact(filename="gone", **KW) is None
    assert await _read(artifacts, filename="gone") is None
    # A file outside the store has no bytes here.
    remote = types.Part(file_data=types.FileData(file_uri="gs://b/x", mime_type="text/csv"))
    await artifacts.save_artifact(filename="remote", artifact=remote, **KW)
    with pytest.raises(ArtifactNotStoredError):
        await artifacts.open_payload(filename="remote", **KW)


async def test_an_open_payload_outlives_a_delete(artifacts: SqlArtifactService) -> None:
    data = bytes(range(256)) * 4096
    part = types.Part.from_bytes(data=data, mime_type="application/zip")
    await artifacts.save_artifact(filename="big.zip", artifact=part, **KW)
    payload = await artifacts.open_payload(filename="big.zip", **KW)
    assert payload is not None and payload.size == len(data)
    await artifacts.delete_artifact(filename="big.zip", **KW)
    assert b"".join(payload.chunks()) == data
    assert payload.file.closed
    assert await artifacts.open_payload(filename="big.zip", **KW) is None
