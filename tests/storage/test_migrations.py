"""The migration home: versioned steps applied under the schema lock, from version 2."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.events.event import Event
from google.genai import types
from sqlalchemy import text

from adk_yuxi._sql import PLATFORM, SCHEMA_VERSION, Migration, SchemaPart, SqlStore, Step
from adk_yuxi.sessions import SqlSessionService
from adk_yuxi.storage import SchemaVersionError

APP = "chat"


def text_event(text: str) -> Event:
    return Event(
        author="user",
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


async def _add_labels(migration: Migration) -> None:
    await migration.execute("CREATE TABLE yx_test_labels (sid BIGINT NOT NULL, label TEXT)")
    await migration.execute("ALTER TABLE yx_sessions ADD COLUMN label TEXT")
    await migration.execute(
        "INSERT INTO yx_test_labels (sid, label) SELECT sid, 'migrated' FROM yx_sessions"
    )


async def _broken(migration: Migration) -> None:
    await migration.execute("CREATE TABLE yx_test_half (x INTEGER)")
    raise RuntimeError("step failed half way")


def platform_with(step: Step) -> SchemaPart:
    """The platform as a later release would ship it: one step after the baseline."""
    return SchemaPart("platform", (*PLATFORM.steps, step))


async def versions(store: SqlStore) -> dict[str, int]:
    """The version row of the platform part, read on the engine (``ready()`` would refuse a
    newer schema); other parts registered in this process are left out."""
    async with store.engine.connect() as conn:
        rows = (
            await conn.exec_driver_sql(
                "SELECT name, version FROM yx_schema_version WHERE name = 'platform'"
            )
        ).all()
    return {name: int(version) for name, version in rows}


async def test_a_version_2_database_takes_the_next_step(db_url: str) -> None:
    assert PLATFORM.steps[0].version == 2
    store = SqlStore(db_url)
    try:
        sessions = SqlSessionService(store)
        made = await sessions.create_session(app_name=APP, user_id="u", state={"k": 1})
        assert (await versions(store))["platform"] == SCHEMA_VERSION

        await store.migrate([platform_with(Step(SCHEMA_VERSION + 1, "labels", _add_labels))])
        assert (await versions(store))["platform"] == SCHEMA_VERSION + 1
        async with store.read() as tx:
            assert await tx.fetchall("SELECT label FROM yx_test_labels") == [("migrated",)]
            assert await tx.fetchall("SELECT label FROM yx_sessions") == [(None,)]
        again = await sessions.get_session(app_name=APP, user_id="u", session_id=made.id)
        assert again is not None and again.state == {"k": 1}

        # Applied once: a second run finds nothing pending (the step would fail).
        await store.migrate([platform_with(Step(SCHEMA_VERSION + 1, "labels", _add_labels))])
    finally:
        await store.close()


async def test_a_failing_step_leaves_the_database_as_it_was(db_url: str) -> None:
    store = SqlStore(db_url)
    try:
        await store.ready()
        with pytest.raises(RuntimeError, match="half way"):
            await store.migrate([platform_with(Step(SCHEMA_VERSION + 1, "broken", _broken))])
        assert (await versions(store))["platform"] == SCHEMA_VERSION
        # The half-made table went with the rolled-back transaction.
        await store.migrate([platform_with(Step(SCHEMA_VERSION + 1, "labels", _add_labels))])
        async with store.write() as tx:
            await tx.execute("CREATE TABLE yx_test_half (x INTEGER)")
    finally:
        await store.close()


async def test_concurrent_openers_apply_a_step_once(db_url: str) -> None:
    first, second = SqlStore(db_url), SqlStore(db_url)
    try:
        await first.ready()
        part = platform_with(Step(SCHEMA_VERSION + 1, "labels", _add_labels))
        await asyncio.gather(first.migrate([part]), second.migrate([part]))
        assert (await versions(second))["platform"] == SCHEMA_VERSION + 1
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("found", [1, SCHEMA_VERSION + 1])
async def test_unknown_versions_are_refused(tmp_path: Path, found: int) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'v.db'}"
    store = SqlStore(url)
    await store.ready()
    async with store.write() as tx:
        await tx.execute(
            "UPDATE yx_schema_version SET version = :v WHERE name = 'platform'", {"v": found}
        )
    await store.close()
    store = SqlStore(url)
    try:
        with pytest.raises(SchemaVersionError, match=f"has version {found}") as info:
            await store.ready()
        assert info.value.part == "platform"
    finally:
        await store.close()


def test_step_versions_must_be_consecutive() -> None:
    async def noop(_: Migration) -> None:
        return None

    with pytest.raises(ValueError, match="consecutive"):
        SchemaPart("x", (Step(1, "a", noop), Step(3, "b", noop)))
    with pytest.raises(ValueError, match="no steps"):
        SchemaPart("x", ())


def test_another_package_registers_its_own_part(tmp_path: Path) -> None:
    """A part registered by another module is applied beside the platform, even after
    a store got ready, and gets its own version row."""
    db = tmp_path / "parts.db"
    script = textwrap.dedent(
        f"""
        import asyncio
        from sqlalchemy import Column, MetaData, Table, Text
        from adk_yuxi._sql import Migration, SchemaPart, SqlStore, Step, register_schema_part

        notes_metadata = MetaData()
        notes = Table("yx_kb_notes", notes_metadata, Column("id", Text, primary_key=True))

        async def create_notes(m: Migration) -> None:
            await m.create_tables(notes)
            await m.run_ddl({{"sqlite": ["CREATE INDEX ix_kb ON yx_kb_notes (id)"],
                             "postgresql": ["CREATE INDEX ix_kb ON yx_kb_notes (id)"]}})

        async def main() -> None:
            store = SqlStore("sqlite+aiosqlite:///{db}")
            await store.ready()
            register_schema_part(SchemaPart("knowledge", (Step(1, "notes", create_notes),)))
            async with store.write() as tx:
                await tx.execute("INSERT INTO yx_kb_notes (id) VALUES ('n1')")
                rows = await tx.fetchall("SELECT name, version FROM yx_schema_version"
                                         " ORDER BY name")
            print(sorted(rows))
            await store.close()

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"[('knowledge', 1), ('platform', {SCHEMA_VERSION})]"


