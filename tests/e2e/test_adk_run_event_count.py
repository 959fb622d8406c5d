"""`adk run` on a `build_app` agent folder over `yuxi+sqlite://`: a session of many small
events (far under the token threshold) is compacted at the end of the run by the
context policy's event count, with ADK's CLI and session service construction unchanged."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google.adk.events import Event
from google.genai import types

from adk_yuxi.runtime import DEFAULT_COMPACT_AT_EVENTS
from adk_yuxi.sessions import SqlSessionService

from .test_adk_run_sql import adk_run

_AGENT = """
from adk_yuxi import AgentConfig, LocalPrincipals, build_app

app = build_app(AgentConfig(name="small_turns", instruction="Answer briefly."), LocalPrincipals([]))
"""

_SERVICES = """
from adk_yuxi.storage import register_service_schemes

register_service_schemes()
"""


async def _seed(url: str, turns: int) -> None:
    async with SqlSessionService(url) as sessions:
        session = await sessions.create_session(
            app_name="small_turns", user_id="test_user", session_id="s"
        )
        for i in range(turns):
            for author, role, text in (
                ("user", "user", f"note {i}"),
                ("small_turns", "model", "ok"),
            ):
                content = types.Content(role=role, parts=[types.Part(text=text)])
                await sessions.append_event(
                    session, Event(author=author, invocation_id=f"old-{i}", content=content)
                )


async def _stored(url: str) -> list[Event]:
    async with SqlSessionService(url) as sessions:
        session = await sessions.get_session(
            app_name="small_turns", user_id="test_user", session_id="s"
        )
        assert session is not None
        return session.events


@pytest.mark.slow
def test_many_small_events_are_compacted_after_an_adk_run_turn(tmp_path: Path) -> None:
    folder = tmp_path / "agents" / "small_turns"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(_AGENT)
    (folder / "services.py").write_text(_SERVICES)
    db = tmp_path / "yuxi.db"
    url = f"sqlite+aiosqlite:///{db}"
    asyncio.run(_seed(url, DEFAULT_COMPACT_AT_EVENTS // 2 + 5))  # about 10 tokens an event

    adk_run(folder, f"yuxi+sqlite:///{db}", "and now?", "--session_id", "s")

    events = asyncio.run(_stored(url))
    summaries = [i for i, e in enumerate(events) if e.actions and e.actions.compaction]
    assert len(summaries) == 1, [e.author for e in events[-6:]]
    said = [i for i, e in enumerate(events) if e.content and e.author == "small_turns"]
    assert said[-1] < summaries[0]  # written after the run's answer
