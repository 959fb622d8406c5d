"""`adk run` with the yuxi+sqlite:// schemes survives restarts on the same file.

The test writes a self-contained agent folder whose model is a tiny offline
BaseLlm that answers with the number of user turns it can see, so a reply of
"turn 2" proves the first run's events came back from the database.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adk_yuxi.sessions import SqlSessionService

ROOT = Path(__file__).resolve().parents[2]

_MODEL = '''
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class TurnCountingLlm(BaseLlm):
    """Replies with how many user turns the request carries (no network)."""

    async def generate_content_async(self, llm_request, stream=False):
        turns = sum(
            1 for c in llm_request.contents
            if c.role == "user" and any(p.text for p in c.parts or [])
        )
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=f"turn {turns}")])
        )
'''

_AGENT = """
from google.adk.agents import LlmAgent

from .tiny_model import TurnCountingLlm

root_agent = LlmAgent(name="turns", model=TurnCountingLlm(model="turn-counter"),
                      instruction="Count turns.")
"""

_SERVICES = """
from adk_yuxi.storage import register_service_schemes

register_service_schemes()
"""


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "agents" / "turns_agent"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(_AGENT)
    (folder / "tiny_model.py").write_text(_MODEL)
    (folder / "services.py").write_text(_SERVICES)
    return folder


def adk_run(agent_dir: Path, uri: str, *args: str, stdin: str = "") -> str:
    command = [
        sys.executable,
        "-m",
        "google.adk.cli",
        "run",
        str(agent_dir),
        "--session_service_uri",
        uri,
        "--memory_service_uri",
        uri,
        "--artifact_service_uri",
        uri,
        *args,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ADK_DISABLE_LOAD_DOTENV": "1"}
    done = subprocess.run(
        command,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=agent_dir.parent.parent,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_adk_run_restarts_on_the_same_sqlite_file(agent_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "data" / "yuxi.db"
    db.parent.mkdir()
    uri = f"yuxi+sqlite:///{db}"
    assert "turn 1" in adk_run(agent_dir, uri, "hello", "--session_id", "s1")
    assert "turn 2" in adk_run(agent_dir, uri, "again", "--session_id", "s1")
    # A fresh session on the same file starts over.
    assert "turn 1" in adk_run(agent_dir, uri, "hi", "--session_id", "s2")

    # Interactive mode: save the session, then --resume it in a new process.
    saved = adk_run(agent_dir, uri, "--save_session", "--session_id", "kept", stdin="first\nexit\n")
    assert "turn 1" in saved
    session_file = agent_dir / "kept.session.json"
    assert session_file.exists()
    resumed = adk_run(agent_dir, uri, "--resume", str(session_file), stdin="second\nexit\n")
    assert "turn 2" in resumed
    stored = asyncio.run(_stored_turns(f"sqlite+aiosqlite:///{db}"))
    assert stored == {"s1": ["hello", "turn 1", "again", "turn 2"], "s2": ["hi", "turn 1"]}


async def _stored_turns(url: str) -> dict[str, list[str]]:
    service = SqlSessionService(url)
    try:
        result = {}
        for session_id in ("s1", "s2"):
            session = await service.get_session(
                app_name="turns_agent", user_id="test_user", session_id=session_id
            )
            assert session is not None
            result[session_id] = [
                part.text
                for e in session.events
                if e.content
                for part in e.content.parts or []
                if part.text
            ]
        return result
    finally:
        await service.close()


@pytest.mark.slow
def test_adk_run_leaves_the_data_in_the_relative_database_file(agent_dir: Path) -> None:
    """The README's relative URI: the file lands under the working directory, and
    after `adk run` exits the data is in it, not in a WAL left beside it."""
    workdir = agent_dir.parent.parent
    assert "turn 1" in adk_run(
        agent_dir, "yuxi+sqlite:///.yuxi/cli.db", "hello", "--session_id", "s1"
    )
    db = workdir / ".yuxi" / "cli.db"
    wal = db.with_name("cli.db-wal")
    assert db.exists()
    assert not wal.exists() or wal.stat().st_size == 0
    assert db.stat().st_size > 4096  # the schema and the turn live in the database file
