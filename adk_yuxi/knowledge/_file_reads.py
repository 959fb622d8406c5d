"""Reading a store's files: one, a page of them by name, their counts, their text.

A mixin of `KnowledgeStore` (its file reads, apart from ingest and search); like the
rest of the store it answers for data, not rights.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._sql.store import SqlStore
from ._errors import UnknownFileError
from ._file_write import FILE_COLUMNS, file_from_row
from ._models import KnowledgeFile

__all__ = ["FileReads"]


def _like_pattern(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class FileReads:
    """The file reads of `KnowledgeStore`."""

    _store: SqlStore

    async def prepare(self) -> None:
        raise NotImplementedError

    async def get_file(self, kb_id: str, file_id: str) -> KnowledgeFile:
        await self.prepare()
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {FILE_COLUMNS} FROM yx_kb_files WHERE file_id = :f AND kb_id = :kb",
                {"f": file_id, "kb": kb_id},
            )
        if row is None:
            raise UnknownFileError(kb_id, file_id)
        return file_from_row(row)

    async def list_files(self, kb_id: str) -> list[KnowledgeFile]:
        files, _ = await self.search_files([kb_id], None, offset=0, limit=1_000_000)
        return files

    async def search_files(
        self, kb_ids: Iterable[str], query: str | None, *, offset: int, limit: int
    ) -> tuple[list[KnowledgeFile], int]:
        """Files of ``kb_ids`` whose name contains ``query`` (case-insensitive), by name,
        one page of them and the total count."""
        await self.prepare()
        params: dict[str, Any] = {f"k{i}": k for i, k in enumerate(sorted(set(kb_ids)))}
        if not params:
            return [], 0
        where = f"kb_id IN ({', '.join(':' + key for key in params)})"
        if query:
            where += " AND lower(name) LIKE :pattern ESCAPE '\\'"
            params["pattern"] = _like_pattern(query)
        async with self._store.read() as tx:
            total_row = await tx.fetchone(f"SELECT count(*) FROM yx_kb_files WHERE {where}", params)
            rows = await tx.fetchall(
                f"SELECT {FILE_COLUMNS} FROM yx_kb_files WHERE {where}"
                " ORDER BY name, file_id LIMIT :limit OFFSET :offset",
                {**params, "limit": limit, "offset": offset},
            )
        return [file_from_row(row) for row in rows], int(total_row[0]) if total_row else 0

    async def file_counts(self, kb_ids: Iterable[str]) -> dict[str, int]:
        await self.prepare()
        params = {f"k{i}": k for i, k in enumerate(sorted(set(kb_ids)))}
        if not params:
            return {}
        async with self._store.read() as tx:
            rows = await tx.fetchall(
                "SELECT kb_id, count(*) FROM yx_kb_files"
                f" WHERE kb_id IN ({', '.join(':' + key for key in params)}) GROUP BY kb_id",
                params,
            )
        return {row[0]: int(row[1]) for row in rows}

    async def read_text(self, kb_id: str, file_id: str) -> tuple[KnowledgeFile, str]:
        """The file and its parsed Markdown (lines as numbered by search hits)."""
        await self.prepare()
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {', '.join('f.' + c.strip() for c in FILE_COLUMNS.split(','))},"
                " t.markdown FROM yx_kb_files f JOIN yx_kb_texts t ON t.file_id = f.file_id"
                " WHERE f.file_id = :f AND f.kb_id = :kb",
                {"f": file_id, "kb": kb_id},
            )
        if row is None:
            raise UnknownFileError(kb_id, file_id)
        return file_from_row(row[:11]), str(row[11])
