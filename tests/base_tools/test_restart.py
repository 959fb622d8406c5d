"""The waiting point survives the process: ask in one OS process, let it exit, answer
from a new one, and the same invocation resumes and finishes (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from adk_yuxi.ledger import RunLedger
from adk_yuxi.storage import open_services
from adk_yuxi.waitpoints import WaitpointStore
from tests.e2e._cli import REPO, cli_env

from ._harness import APP, USER


def worker(mode: str, db_url: str, state: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.base_tools.restart_worker", mode, db_url, str(state)],
        cwd=REPO,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]


async def stored(db_url: str, point_id: str, session_id: str) -> tuple[str, list[str]]:
    async with open_services(db_url) as services:
        point = await WaitpointStore(services.store).get(point_id, user_id=USER)
        session = await services.session_service.get_session(
            app_name=APP, user_id=USER, session_id=session_id
        )
        assert session is not None
        run = await RunLedger(services.store).find(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            invocation_id=session.events[0].invocation_id,
        )
        assert run is not None
        return point.status, [run.status, *(e.invocation_id for e in session.events)]


@pytest.mark.slow
def test_ask_exit_answer_from_a_new_process(db_url: str, tmp_path: Path) -> None:
    worker("ask", db_url, tmp_path)
    asked = json.loads((tmp_path / "asked.json").read_text())
    status, (run_status, *_) = asyncio.run(stored(db_url, asked["point"], asked["session"]))
    assert (status, run_status) == ("pending", "waiting")

    worker("answer", db_url, tmp_path)
    answered = json.loads((tmp_path / "answered.json").read_text())
    (tool_result,) = answered["tool"]
    assert tool_result["answers"] == {"colour": "blue"}
    assert answered["model_calls"] == 1
    assert answered["final"] == ["got " + json.dumps(tool_result, sort_keys=True)]
    status, (run_status, *invocations) = asyncio.run(
        stored(db_url, asked["point"], asked["session"])
    )
    assert (status, run_status) == ("answered", "completed")
    assert set(invocations) == set(answered["invocations"])
    assert len(set(invocations)) == 1  # the same invocation, resumed
