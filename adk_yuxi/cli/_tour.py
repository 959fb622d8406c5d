"""The offline tour behind `yuxi demo` and `make demo`.

It runs the real assistant agent on ADK's Runner with adk_yuxi's SQL services on a
SQLite file, reopens services and Runner halfway to show that state survives, and
prints the transcript. Every tool call in it is a real function call emitted by the
model and executed by the Runner.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from google.adk.apps import App
from google.adk.runners import Runner
from google.genai import types

from ..storage import YuxiServices, open_services
from ._transcript import format_event

__all__ = ["run_tour"]

FIRST_RUN = ("remember the launch is on Friday", "what is 12 * (3 + 4) / 2?")
AFTER_RESTART = ("what are my notes?",)
USER_ID = "demo-user"


def _load_app() -> App:
    # Imported here, not at module level: building the agent reads YUXI_MODEL.
    from ..demo.assistant import app

    return app


def _services(db_path: Path) -> YuxiServices:
    return open_services(f"sqlite+aiosqlite:///{db_path}")


def _runner(app: App, services: YuxiServices) -> Runner:
    return Runner(
        app=app,
        session_service=services.session_service,
        memory_service=services.memory_service,
        artifact_service=services.artifact_service,
    )


async def _converse(
    runner: Runner, session_id: str, messages: tuple[str, ...], echo: Callable[[str], None]
) -> None:
    for message in messages:
        echo(f"user: {message}")
        content = types.Content(role="user", parts=[types.Part(text=message)])
        async for event in runner.run_async(
            user_id=USER_ID, session_id=session_id, new_message=content
        ):
            for line in format_event(event):
                echo(line)


def _reset_database(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)


async def run_tour(db_path: Path, echo: Callable[[str], None] = print) -> None:
    """Plays the tour against a fresh SQLite file at `db_path`."""
    _reset_database(db_path)
    app = _load_app()

    echo(f"== Run 1: a new session, stored in {db_path}")
    async with _services(db_path) as services:
        runner = _runner(app, services)
        first = await services.session_service.create_session(app_name=app.name, user_id=USER_ID)
        await _converse(runner, first.id, FIRST_RUN, echo)
        await runner.close()

    echo("== Run 2: new services and Runner on the same file, a new session")
    async with _services(db_path) as services:
        sessions = services.session_service
        runner = _runner(app, services)
        second = await sessions.create_session(app_name=app.name, user_id=USER_ID)
        await _converse(runner, second.id, AFTER_RESTART, echo)
        await runner.close()
        stored = await sessions.get_session(app_name=app.name, user_id=USER_ID, session_id=first.id)
        listed = await sessions.list_sessions(app_name=app.name, user_id=USER_ID)
    events = len(stored.events) if stored else 0
    echo(
        f"== Stored: {len(listed.sessions)} sessions for {USER_ID};"
        f" the first holds {events} events; user:notes = {_notes(stored)}"
    )


def _notes(session: object) -> object:
    state = getattr(session, "state", {}) or {}
    return state.get("user:notes")
