"""A delete interrupted by SIGKILL or cancellation never leaves a listed version
without its bytes; orphan payload files are swept, safely beside writers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from google.genai import types

from adk_yuxi.artifacts import SqlArtifactService
from adk_yuxi.storage import open_services
from tests.artifacts.churn_writer import APP, KEEP, USER, part

ROOT = Path(__file__).resolve().parents[2]


def payload_files(root: Path) -> set[str]:
    return {p.name for p in root.glob("??/??/*") if p.is_file()}


async def assert_every_listed_version_loads(artifacts: SqlArtifactService) -> int:
    checked = 0
    for name in await artifacts.list_artifact_keys(app_name=APP, user_id=USER):
        for version in await artifacts.list_versions(app_name=APP, user_id=USER, filename=name):
            loaded = await artifacts.load_artifact(
                app_name=APP, user_id=USER, filename=name, version=version
            )
            assert loaded is not None and loaded.inline_data is not None
            checked += 1
    return checked


async def referenced_digests(artifacts: SqlArtifactService) -> set[str]:
    async with artifacts._store.read() as tx:
        rows = await tx.fetchall("SELECT digest FROM yx_artifact_blobs")
    return {row[0] for row in rows}


@pytest.mark.slow
def test_sigkill_during_saves_and_deletes_loses_no_listed_bytes(
    db_url: str, tmp_path: Path
) -> None:
    blob_dir = tmp_path / "blobs"
    rng = random.Random(8)
    for _kill in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.artifacts.churn_writer", db_url, str(blob_dir)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()  # busy: at least one round done
        assert line.startswith("round"), proc.stderr.read() if proc.stderr else line
        time.sleep(rng.uniform(0.0, 0.3))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)

    async def check() -> None:
        async with open_services(db_url, blob_dir=blob_dir) as services:
            artifacts = services.artifact_service
            assert await assert_every_listed_version_loads(artifacts) >= 1
            swept = await artifacts.sweep_orphans(older_than=0)
            # After the sweep every file on disk is referenced, and nothing
            # referenced was swept.
            assert payload_files(blob_dir) == await referenced_digests(artifacts)
            assert await assert_every_listed_version_loads(artifacts) >= 1
            assert swept >= 0

    asyncio.run(check())


async def test_cancelled_deletes_never_leave_versions_without_bytes(
    db_url: str, tmp_path: Path
) -> None:
    """Cancel a delete after every possible number of loop steps."""
    async with open_services(db_url, blob_dir=tmp_path / "blobs") as services:
        artifacts = services.artifact_service
        for steps in range(40):
            name = f"doc{steps}"
            for version in range(3):
                await artifacts.save_artifact(
                    app_name=APP,
                    user_id=USER,
                    filename=name,
                    artifact=part(f"{steps}-{version}".encode() * 20),
                )
            task = asyncio.create_task(
                artifacts.delete_artifact(app_name=APP, user_id=USER, filename=name)
            )
            for _ in range(steps):
                await asyncio.sleep(0)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await assert_every_listed_version_loads(artifacts)
        await artifacts.sweep_orphans(older_than=0)
        assert payload_files(tmp_path / "blobs") == await referenced_digests(artifacts)
        await assert_every_listed_version_loads(artifacts)


async def test_sweep_keeps_young_files_and_files_a_save_revives(
    db_url: str, tmp_path: Path
) -> None:
    blob_dir = tmp_path / "blobs"
    async with open_services(db_url, blob_dir=blob_dir) as services:
        artifacts = services.artifact_service
        kw = {"app_name": APP, "user_id": USER, "filename": "a"}
        await artifacts.save_artifact(artifact=part(b"live"), **kw)
        # An orphan: bytes written by a save that died before its commit.
        orphan, _ = artifacts._blobs.write_bytes(b"orphan")
        assert await artifacts.sweep_orphans() == 0  # young: a save may still commit it
        assert orphan in payload_files(blob_dir)
        assert await artifacts.sweep_orphans(older_than=0) == 1
        assert orphan not in payload_files(blob_dir)

        # The file of an unreferenced digest vanishes between a save's write and
        # its commit (a sweep or delete got there first): the save rewrites it.
        await artifacts.save_artifact(artifact=part(b"again"), **kw)
        await artifacts.delete_artifact(**kw)
        assert payload_files(blob_dir) == set()
        await artifacts.save_artifact(artifact=part(KEEP), **kw)
        loaded = await artifacts.load_artifact(**kw)
        assert loaded == part(KEEP)


async def test_concurrent_sweep_and_saves_of_the_same_bytes(db_url: str, tmp_path: Path) -> None:
    blob_dir = tmp_path / "blobs"
    async with open_services(db_url, blob_dir=blob_dir) as services:
        artifacts = services.artifact_service
        data = b"contended payload" * 100

        async def save_and_delete(i: int) -> None:
            kw = {"app_name": APP, "user_id": USER, "filename": f"n{i}"}
            for _ in range(10):
                await artifacts.save_artifact(artifact=part(data), **kw)
                await artifacts.delete_artifact(**kw)
            await artifacts.save_artifact(artifact=part(data), **kw)

        async def sweep() -> None:
            for _ in range(30):
                await artifacts.sweep_orphans(older_than=0)
                await asyncio.sleep(0)

        await asyncio.gather(*(save_and_delete(i) for i in range(4)), sweep())
        assert await assert_every_listed_version_loads(artifacts) == 4


async def test_text_artifact_payload_survives_delete_of_another_name(
    db_url: str, tmp_path: Path
) -> None:
    async with open_services(db_url, blob_dir=tmp_path / "blobs") as services:
        artifacts = services.artifact_service
        text = types.Part(text="same words")
        for name in ("x", "y"):
            await artifacts.save_artifact(app_name=APP, user_id=USER, filename=name, artifact=text)
        await artifacts.delete_artifact(app_name=APP, user_id=USER, filename="x")
        assert await artifacts.load_artifact(app_name=APP, user_id=USER, filename="y") == text
