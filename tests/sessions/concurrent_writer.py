"""A separate writer process for the multi-process test (run with ``python -m``).

It appends events to one shared session, reloading and retrying whenever it gets
StaleSessionError, and saves versions of one shared artifact name. It waits for a
``go`` file so that all writers start together.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types

from adk_yuxi.storage import open_services

APP, USER, SESSION, ARTIFACT = "race", "u", "shared", "user:shared.txt"


async def prepare(url: str, workdir: Path) -> None:
    async with open_services(url, blob_dir=workdir / "blobs") as services:
        await services.prepare()


def wait_for_go(workdir: Path, worker: int) -> None:
    (workdir / f"ready-{worker}").touch()
    while not (workdir / "go").exists():
        time.sleep(0.01)


async def run(url: str, workdir: Path, worker: int, events: int, saves: int) -> dict[str, int]:
    retries = 0
    async with open_services(url, blob_dir=workdir / "blobs") as services:
        sessions = services.session_service
        session = await sessions.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        assert session is not None
        for i in range(events):
            while True:
                event = Event(
                    author=f"w{worker}",
                    invocation_id=f"w{worker}",
                    content=types.Content(role="user", parts=[types.Part(text=f"w{worker}-{i}")]),
                    actions=EventActions(
                        state_delta={f"w{worker}_{i}": i, f"user:last_w{worker}": i}
                    ),
                )
                try:
                    await sessions.append_event(session, event)
                    break
                except StaleSessionError:
                    retries += 1
                    session = await sessions.get_session(
                        app_name=APP, user_id=USER, session_id=SESSION
                    )
                    assert session is not None
            if i < saves:
                await services.artifact_service.save_artifact(
                    app_name=APP,
                    user_id=USER,
                    filename=ARTIFACT,
                    artifact=types.Part(text=f"w{worker}-{i}"),
                )
    return {"retries": retries}


def main() -> None:
    url, workdir, worker, events, saves = sys.argv[1:6]
    asyncio.run(prepare(url, Path(workdir)))
    wait_for_go(Path(workdir), int(worker))
    started = time.time()
    result = asyncio.run(run(url, Path(workdir), int(worker), int(events), int(saves)))
    result["seconds"] = int(time.time() - started)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
