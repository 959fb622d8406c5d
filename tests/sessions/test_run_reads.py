"""Reads made for a run go through the window without a run config; every other read
without a config (listing, export, `adk web`'s session view) stays whole. Both backends,
and the service ADK's own CLI factory builds from a `yuxi+` URI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.run_config import RunConfig
from google.adk.apps import App
from google.adk.cli.utils.service_factory import create_session_service_from_options
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from adk_yuxi.sessions import SqlSessionService
from adk_yuxi.storage import YuxiServices, register_service_schemes
from adk_yuxi.testing import ScriptedLlm

from .test_session_window import APP, WINDOW, fill, said, summary

HELLO = types.Content(role="user", parts=[types.Part(text="and now?")])


def history() -> list[Any]:
    """Two old events, a summary of them, one event after it."""
    return [said("old one", 1.0), said("old two", 2.0, author="agent"), summary(1.0, 2.0, 3.0)]


class Seen:
    """What a run's agent saw: the events of its session and the model's contents."""

    def __init__(self) -> None:
        self.events: list[int] = []
        self.model = ScriptedLlm(["fine"])

    def agent(self) -> LlmAgent:
        def record(callback_context: CallbackContext) -> None:
            self.events.append(len(callback_context.session.events))

        return LlmAgent(name="agent", model=self.model, before_agent_callback=record)

    def contents(self) -> list[str]:
        return [c.model_dump_json(exclude_none=True) for c in self.model.requests[-1].contents]


async def run_turn(
    sessions: SqlSessionService, sid: str, run_config: RunConfig | None = None
) -> Seen:
    seen = Seen()
    runner = Runner(app=App(name=APP, root_agent=seen.agent()), session_service=sessions)
    async for _ in runner.run_async(
        user_id="u", session_id=sid, new_message=HELLO, run_config=run_config
    ):
        pass
    return seen


async def check_windowed_run(sessions: SqlSessionService) -> None:
    await fill(sessions, [*history(), said("after", 4.0)], sid="w")
    await fill(sessions, [*history(), said("after", 4.0)], sid="f")
    windowed = await sessions.get_session(app_name=APP, user_id="u", session_id="w", config=WINDOW)
    assert windowed is not None and len(windowed.events) == 2  # the summary and "after"

    no_config = await run_turn(sessions, "w")
    # Explicitly unlimited: the whole history, as before.
    whole = await run_turn(sessions, "f", RunConfig(get_session_config=GetSessionConfig()))

    assert no_config.events == [3]  # the window and the new message
    assert whole.events == [5]
    assert no_config.contents() == whole.contents()  # the model is sent the same
    for sid in ("w", "f"):  # a read without a config (listing, export) sees everything
        full = await sessions.get_session(app_name=APP, user_id="u", session_id=sid)
        assert full is not None
        assert [e.author for e in full.events] == ["user", "agent", "user", "user", "user", "agent"]


async def test_a_runner_without_run_config_reads_the_window(services: YuxiServices) -> None:
    await check_windowed_run(services.session_service)


async def test_the_window_for_runs_can_be_turned_off(services: YuxiServices) -> None:
    sessions = SqlSessionService(services.store, window_runs=False)
    await fill(sessions, [*history(), said("after", 4.0)], sid="w")
    seen = await run_turn(sessions, "w")
    assert seen.events == [5]


async def test_adk_cli_services_from_a_yuxi_uri_window_runs(db_url: str, tmp_path: Path) -> None:
    """As `adk run` / `adk web --session_service_uri yuxi+...` build their service."""
    register_service_schemes()
    uri = db_url.replace("sqlite+aiosqlite", "yuxi+sqlite").replace(
        "postgresql+asyncpg", "yuxi+postgresql"
    )
    service = create_session_service_from_options(base_dir=tmp_path, session_service_uri=uri)
    assert isinstance(service, SqlSessionService)
    await check_windowed_run(service)


AGENT_PY = '''
from pathlib import Path

from google.adk.plugins.base_plugin import BasePlugin

from adk_yuxi.access import Principal, User
from adk_yuxi.runtime import AgentConfig, build_app
from adk_yuxi.testing import ScriptedLlm


class Seen(BasePlugin):
    """Writes how many events the run's session holds when the agent starts."""

    def __init__(self):
        super().__init__(name="seen")

    async def before_agent_callback(self, *, agent, callback_context):
        seen = Path(__file__).with_name("seen.txt")
        seen.write_text(str(len(callback_context.session.events)))


app = build_app(
    AgentConfig(name="{name}", tools=()),
    Principal.from_records(User(id="test_user"), []),
    model=ScriptedLlm(["fine"]),
    capabilities=[Seen()],
)
'''


async def test_adk_run_itself_reads_the_window(db_url: str, tmp_path: Path) -> None:
    """`adk run FOLDER QUERY --session_id … --session_service_uri yuxi+…`, in-process
    through ADK's own `run_once_cli`: the agent folder's App runs on our service."""
    from google.adk.cli.cli import run_once_cli

    name = f"folder_{tmp_path.name.replace('-', '_')}"
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(AGENT_PY.replace("{name}", name))
    (folder / "services.py").write_text(
        "from adk_yuxi.storage import register_service_schemes\n\nregister_service_schemes()\n"
    )
    uri = db_url.replace("sqlite+aiosqlite", "yuxi+sqlite").replace(
        "postgresql+asyncpg", "yuxi+postgresql"
    )
    sessions = SqlSessionService(db_url)
    session = await sessions.create_session(app_name=name, user_id="test_user", session_id="s1")
    for event in [*history(), said("after", 4.0)]:
        found = await sessions.get_session(
            app_name=name, user_id="test_user", session_id="s1", config=WINDOW
        )
        session = found or session
        await sessions.append_event(session, event)
    code = await run_once_cli(
        agent_parent_dir=str(tmp_path),
        agent_folder_name=name,
        query="and now?",
        session_id="s1",
        session_service_uri=uri,
        artifact_service_uri=uri,
        memory_service_uri=uri,
    )
    assert code == 0
    assert (folder / "seen.txt").read_text() == "3"  # the window and the new message
    full = await sessions.get_session(app_name=name, user_id="test_user", session_id="s1")
    assert full is not None and len(full.events) == 6
    await sessions.close()


async def test_a_rewind_still_reads_the_whole_history(services: YuxiServices) -> None:
    """`rewind_async` reads through the Runner's same helper, but replays from the start:
    an invocation before the window is still found."""
    sessions = services.session_service
    await fill(sessions, [*history(), said("after", 4.0)], sid="r")
    runner = Runner(app=App(name=APP, root_agent=Seen().agent()), session_service=sessions)
    await runner.rewind_async(user_id="u", session_id="r", rewind_before_invocation_id="inv-1.0")
    full = await sessions.get_session(app_name=APP, user_id="u", session_id="r")
    assert full is not None and full.events[-1].actions.rewind_before_invocation_id == "inv-1.0"
