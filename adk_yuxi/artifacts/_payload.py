"""One artifact version's stored bytes, opened as a file for streaming.

`load_artifact` returns the whole payload in memory (ADK's interface); a host that
sends a large artifact to a client opens its content-addressed file instead and
reads it chunk by chunk. The file is opened before it is handed out: a delete that
removes the payload afterwards does not cut a download short (POSIX keeps an open
file readable).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from google.adk.artifacts import artifact_util
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types

from .._sql.errors import YuxiStorageError
from .._sql.store import SqlStore
from ._blobs import BlobStore
from ._scope import artifact_key

__all__ = ["ArtifactNotStoredError", "ArtifactPayload", "PayloadReader", "is_tombstone"]

_MAX_REFERENCE_DEPTH = 5
_KEY = "app_name = :app AND user_id = :user AND scope = :scope AND filename = :name"
_COLUMNS = "version, kind, mime_type, display_name, digest, size, part"


class ArtifactNotStoredError(YuxiStorageError):
    """The version refers to a file outside the artifact store (a `file_data` URI)."""


@dataclass
class ArtifactPayload:
    """An open payload file; `close()` it (or read it to the end with `chunks`)."""

    version: int
    mime_type: str
    size: int
    digest: str
    display_name: str | None
    file: BinaryIO

    def chunks(self, chunk_size: int = 64 * 1024) -> Iterator[bytes]:
        """The bytes in order, at most `size` of them; closes the file at the end."""
        try:
            left = self.size
            while left > 0:
                chunk = self.file.read(min(chunk_size, left))
                if not chunk:
                    return
                left -= len(chunk)
                yield chunk
        finally:
            self.file.close()

    def close(self) -> None:
        self.file.close()


def is_tombstone(mime_type: str | None, size: int, display_name: str | None) -> bool:
    # ADK's session rewind saves an empty octet-stream part to mean "absent".
    return mime_type == "application/octet-stream" and size == 0 and display_name is None


class PayloadReader:
    """Finds a version's payload (following `artifact://` references) and opens it."""

    def __init__(self, store: SqlStore, blobs: BlobStore) -> None:
        self._store = store
        self._blobs = blobs

    async def _row(self, key: dict[str, Any], version: int | None) -> Any:
        sql = f"SELECT {_COLUMNS} FROM yx_artifact_versions WHERE {_KEY}"
        params = dict(key)
        if version is None:
            sql += " ORDER BY version DESC LIMIT 1"
        else:
            sql += " AND version = :version"
            params["version"] = int(version)
        async with self._store.read() as tx:
            return await tx.fetchone(sql, params)

    async def open(
        self,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None,
        version: int | None,
        depth: int = 0,
    ) -> ArtifactPayload | None:
        key = artifact_key(app_name, user_id, filename, session_id)
        row = await self._row(key, version)
        if row is None:
            return None
        number, kind, mime_type, display_name, digest, size, part_json = row
        if kind == "file":
            part = types.Part.model_validate_json(part_json)
            if not artifact_util.is_artifact_ref(part):
                raise ArtifactNotStoredError(
                    "this artifact version refers to a file outside the artifact store"
                )
            try:
                target = artifact_util.resolve_artifact_reference(
                    file_uri=str(part.file_data.file_uri if part.file_data else ""),
                    app_name=key["app"],
                    user_id=key["user"],
                    session_id=session_id,
                    remaining_depth=_MAX_REFERENCE_DEPTH - depth,
                )
            except InputValidationError as exc:  # a loop, or a target out of this scope
                raise ArtifactNotStoredError(
                    "this artifact version refers to an artifact it cannot reach"
                ) from exc
            return await self.open(
                target.app_name,
                target.user_id,
                target.filename,
                target.session_id,
                target.version,
                depth + 1,
            )
        if kind != "text" and is_tombstone(mime_type, int(size), display_name):
            return None
        try:
            handle = await asyncio.to_thread(self._blobs.path(digest).open, "rb")
        except FileNotFoundError:
            # Deleted since the row was read, or the blob directory is not this database's.
            if await self._row(key, int(number)) is None:
                return None
            raise YuxiStorageError(
                f"Payload of artifact {key['name']!r} is missing from the blob directory"
                f" (blob {digest}); the blob directory does not match the database."
            ) from None
        if os.fstat(handle.fileno()).st_size != int(size):
            handle.close()
            raise YuxiStorageError(
                f"Payload of artifact {key['name']!r} (blob {digest}) has the wrong size;"
                " the blob directory does not match the database."
            )
        return ArtifactPayload(
            version=int(number),
            mime_type="text/plain; charset=utf-8" if kind == "text" else str(mime_type),
            size=int(size),
            digest=str(digest),
            display_name=display_name,
            file=handle,
        )
