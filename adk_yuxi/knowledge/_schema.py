"""The knowledge tables: bases, files, parsed text, chunks and their term data.

The ``knowledge`` part of the schema's migration home, registered when this package is
imported, so every store applies it on its next ``ready()``. Base and file rows carry
no rights: who may read a knowledge base is its share config in ``yx_resources`` (kind
``knowledge_base``, same id).
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Connection

from .._sql import Migration, SchemaPart, Step
from .._sql.urls import Backend
from ._terms import chunk_terms

__all__ = ["KNOWLEDGE_DDL", "KNOWLEDGE_SCHEMA"]

_COMMON = [
    """CREATE TABLE IF NOT EXISTS yx_kb_bases (
      kb_id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      description TEXT NOT NULL DEFAULT '',
      created_at DOUBLE PRECISION NOT NULL)""",
    "CREATE UNIQUE INDEX IF NOT EXISTS ux_yx_kb_bases_name ON yx_kb_bases (name)",
    """CREATE TABLE IF NOT EXISTS yx_kb_files (
      file_id TEXT PRIMARY KEY,
      kb_id TEXT NOT NULL REFERENCES yx_kb_bases (kb_id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      mime_type TEXT NOT NULL,
      title TEXT,
      size BIGINT NOT NULL,
      sha256 TEXT NOT NULL,
      total_lines INTEGER NOT NULL,
      chunk_count INTEGER NOT NULL,
      version INTEGER NOT NULL,
      updated_at DOUBLE PRECISION NOT NULL,
      CONSTRAINT uq_yx_kb_files_name UNIQUE (kb_id, name))""",
    """CREATE TABLE IF NOT EXISTS yx_kb_texts (
      file_id TEXT PRIMARY KEY REFERENCES yx_kb_files (file_id) ON DELETE CASCADE,
      markdown TEXT NOT NULL)""",
]

_CHUNK_COLUMNS = """
      file_id TEXT NOT NULL REFERENCES yx_kb_files (file_id) ON DELETE CASCADE,
      kb_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      start_line INTEGER NOT NULL,
      end_line INTEGER NOT NULL,
      content TEXT NOT NULL,
      scope TEXT NOT NULL,
      body TEXT NOT NULL)"""

KNOWLEDGE_DDL: dict[Backend, list[str]] = {
    "sqlite": [
        *_COMMON,
        "CREATE TABLE IF NOT EXISTS yx_kb_chunks (cid INTEGER PRIMARY KEY AUTOINCREMENT,"
        + _CHUNK_COLUMNS,
        "CREATE INDEX IF NOT EXISTS ix_yx_kb_chunks_file ON yx_kb_chunks (file_id, seq)",
        """CREATE VIRTUAL TABLE IF NOT EXISTS yx_kb_chunks_fts USING fts5(
          scope, body, content='yx_kb_chunks', content_rowid='cid',
          tokenize='unicode61 remove_diacritics 0')""",
        """CREATE VIRTUAL TABLE IF NOT EXISTS yx_kb_chunks_vocab
          USING fts5vocab(yx_kb_chunks_fts, row)""",
        """CREATE TRIGGER IF NOT EXISTS yx_kb_chunks_ai AFTER INSERT ON yx_kb_chunks BEGIN
          INSERT INTO yx_kb_chunks_fts(rowid, scope, body) VALUES (new.cid, new.scope, new.body);
        END""",
        """CREATE TRIGGER IF NOT EXISTS yx_kb_chunks_ad AFTER DELETE ON yx_kb_chunks BEGIN
          INSERT INTO yx_kb_chunks_fts(yx_kb_chunks_fts, rowid, scope, body)
          VALUES ('delete', old.cid, old.scope, old.body);
        END""",
    ],
    "postgresql": [
        *_COMMON,
        "CREATE TABLE IF NOT EXISTS yx_kb_chunks (cid BIGSERIAL PRIMARY KEY," + _CHUNK_COLUMNS,
        "CREATE INDEX IF NOT EXISTS ix_yx_kb_chunks_file ON yx_kb_chunks (file_id, seq)",
        """ALTER TABLE yx_kb_chunks ADD COLUMN IF NOT EXISTS tsv tsvector
          GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, scope || ' ' || body)) STORED""",
        "CREATE INDEX IF NOT EXISTS ix_yx_kb_chunks_tsv ON yx_kb_chunks USING GIN (tsv)",
    ],
}


async def _baseline(m: Migration) -> None:
    await m.run_ddl(KNOWLEDGE_DDL)


async def _rank_on_body(m: Migration) -> None:
    # FTS5's `rank` column as BM25 over the body alone (the scope column only filters),
    # so a query can order by `rank` inside the full-text index before any join.
    await m.run_ddl(
        {
            "sqlite": [
                "INSERT INTO yx_kb_chunks_fts(yx_kb_chunks_fts, rank)"
                " VALUES ('rank', 'bm25(0.0, 1.0)')"
            ]
        }
    )


_TERMS_TABLE = """
      kb_id TEXT NOT NULL,
      file_id TEXT NOT NULL,
      term_count INTEGER NOT NULL,
      term_keys {blob} NOT NULL,
      term_freqs {blob} NOT NULL)"""

# Term data in a table of its own: chunk rows stay small (a hit's row is one page read),
# and building an index reads only this table.
_TERM_TABLES: dict[Backend, list[str]] = {
    "sqlite": [
        "DROP TRIGGER IF EXISTS yx_kb_chunks_ai",
        "DROP TRIGGER IF EXISTS yx_kb_chunks_ad",
        "DROP TABLE IF EXISTS yx_kb_chunks_vocab",
        "DROP TABLE IF EXISTS yx_kb_chunks_fts",
        "ALTER TABLE yx_kb_chunks DROP COLUMN scope",
        "ALTER TABLE yx_kb_chunks DROP COLUMN body",
        "CREATE TABLE yx_kb_terms (cid INTEGER PRIMARY KEY," + _TERMS_TABLE.format(blob="BLOB"),
    ],
    "postgresql": [
        "DROP INDEX IF EXISTS ix_yx_kb_chunks_tsv",
        "ALTER TABLE yx_kb_chunks DROP COLUMN tsv, DROP COLUMN scope, DROP COLUMN body",
        "CREATE TABLE yx_kb_terms (cid BIGINT PRIMARY KEY," + _TERMS_TABLE.format(blob="BYTEA"),
    ],
}
_TERM_COMMON = [
    "ALTER TABLE yx_kb_bases ADD COLUMN revision TEXT NOT NULL DEFAULT ''",
    "CREATE INDEX ix_yx_kb_terms_kb ON yx_kb_terms (kb_id, file_id, cid)",
    "CREATE INDEX ix_yx_kb_terms_file ON yx_kb_terms (file_id)",
]


def _backfill_terms(conn: Connection) -> None:
    """Term rows for the chunks already stored, a thousand at a time."""
    select = text(
        "SELECT cid, kb_id, file_id, content FROM yx_kb_chunks WHERE cid > :after"
        " ORDER BY cid LIMIT 1000"
    )
    insert = text(
        "INSERT INTO yx_kb_terms (cid, kb_id, file_id, term_count, term_keys, term_freqs)"
        " VALUES (:cid, :kb, :f, :n, :keys, :freqs)"
    )
    after = 0
    while rows := conn.execute(select, {"after": after}).all():
        batch = []
        for cid, kb_id, file_id, content in rows:
            terms = chunk_terms(content)
            batch.append(
                {"cid": cid, "kb": kb_id, "f": file_id, "n": terms.length,
                 "keys": terms.key_bytes(), "freqs": terms.freq_bytes()}
            )  # fmt: skip
        conn.execute(insert, batch)
        after = int(rows[-1][0])


async def _term_index(m: Migration) -> None:
    # The in-memory BM25 index (`_index`) replaces FTS5 / tsvector: each chunk has a row of
    # term keys and frequencies instead, and each base a revision that every write changes.
    await m.run_ddl(_TERM_TABLES)
    for statement in _TERM_COMMON:
        await m.execute(statement)
    await m.run_sync(_backfill_terms)


KNOWLEDGE_SCHEMA = SchemaPart(
    "knowledge",
    (
        Step(1, "knowledge bases, files, parsed text, chunks and their full-text index", _baseline),
        Step(2, "FTS5 rank = BM25 over the chunk body", _rank_on_body),
        Step(3, "per-chunk term keys for the in-memory index; base revisions", _term_index),
    ),
)
