"""The ``memory_vectors`` schema part: one embedding per memory row, and its model.

A side table keyed by the memory row (``mid``), so memories without an embedder stay
exactly as they were and vectors migrate on their own. A vector never outlives the
text it was made from, whoever changes the row and whatever process it runs in: the
row's deletion removes it (foreign key, cascading), and so does any change of the
row's indexed text (a trigger), which covers a deleted memory or session (a tombstone
clears its text) and a memory replaced by ``add_memory``. Registered on import: a
process without an embedder still deletes memories, and their vectors go with them.
"""

from __future__ import annotations

from .._sql import Migration, SchemaPart, Step, register_schema_part
from .._sql.urls import Backend

__all__ = ["MEMORY_VECTOR_SCHEMA"]

_TABLE = """CREATE TABLE IF NOT EXISTS yx_memory_vectors (
      mid {mid} PRIMARY KEY REFERENCES yx_memories (mid) ON DELETE CASCADE,
      model TEXT NOT NULL,
      vector {blob} NOT NULL)"""
_DDL: dict[Backend, list[str]] = {
    "sqlite": [
        _TABLE.format(mid="INTEGER", blob="BLOB"),
        """CREATE TRIGGER IF NOT EXISTS yx_memories_vector_stale
        AFTER UPDATE OF body ON yx_memories WHEN old.body IS NOT new.body BEGIN
          DELETE FROM yx_memory_vectors WHERE mid = old.mid;
        END""",
    ],
    "postgresql": [
        _TABLE.format(mid="BIGINT", blob="BYTEA"),
        # The search path pinned, as for the access bump (platform step 5).
        """CREATE OR REPLACE FUNCTION yx_memories_vector_stale() RETURNS trigger
        LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        BEGIN
          DELETE FROM yx_memory_vectors WHERE mid = OLD.mid;
          RETURN NULL;
        END $$""",
        """CREATE TRIGGER yx_memories_vector_stale AFTER UPDATE OF body ON yx_memories
        FOR EACH ROW WHEN (OLD.body IS DISTINCT FROM NEW.body)
        EXECUTE FUNCTION yx_memories_vector_stale()""",
    ],
}


async def _baseline(m: Migration) -> None:
    await m.run_ddl(_DDL)


MEMORY_VECTOR_SCHEMA = SchemaPart(
    "memory_vectors",
    (Step(1, "memory vectors, removed with their row or when its text changes", _baseline),),
)
register_schema_part(MEMORY_VECTOR_SCHEMA)
