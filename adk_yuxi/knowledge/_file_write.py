"""The rows of one file as ingest writes them: its metadata, chunks and term rows, and
the base's revision that every write moves, all inside the caller's transaction."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from .._sql.store import Tx
from ._cancel import checkpoint, whole
from ._chunking import Chunk
from ._errors import UnknownKnowledgeBaseError
from ._models import KnowledgeFile
from ._progress import IngestProgress
from ._terms import ChunkTerms

__all__ = [
    "FILE_COLUMNS", "delete_file_rows", "file_from_row", "insert_chunks", "new_revision",
    "touch", "upsert_file",
]  # fmt: skip

FILE_COLUMNS = (
    "file_id, kb_id, name, mime_type, title, size, sha256, total_lines, chunk_count, version,"
    " updated_at"
)
_BATCH = 500


def file_from_row(row: Sequence[Any]) -> KnowledgeFile:
    return KnowledgeFile(
        row[0], row[1], row[2], row[3], row[4], int(row[5]), row[6], int(row[7]), int(row[8]),
        int(row[9]), float(row[10]),
    )  # fmt: skip


def new_revision() -> str:
    return uuid.uuid4().hex


async def touch(tx: Tx, kb_id: str) -> None:
    """A new revision of the base, in the writing transaction: search indexes built
    before it are stale from its commit on."""
    changed = await tx.execute(
        "UPDATE yx_kb_bases SET revision = :rev WHERE kb_id = :kb",
        {"rev": new_revision(), "kb": kb_id},
    )
    if not changed:
        raise UnknownKnowledgeBaseError(kb_id)


async def delete_file_rows(tx: Tx, file_id: str) -> None:
    """The file's terms, vectors, chunks and text (its own row stays)."""
    for table in ("yx_kb_terms", "yx_kb_vectors", "yx_kb_chunks", "yx_kb_texts"):
        await tx.execute(f"DELETE FROM {table} WHERE file_id = :f", {"f": file_id})


async def upsert_file(tx: Tx, meta: dict[str, Any]) -> str:
    """The file's row with this metadata, its version moved on when it existed; its id."""
    found = await tx.fetchone(
        "SELECT file_id FROM yx_kb_files WHERE kb_id = :kb_id AND name = :name", meta
    )
    if found is not None:
        await tx.execute(
            "UPDATE yx_kb_files SET mime_type = :mime_type, title = :title, size = :size,"
            " sha256 = :sha256, total_lines = :total_lines, chunk_count = :chunk_count,"
            " version = version + 1, updated_at = :updated_at WHERE file_id = :file_id",
            {**meta, "file_id": found[0]},
        )
        return str(found[0])
    file_id = f"f_{uuid.uuid4().hex[:20]}"
    await tx.execute(
        f"INSERT INTO yx_kb_files ({FILE_COLUMNS}) VALUES (:file_id, :kb_id, :name,"
        " :mime_type, :title, :size, :sha256, :total_lines, :chunk_count, 1, :updated_at)",
        {**meta, "file_id": file_id},
    )
    return file_id


async def insert_chunks(
    tx: Tx,
    kb_id: str,
    file_id: str,
    chunks: list[Chunk],
    terms: list[ChunkTerms],
    progress: IngestProgress | None,
) -> None:
    """The chunks and their term rows, in batches a cancellation never cuts."""
    if progress:
        progress.stage("indexing chunks", len(chunks))
    for at in range(0, len(chunks), _BATCH):
        # A checkpoint per batch, and one before the commit: a cancellation (Ctrl-C)
        # lands here, inside the transaction, which then rolls back; never after it.
        await checkpoint()
        batch = chunks[at : at + _BATCH]
        await whole(tx.executemany(
            "INSERT INTO yx_kb_chunks (file_id, kb_id, seq, start_line, end_line, content)"
            " VALUES (:f, :kb, :seq, :start, :end, :content)",
            [
                {"f": file_id, "kb": kb_id, "seq": c.seq, "start": c.start_line,
                 "end": c.end_line, "content": c.content}
                for c in batch
            ],
        ))  # fmt: skip
        await whole(tx.executemany(
            "INSERT INTO yx_kb_terms (cid, kb_id, file_id, term_count, term_keys, term_freqs)"
            " VALUES ((SELECT cid FROM yx_kb_chunks WHERE file_id = :f AND seq = :seq),"
            " :kb, :f, :n, :keys, :freqs)",
            [
                {"f": file_id, "kb": kb_id, "seq": c.seq, "n": t.length,
                 "keys": t.key_bytes(), "freqs": t.freq_bytes()}
                for c, t in zip(batch, terms[at : at + _BATCH], strict=True)
            ],
        ))  # fmt: skip
        if progress:
            progress.advance(len(batch))