async def test_step_4_keeps_version_2_sessions_and_their_lock(db_url: str) -> None:
    """A database written by the version-2 code (session revision moved by a
    trigger) opens under steps 3 and 4: events, revisions and update times carry over,
    old copies are still stale, and appends go on."""
    baseline = SchemaPart("platform", PLATFORM.steps[:1])
    v2 = SqlStore(db_url)
    try:
        await v2.migrate([baseline])  # a fresh database as version 2 made it
        async with v2.engine.begin() as conn:
            await conn.exec_driver_sql(
                "INSERT INTO yx_sessions (app_name, user_id, session_id, state, revision,"
                " create_time, update_time) VALUES ('chat', 'u', 's1', '{\"k\": 1}', 0, 1.0, 1.0)"
            )
            for seq in (1, 2):
                event = text_event(f"v2 event {seq}")
                event.timestamp = 10.0 + seq
                await conn.execute(
                    text(
                        "INSERT INTO yx_events (sid, seq, event_id, invocation_id, timestamp,"
                        " data) VALUES ((SELECT sid FROM yx_sessions), :seq, :id, 'inv', :ts,"
                        " :data)"
                    ),
                    {
                        "seq": seq,
                        "id": event.id,
                        "ts": event.timestamp,
                        "data": event.model_dump_json(exclude_none=True),
                    },
                )
            revision = (await conn.exec_driver_sql("SELECT revision FROM yx_sessions")).scalar()
            assert revision == 2  # the version-2 trigger
    finally:
        await v2.close()

    store = SqlStore(db_url)
    try:
        sessions = SqlSessionService(store)
        loaded = await sessions.get_session(app_name=APP, user_id="u", session_id="s1")
        assert await versions(store) == {"platform": SCHEMA_VERSION}
        assert loaded is not None
        assert [e.content.parts[0].text for e in loaded.events] == ["v2 event 1", "v2 event 2"]
        assert loaded.state == {"k": 1} and loaded.last_update_time == 12.0
        stale = loaded.model_copy(deep=True)
        stale._storage_update_marker = loaded._storage_update_marker
        await sessions.append_event(loaded, text_event("v3 event"))
        with pytest.raises(StaleSessionError):
            await sessions.append_event(stale, text_event("from the old copy"))
        again = await sessions.get_session(app_name=APP, user_id="u", session_id="s1")
        assert again is not None and len(again.events) == 3
        listed = await sessions.list_sessions(app_name=APP, user_id="u")
        assert [s.last_update_time for s in listed.sessions] == [again.events[-1].timestamp]
    finally:
        await store.close()
