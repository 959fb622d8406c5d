"""The ``knowledge_vectors`` schema part: chunk vectors and, per base, the model that made
them and a revision every vector write changes.

A part of its own (registered after ``knowledge``), so vectors migrate independently of
the lexical tables. Vectors are float16 rows, L2-normalised; no database extension
(pgvector, sqlite-vec) is needed: the search index is built in memory from them, or
restored from the serialised index kept beside them (`_dense_snapshot`).
"""

from __future__ import annotations

from .._sql import Migration, SchemaPart, Step
from .._sql.urls import Backend
from ._schema import KNOWLEDGE_SCHEMA

__all__ = ["VECTOR_SCHEMA"]

_VECTORS = """CREATE TABLE IF NOT EXISTS yx_kb_vectors (
      cid {cid} PRIMARY KEY,
      kb_id TEXT NOT NULL,
      file_id TEXT NOT NULL,
      vector {blob} NOT NULL)"""
_COMMON = [
    """CREATE TABLE IF NOT EXISTS yx_kb_embeddings (
      kb_id TEXT PRIMARY KEY,
      model TEXT NOT NULL,
      dims INTEGER NOT NULL,
      revision TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS ix_yx_kb_vectors_kb ON yx_kb_vectors (kb_id, cid)",
    "CREATE INDEX IF NOT EXISTS ix_yx_kb_vectors_file ON yx_kb_vectors (file_id)",
]
_DDL: dict[Backend, list[str]] = {
    "sqlite": [_VECTORS.format(cid="INTEGER", blob="BLOB"), *_COMMON],
    "postgresql": [_VECTORS.format(cid="BIGINT", blob="BYTEA"), *_COMMON],
}


_SNAPSHOTS = """CREATE TABLE IF NOT EXISTS yx_kb_dense_snapshots (
      kb_id TEXT NOT NULL,
      part INTEGER NOT NULL,
      model TEXT NOT NULL,
      data {blob} NOT NULL,
      PRIMARY KEY (kb_id, part))"""


async def _baseline(m: Migration) -> None:
    await m.run_ddl(_DDL)


async def _snapshots(m: Migration) -> None:
    blobs: dict[Backend, str] = {"sqlite": "BLOB", "postgresql": "BYTEA"}
    await m.run_ddl({backend: [_SNAPSHOTS.format(blob=b)] for backend, b in blobs.items()})


VECTOR_SCHEMA = SchemaPart(
    "knowledge_vectors",
    (
        Step(1, "chunk vectors and the model of each base", _baseline),
        Step(2, "serialised dense indexes, restored instead of rebuilt", _snapshots),
    ),
)
_ = KNOWLEDGE_SCHEMA  # registered first: vectors refer to its chunks
