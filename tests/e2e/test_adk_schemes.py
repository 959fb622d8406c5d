"""yuxi+ service URIs however ADK is pointed at the agents, and a clear error where
ADK cannot know them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from adk_yuxi.sessions import SqlSessionService
from tests.e2e._cli import BIN, REPO, run_command
from tests.e2e._web import adk_web

pytestmark = pytest.mark.slow


def test_adk_web_agents_from_the_repository_root_resolves_the_schemes(tmp_path: Path) -> None:
    """`adk web agents` imports agents/services.py, which registers the yuxi+ schemes (the
    repository root is no importable package: the wheel holds adk_yuxi alone)."""
    uri = f"yuxi+sqlite:///{tmp_path / 'root.db'}"
    flags = ("--session_service_uri", uri, "--memory_service_uri", uri)
    flags += ("--artifact_service_uri", uri)
    with adk_web(*flags, agents="agents", cwd=REPO, log=tmp_path / "web.log") as base:
        created = httpx.post(f"{base}/apps/assistant/users/u/sessions/kept", json={}, timeout=10)
        assert created.status_code == 200, created.text
    assert "Traceback" not in (tmp_path / "web.log").read_text()
    assert asyncio.run(_stored_session_ids(f"sqlite+aiosqlite:///{tmp_path / 'root.db'}")) == [
        "kept"
    ]


async def _stored_session_ids(url: str) -> list[str]:
    service = SqlSessionService(url)
    try:
        listed = await service.list_sessions(app_name="assistant", user_id="u")
        return [s.id for s in listed.sessions]
    finally:
        await service.close()


def test_an_unregistered_scheme_says_how_to_register_it(tmp_path: Path) -> None:
    folder = tmp_path / "own_agent"
    folder.mkdir()
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(
        "from google.adk.agents import LlmAgent\n"
        "from adk_yuxi.models import DemoLlm\n"
        "root_agent = LlmAgent(name='own_agent', model=DemoLlm())\n"
    )
    # The user's own services.py, which knows nothing of adk_yuxi.
    (folder / "services.py").write_text("REGISTERED = ()\n")
    done = run_command(
        [
            str(BIN / "adk"),
            "run",
            "--session_service_uri",
            "yuxi+sqlite:///x.db",
            "own_agent",
            "hi",
        ],
        cwd=tmp_path,
    )
    assert done.returncode != 0
    first_line = next(line for line in done.stderr.splitlines() if "[adk_yuxi]" in line)
    assert "yuxi+sqlite:// is adk_yuxi's service URI scheme, but ADK has not registered it" in (
        first_line
    )
    assert "register_service_schemes()" in first_line
    assert not (tmp_path / "x.db").exists()
