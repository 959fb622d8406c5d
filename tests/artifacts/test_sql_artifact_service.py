"""Behaviour of SqlArtifactService against ADK's artifact contract, on both backends."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types

from adk_yuxi.artifacts import ArtifactTooLargeError, SqlArtifactService
from adk_yuxi.storage import YuxiServices

APP = "chat"


def blob(data: bytes, mime: str = "application/pdf") -> types.Part:
    return types.Part(inline_data=types.Blob(mime_type=mime, data=data))


def blob_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and ".tmp" not in p.parts]


@pytest.fixture
def artifacts(services: YuxiServices) -> SqlArtifactService:
    return services.artifact_service


async def test_versions_metadata_and_loading(artifacts: SqlArtifactService) -> None:
    kw = {"app_name": APP, "user_id": "u1", "session_id": "s1", "filename": "report.pdf"}
    assert await artifacts.save_artifact(artifact=blob(b"v0"), custom_metadata={"k": 1}, **kw) == 0
    assert await artifacts.save_artifact(artifact=blob(b"v1"), **kw) == 1
    assert await artifacts.save_artifact(artifact=types.Part(text="文本 v2"), **kw) == 2
    assert await artifacts.list_versions(**kw) == [0, 1, 2]
    assert await artifacts.load_artifact(**kw) == types.Part(text="文本 v2")
    assert await artifacts.load_artifact(version=0, **kw) == blob(b"v0")
    assert await artifacts.load_artifact(version=7, **kw) is None
    first = await artifacts.get_artifact_version(version=0, **kw)
    assert first is not None
    assert first.custom_metadata == {"k": 1} and first.mime_type == "application/pdf"
    assert first.canonical_uri.endswith("/sessions/s1/artifacts/report.pdf/versions/0")
    latest = await artifacts.get_artifact_version(**kw)
    assert latest is not None and latest.version == 2 and latest.mime_type == "text/plain"
    assert [v.version for v in await artifacts.list_artifact_versions(**kw)] == [0, 1, 2]
    missing = {**kw, "filename": "nope"}
    assert await artifacts.load_artifact(**missing) is None
    assert await artifacts.get_artifact_version(**missing) is None
    assert await artifacts.list_versions(**missing) == []


async def test_user_scoped_names(artifacts: SqlArtifactService) -> None:
    await artifacts.save_artifact(
        app_name=APP,
        user_id="u1",
        session_id="s1",
        filename="user:profile.png",
        artifact=blob(b"p", "image/png"),
    )
    await artifacts.save_artifact(
        app_name=APP, user_id="u1", filename="notes.txt", artifact=types.Part(text="n")
    )
    await artifacts.save_artifact(
        app_name=APP,
        user_id="u1",
        session_id="s1",
        filename="only-s1.txt",
        artifact=types.Part(text="x"),
    )
    keys_s2 = await artifacts.list_artifact_keys(app_name=APP, user_id="u1", session_id="s2")
    assert keys_s2 == ["user:notes.txt", "user:profile.png"]
    keys_s1 = await artifacts.list_artifact_keys(app_name=APP, user_id="u1", session_id="s1")
    assert keys_s1 == ["only-s1.txt", "user:notes.txt", "user:profile.png"]
    assert await artifacts.list_artifact_keys(app_name=APP, user_id="u1") == keys_s2
    assert await artifacts.list_artifact_keys(app_name=APP, user_id="u2") == []
    # Listed names load as written, from any session or none.
    for key in keys_s2:
        assert (
            await artifacts.load_artifact(app_name=APP, user_id="u1", session_id="s2", filename=key)
            is not None
        )
    assert await artifacts.load_artifact(
        app_name=APP, user_id="u1", filename="profile.png"
    ) == blob(b"p", "image/png")


async def test_delete_removes_versions_and_unshared_payloads(
    artifacts: SqlArtifactService, tmp_path: Path
) -> None:
    base = {"app_name": APP, "user_id": "u1", "session_id": "s1"}
    await artifacts.save_artifact(filename="a", artifact=blob(b"shared"), **base)
    await artifacts.save_artifact(filename="a", artifact=blob(b"only-a"), **base)
    await artifacts.save_artifact(filename="b", artifact=blob(b"shared"), **base)
    assert len(blob_files(tmp_path / "blobs")) == 2
    await artifacts.delete_artifact(filename="a", **base)
    assert await artifacts.list_versions(filename="a", **base) == []
    assert await artifacts.load_artifact(filename="a", **base) is None
    assert await artifacts.load_artifact(filename="b", **base) == blob(b"shared")
    assert len(blob_files(tmp_path / "blobs")) == 1
    await artifacts.delete_artifact(filename="b", **base)
    assert blob_files(tmp_path / "blobs") == []
    assert await artifacts.save_artifact(filename="a", artifact=blob(b"again"), **base) == 0
    await artifacts.delete_artifact(filename="never", **base)


async def test_oversized_artifact_changes_nothing(db_url: str, tmp_path: Path) -> None:
    service = SqlArtifactService(db_url, blob_dir=tmp_path / "small", max_artifact_bytes=1000)
    try:
        base = {"app_name": APP, "user_id": "u1", "session_id": "s1", "filename": "big"}
        with pytest.raises(ArtifactTooLargeError, match="1001 bytes, above the limit of 1000"):
            await service.save_artifact(artifact=blob(b"x" * 1001), **base)
        with pytest.raises(ArtifactTooLargeError):
            await service.save_artifact(artifact=types.Part(text="数" * 400), **base)
        with pytest.raises(InputValidationError):
            await service.save_artifact(artifact=types.Part(), **base)
        assert await service.list_versions(**base) == []
        assert blob_files(tmp_path / "small") == []
        assert await service.save_artifact(artifact=blob(b"x" * 1000), **base) == 0
    finally:
        await service.close()


async def test_concurrent_saves_get_distinct_versions(db_url: str, tmp_path: Path) -> None:
    services = [SqlArtifactService(db_url, blob_dir=tmp_path / "b") for _ in range(3)]
    try:
        await services[0].list_versions(app_name=APP, user_id="u", filename="user:x")
        base = {"app_name": APP, "user_id": "u", "filename": "user:doc"}
        versions = await asyncio.gather(
            *(
                services[i % 3].save_artifact(artifact=types.Part(text=f"payload {i}"), **base)
                for i in range(24)
            )
        )
        assert sorted(versions) == list(range(24))
        loaded = {
            (await services[0].load_artifact(version=v, **base)).text
            for v in range(24)  # type: ignore[union-attr]
        }
        assert loaded == {f"payload {i}" for i in range(24)}
    finally:
        for service in services:
            await service.close()


async def test_references_and_rewind_tombstones(artifacts: SqlArtifactService) -> None:
    base = {"app_name": APP, "user_id": "u1", "session_id": "s1"}
    await artifacts.save_artifact(filename="orig", artifact=blob(b"data"), **base)
    ref = types.Part(
        file_data=types.FileData(
            file_uri="artifact://apps/chat/users/u1/sessions/s1/artifacts/orig/versions/0"
        )
    )
    await artifacts.save_artifact(filename="alias", artifact=ref, **base)
    assert await artifacts.load_artifact(filename="alias", **base) == blob(b"data")
    foreign = types.Part(
        file_data=types.FileData(
            file_uri="artifact://apps/chat/users/u2/sessions/s1/artifacts/orig/versions/0"
        )
    )
    with pytest.raises(InputValidationError):
        await artifacts.save_artifact(filename="evil", artifact=foreign, **base)
    external = types.Part(file_data=types.FileData(file_uri="gs://b/o", mime_type="text/csv"))
    await artifacts.save_artifact(filename="ext", artifact=external, **base)
    assert await artifacts.load_artifact(filename="ext", **base) == external
    tombstone = blob(b"", "application/octet-stream")
    await artifacts.save_artifact(filename="orig", artifact=tombstone, **base)
    assert await artifacts.load_artifact(filename="orig", **base) is None
    assert await artifacts.load_artifact(filename="orig", version=0, **base) == blob(b"data")


async def test_bad_names(artifacts: SqlArtifactService) -> None:
    with pytest.raises(InputValidationError, match="app name"):
        await artifacts.save_artifact(
            app_name="no good", user_id="u", filename="f", artifact=types.Part(text="x")
        )
    with pytest.raises(InputValidationError, match="artifact name"):
        await artifacts.save_artifact(
            app_name=APP, user_id="u", filename="", artifact=types.Part(text="x")
        )
    with pytest.raises(InputValidationError, match="artifact name"):
        await artifacts.save_artifact(
            app_name=APP, user_id="u", filename="user:", artifact=types.Part(text="x")
        )
