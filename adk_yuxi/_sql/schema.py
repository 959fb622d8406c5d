"""The platform's tables (sessions, memory, artifacts, access) and their steps.

All services share one database (SQLite file or PostgreSQL schema); table names
carry a ``yx_`` prefix so they can sit beside ADK's own ``sessions``/``events``
tables without clashing.

The tables defined below are the version-2 baseline and are frozen: step 2 of
``PLATFORM`` creates exactly them on a fresh database. A later change is a new
step appended to ``PLATFORM`` with its own DDL (``ALTER TABLE``, or a new table
defined in that step's own ``MetaData``), never an edit of this baseline, so a
fresh database and a migrated one end up identical. The services write their
SQL as text; nothing else reads these ``Table`` objects. See ``migrations``.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

from .migrations import Migration, SchemaPart, Step, register_schema_part
from .urls import Backend

metadata = MetaData()

# A JSON object column: text on SQLite, JSONB on PostgreSQL so state deltas can
# be merged server-side with ``||``.
JsonObject = Text().with_variant(JSONB(), "postgresql")
_Id = BigInteger().with_variant(Integer(), "sqlite")

# --- Sessions ---------------------------------------------------------------------

sessions = Table(
    "yx_sessions",
    metadata,
    Column("sid", _Id, primary_key=True, autoincrement=True),
    Column("app_name", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("state", JsonObject, nullable=False),
    # Bumped by every append (see the yx_events trigger); the optimistic lock.
    Column("revision", BigInteger, nullable=False, server_default=text("0")),
    Column("create_time", Double, nullable=False),
    Column("update_time", Double, nullable=False),
    UniqueConstraint("app_name", "user_id", "session_id", name="uq_yx_sessions_key"),
    Index("ix_yx_sessions_app_time", "app_name", "update_time", "user_id", "session_id"),
    Index("ix_yx_sessions_user_time", "app_name", "user_id", "update_time", "session_id"),
    # Never reuse a deleted session's sid: stale-session markers name the sid.
    sqlite_autoincrement=True,
)

events = Table(
    "yx_events",
    metadata,
    Column("sid", _Id, ForeignKey("yx_sessions.sid", ondelete="CASCADE"), nullable=False),
    # seq equals the session revision the append produced: 1, 2, 3 ...
    Column("seq", BigInteger, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("invocation_id", Text, nullable=False),
    Column("timestamp", Double, nullable=False),
    Column("data", Text, nullable=False),
    # The FAST_CODEC under which reading ``data`` back without ADK's Python
    # validators was proven exact when it was written; NULL: validate in full
    # (see adk_yuxi/sessions/_event_codec.py).
    Column("fast_codec", Text),
    PrimaryKeyConstraint("sid", "seq", name="pk_yx_events"),
)

app_states = Table(
    "yx_app_states",
    metadata,
    Column("app_name", Text, primary_key=True),
    Column("state", JsonObject, nullable=False),
    Column("update_time", Double, nullable=False),
)

user_states = Table(
    "yx_user_states",
    metadata,
    Column("app_name", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("state", JsonObject, nullable=False),
    Column("update_time", Double, nullable=False),
    PrimaryKeyConstraint("app_name", "user_id", name="pk_yx_user_states"),
)

# --- Memory -----------------------------------------------------------------------

memories = Table(
    "yx_memories",
    metadata,
    Column("mid", _Id, primary_key=True, autoincrement=True),
    Column("app_name", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("memory_id", Text, nullable=False),
    Column("session_id", Text),
    Column("event_id", Text),
    Column("author", Text),
    Column("timestamp", Double, nullable=False),
    Column("content", Text, nullable=False),
    Column("custom_metadata", Text, nullable=False),
    # Full-text columns: a token naming the (app, user) scope and the
    # pre-tokenised text (see adk_yuxi/_text/tokens.py).
    Column("scope", Text, nullable=False),
    Column("body", Text, nullable=False),
    # Deleted memories stay as tombstones so re-ingesting a session does not
    # bring them back; their content and body are cleared.
    Column("deleted", Boolean, nullable=False, server_default=false()),
    UniqueConstraint("app_name", "user_id", "memory_id", name="uq_yx_memories_key"),
    Index("ix_yx_memories_scope_time", "app_name", "user_id", "timestamp"),
)

# --- Artifacts --------------------------------------------------------------------

artifact_blobs = Table(
    "yx_artifact_blobs",
    metadata,
    Column("digest", Text, primary_key=True),
    Column("size", BigInteger, nullable=False),
    # Number of artifact versions pointing at the blob; the file is removed, in
    # the same transaction, when it drops to zero.
    Column("refs", BigInteger, nullable=False),
)

artifact_versions = Table(
    "yx_artifact_versions",
    metadata,
    Column("app_name", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    # The session id, or '' for user-scoped ("user:") artifacts.
    Column("scope", Text, nullable=False),
    Column("filename", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("kind", Text, nullable=False),
    Column("mime_type", Text),
    Column("display_name", Text),
    Column("digest", Text),
    Column("size", BigInteger, nullable=False),
    Column("part", Text),
    Column("custom_metadata", Text, nullable=False),
    Column("create_time", Double, nullable=False),
    PrimaryKeyConstraint(
        "app_name", "user_id", "scope", "filename", "version", name="pk_yx_artifact_versions"
    ),
)

# --- Access control ---------------------------------------------------------------

users = Table(
    "yx_users",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False, server_default=text("''")),
    Column("role", Text, nullable=False),
    Column("department_id", Text),
    Column("active", Boolean, nullable=False),
)

resources = Table(
    "yx_resources",
    metadata,
    Column("kind", Text, nullable=False),
    Column("id", Text, nullable=False),
    Column("creator_id", Text, nullable=False),
    # The share config as JSON text: read and manage scopes (see adk_yuxi.access).
    Column("share", Text, nullable=False),
    Column("enabled", Boolean, nullable=False),
    PrimaryKeyConstraint("kind", "id", name="pk_yx_resources"),
)

# --- Dialect-specific DDL ---------------------------------------------------------

_BASELINE_DDL: dict[Backend, list[str]] = {
    "sqlite": [
        # The append path inserts the event only when the caller's revision is
        # current; this trigger moves the session to the event's revision in the
        # same statement, so an append is one INSERT plus COMMIT.
        """CREATE TRIGGER IF NOT EXISTS yx_events_touch_session AFTER INSERT ON yx_events
        BEGIN
          UPDATE yx_sessions SET revision = NEW.seq, update_time = NEW.timestamp
          WHERE sid = NEW.sid;
        END""",
        """CREATE VIRTUAL TABLE IF NOT EXISTS yx_memories_fts USING fts5(
          scope, body, content='yx_memories', content_rowid='mid',
          tokenize='unicode61 remove_diacritics 0')""",
        """CREATE TRIGGER IF NOT EXISTS yx_memories_ai AFTER INSERT ON yx_memories BEGIN
          INSERT INTO yx_memories_fts(rowid, scope, body) VALUES (new.mid, new.scope, new.body);
        END""",
        """CREATE TRIGGER IF NOT EXISTS yx_memories_ad AFTER DELETE ON yx_memories BEGIN
          INSERT INTO yx_memories_fts(yx_memories_fts, rowid, scope, body)
          VALUES ('delete', old.mid, old.scope, old.body);
        END""",
        """CREATE TRIGGER IF NOT EXISTS yx_memories_au AFTER UPDATE OF scope, body ON yx_memories
        BEGIN
          INSERT INTO yx_memories_fts(yx_memories_fts, rowid, scope, body)
          VALUES ('delete', old.mid, old.scope, old.body);
          INSERT INTO yx_memories_fts(rowid, scope, body) VALUES (new.mid, new.scope, new.body);
        END""",
    ],
    "postgresql": [
        """CREATE OR REPLACE FUNCTION yx_events_touch_session() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE yx_sessions SET revision = NEW.seq, update_time = NEW.timestamp
          WHERE sid = NEW.sid;
          RETURN NULL;
        END $$""",
        """CREATE TRIGGER yx_events_touch_session AFTER INSERT ON yx_events
        FOR EACH ROW EXECUTE FUNCTION yx_events_touch_session()""",
        # Memory search: the scope token and the body, parsed once at write time
        # (a generated column), so a search reads stored lexemes for both the
        # match (GIN) and the ranking instead of re-parsing every candidate.
        """ALTER TABLE yx_memories ADD COLUMN tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, scope || ' ' || body)) STORED""",
        """CREATE INDEX IF NOT EXISTS ix_yx_memories_tsv ON yx_memories USING GIN (tsv)""",
    ],
}


async def _baseline(migration: Migration) -> None:
    await migration.create_tables(*metadata.sorted_tables)
    await migration.run_ddl(_BASELINE_DDL)


# --- Step 3: the access change marker ---------------------------------------------
#
# One row whose version every write to the access tables bumps, by trigger, whoever
# writes (our repository, another process, a console): the runtime re-reads a user's
# rights only when it moved, so checking rights at every call costs one primary-key
# read. Statement-level on PostgreSQL, so a bulk change bumps it once.

_ACCESS_TABLES = ("yx_users", "yx_resources")

_ACCESS_MARKER_DDL: dict[Backend, list[str]] = {
    "sqlite": [
        """CREATE TABLE yx_access_version (
          id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)""",
        "INSERT INTO yx_access_version (id, version) VALUES (1, 0)",
        *(
            f"""CREATE TRIGGER {table}_{op.lower()}_bump AFTER {op} ON {table} BEGIN
              UPDATE yx_access_version SET version = version + 1 WHERE id = 1;
            END"""
            for table in _ACCESS_TABLES
            for op in ("INSERT", "UPDATE", "DELETE")
        ),
    ],
    "postgresql": [
        """CREATE TABLE yx_access_version (
          id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)""",
        "INSERT INTO yx_access_version (id, version) VALUES (1, 0)",
        """CREATE OR REPLACE FUNCTION yx_access_bump() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE yx_access_version SET version = version + 1 WHERE id = 1;
          RETURN NULL;
        END $$""",
        *(
            f"""CREATE TRIGGER {table}_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
            ON {table} FOR EACH STATEMENT EXECUTE FUNCTION yx_access_bump()"""
            for table in _ACCESS_TABLES
        ),
    ],
}


# Step 4: an append writes one event row and nothing else. A session's revision
# and last update time are now read from its last event (the (sid, seq) primary
# key is the optimistic lock, see adk_yuxi/sessions/_rows.py), so the trigger
# that rewrote the session row on every append goes, and with it the two session
# indexes on update_time it churned; list_sessions sorts instead. On SQLite the
# events also become one clustered b-tree keyed (sid, seq) instead of a rowid
# table plus its primary-key index.
_V4_DDL: dict[Backend, list[str]] = {
    "sqlite": [
        """CREATE TABLE yx_events_v4 (
          sid INTEGER NOT NULL REFERENCES yx_sessions (sid) ON DELETE CASCADE,
          seq BIGINT NOT NULL,
          event_id TEXT NOT NULL,
          invocation_id TEXT NOT NULL,
          timestamp FLOAT NOT NULL,
          data TEXT NOT NULL,
          fast_codec TEXT,
          CONSTRAINT pk_yx_events PRIMARY KEY (sid, seq)
        ) WITHOUT ROWID""",
        "INSERT INTO yx_events_v4 (sid, seq, event_id, invocation_id, timestamp, data,"
        " fast_codec) SELECT sid, seq, event_id, invocation_id, timestamp, data, fast_codec"
        " FROM yx_events",
        "DROP TABLE yx_events",  # and its trigger, which is not recreated
        "ALTER TABLE yx_events_v4 RENAME TO yx_events",
        "DROP INDEX IF EXISTS ix_yx_sessions_app_time",
        "DROP INDEX IF EXISTS ix_yx_sessions_user_time",
    ],
    "postgresql": [
        "DROP TRIGGER IF EXISTS yx_events_touch_session ON yx_events",
        "DROP FUNCTION IF EXISTS yx_events_touch_session()",
        "DROP INDEX IF EXISTS ix_yx_sessions_app_time",
        "DROP INDEX IF EXISTS ix_yx_sessions_user_time",
    ],
}


# Step 5: the bump function names its table unqualified, so a write from a session with
# another search_path (an operator's console) failed with "relation does not exist". The
# function now keeps the search path it was migrated under.
_PINNED_BUMP_DDL: dict[Backend, list[str]] = {
    "postgresql": ["ALTER FUNCTION yx_access_bump() SET search_path FROM CURRENT"],
}


# Step 6: windowed session reads and one-statement state appends.
# ``window_floor`` is set on the events a windowed read may start from: on a compaction
# event, the first seq a read must include to give the model what a full read gives
# it; on a rewind, 0 (read everything). The partial index finds a session's latest such
# event in one probe and costs an ordinary append nothing (an index on (sid, timestamp)
# for ``after_timestamp`` cost every append 15% of its floor, for a filter nothing here
# uses). ``state_patch`` carries a session-state delta that a merge patch applies
# exactly (see adk_yuxi/sessions/_state.py); on SQLite a trigger applies it, so such
# an append is one autocommitted INSERT, not a transaction of two statements.
_WINDOW_DDL: dict[Backend, list[str]] = {
    backend: [
        "ALTER TABLE yx_events ADD COLUMN window_floor BIGINT",
        "ALTER TABLE yx_events ADD COLUMN state_patch TEXT",
        "CREATE INDEX ix_yx_events_floor ON yx_events (sid, seq) WHERE window_floor IS NOT NULL",
    ]
    for backend in ("sqlite", "postgresql")
}
_WINDOW_DDL["sqlite"].append(
    """CREATE TRIGGER yx_events_state_patch AFTER INSERT ON yx_events
    WHEN NEW.state_patch IS NOT NULL BEGIN
      UPDATE yx_sessions SET state = json_patch(state, NEW.state_patch) WHERE sid = NEW.sid;
    END"""
)


async def _window(migration: Migration) -> None:
    await migration.run_ddl(_WINDOW_DDL)


async def _pinned_bump(migration: Migration) -> None:
    await migration.run_ddl(_PINNED_BUMP_DDL)


async def _access_marker(migration: Migration) -> None:
    await migration.run_ddl(_ACCESS_MARKER_DDL)


async def _leaner(migration: Migration) -> None:
    await migration.run_ddl(_V4_DDL)


PLATFORM = SchemaPart(
    "platform",
    (
        Step(2, "baseline: sessions, events, states, memories, artifacts, access", _baseline),
        Step(3, "access change marker: yx_access_version, bumped by trigger", _access_marker),
        Step(
            4,
            "an append writes one row: no session trigger or update_time indexes",
            _leaner,
        ),
        Step(5, "the access bump trigger works under any search_path", _pinned_bump),
        Step(6, "windowed reads (window_floor) and one-statement state appends", _window),
    ),
)
SCHEMA_VERSION = PLATFORM.version
register_schema_part(PLATFORM)
