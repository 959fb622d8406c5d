"""A process that saves and deletes artifacts until it is killed (run with ``python -m``).

Each round saves three versions of one name (distinct payloads, one shared with
a long-lived artifact) and deletes the name again, printing ``round N`` as it
goes so the parent knows it is busy before it sends SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from google.genai import types

from adk_yuxi.storage import open_services

APP, USER = "churn", "u"
KEEP = b"kept payload shared by every round"


def part(data: bytes) -> types.Part:
    return types.Part(inline_data=types.Blob(mime_type="application/octet-stream", data=data))


async def main(url: str, blob_dir: Path) -> None:
    async with open_services(url, blob_dir=blob_dir) as services:
        artifacts = services.artifact_service
        await artifacts.save_artifact(
            app_name=APP, user_id=USER, filename="kept", artifact=part(KEEP)
        )
        round_no = 0
        while True:
            name = f"f{round_no % 4}"
            for version in range(3):
                data = KEEP if version == 1 else f"{round_no}-{version}".encode() * 50
                await artifacts.save_artifact(
                    app_name=APP, user_id=USER, filename=name, artifact=part(data)
                )
            await artifacts.delete_artifact(app_name=APP, user_id=USER, filename=name)
            print(f"round {round_no}", flush=True)
            round_no += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
