"""The offline tour behind `yuxi demo` and `make demo`.

It runs the real assistant agent on ADK's Runner with adk_yuxi's SQL services on a
SQLite file, reopens services and Runner halfway to show that state survives, and
prints the transcript. Every tool call in it is a real function call emitted by the
model and executed by the Runner.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

from google.adk.apps import App
from google.adk.runners import Runner
from google.genai import types

from ..errors import YuxiError
from ..storage import YuxiServices, open_services
from ._transcript import format_event

__all__ = ["NotADemoDatabase", "run_tour"]

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


_MARK = "yx_demo_tour"
"""A table only the tour creates: the tour recreates a file only if it holds it."""


class NotADemoDatabase(YuxiError):
    """The tour's file exists and is not one the tour made: it is left untouched."""


def _made_by_the_tour(db_path: Path) -> bool:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_MARK,)
            ).fetchone()
    except sqlite3.DatabaseError:
        return False
    return found is not None


def _reset_database(db_path: Path) -> None:
    """Deletes the previous tour's file (never another one) and marks a new one."""
    if db_path.exists() and not _made_by_the_tour(db_path):
        raise NotADemoDatabase(
            f"{db_path} exists and was not made by `yuxi demo`, which recreates its file on"
            " every run; give --db a new path (your data stays where it is)"
        )
    db_path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        conn.execute(f"CREATE TABLE {_MARK} (note TEXT)")
        conn.commit()


async def run_tour(db_path: Path, echo: Callable[[str], None] = print) -> None:
    """Plays the tour against a fresh SQLite file at `db_path`, a scratch file of its own
    (recreated on every run), apart from the one database the other commands share."""
    _reset_database(db_path)
    app = _load_app()

    echo(f"== Run 1: a new session, stored in {db_path} (the tour's own scratch file)")
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
