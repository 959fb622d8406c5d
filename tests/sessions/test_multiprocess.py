"""Several processes writing one session and one artifact name lose nothing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adk_yuxi.storage import open_services
from tests.sessions.concurrent_writer import APP, ARTIFACT, SESSION, USER

ROOT = Path(__file__).resolve().parents[2]
WORKERS, EVENTS, SAVES = 3, 25, 6


async def _create_shared_session(db_url: str, tmp_path: Path) -> None:
    async with open_services(db_url, blob_dir=tmp_path / "blobs") as services:
        await services.session_service.create_session(
            app_name=APP, user_id=USER, session_id=SESSION
        )


@pytest.mark.slow
def test_concurrent_processes_lose_no_event_state_or_version(db_url: str, tmp_path: Path) -> None:
    asyncio.run(_create_shared_session(db_url, tmp_path))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.sessions.concurrent_writer",
                db_url,
                str(tmp_path),
                str(w),
                str(EVENTS),
                str(SAVES),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WORKERS)
    ]
    deadline = time.time() + 120
    while not all((tmp_path / f"ready-{w}").exists() for w in range(WORKERS)):
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.time() < deadline, "writers did not start"
        time.sleep(0.02)
    (tmp_path / "go").touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    retries = sum(json.loads(out.strip().splitlines()[-1])["retries"] for out, _ in outputs)
    print(f"stale-session retries across writers: {retries}")
    asyncio.run(_check_nothing_lost(db_url, tmp_path))


async def _check_nothing_lost(db_url: str, tmp_path: Path) -> None:
    async with open_services(db_url, blob_dir=tmp_path / "blobs") as services:
        session = await services.session_service.get_session(
            app_name=APP, user_id=USER, session_id=SESSION
        )
        assert session is not None
        texts = [e.content.parts[0].text for e in session.events if e.content and e.content.parts]
        expected = {f"w{w}-{i}" for w in range(WORKERS) for i in range(EVENTS)}
        assert len(texts) == len(expected) and set(texts) == expected
        for w in range(WORKERS):  # each writer's events stay in its own order
            own = [t for t in texts if t and t.startswith(f"w{w}-")]
            assert own == [f"w{w}-{i}" for i in range(EVENTS)]
        for w in range(WORKERS):
            for i in range(EVENTS):
                assert session.state[f"w{w}_{i}"] == i
            assert session.state[f"user:last_w{w}"] == EVENTS - 1
        artifacts = services.artifact_service
        versions = await artifacts.list_versions(app_name=APP, user_id=USER, filename=ARTIFACT)
        assert versions == list(range(WORKERS * SAVES))
        saved = set()
        for version in versions:
            part = await artifacts.load_artifact(
                app_name=APP, user_id=USER, filename=ARTIFACT, version=version
            )
            assert part is not None
            saved.add(part.text)
        assert saved == {f"w{w}-{i}" for w in range(WORKERS) for i in range(SAVES)}
