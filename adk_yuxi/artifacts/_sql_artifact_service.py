"""ADK artifact service: metadata in the platform database, bytes in blob files.

Versions are numbered from 0 per (app, user, scope, name) by the database
(``INSERT ... SELECT MAX(version) + 1`` under the primary key), so concurrent
saves of one name in any number of processes get distinct versions; on
PostgreSQL a save that loses the race retries. User-scoped artifacts (a
``user:`` name, or any name saved without a session) are stored and listed
under their ``user:`` name, so a listed name always loads as written.

A save writes the payload file, then (holding the digest's lock) references it,
inserts the version row and rewrites the file if a delete removed it meanwhile.
A delete commits its rows as gone before any file goes (``_orphans``): a crash
or cancellation leaves an orphan file, never a version without bytes. Nothing
is written for a payload that is too large or malformed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import (
    ArtifactVersion,
    BaseArtifactService,
    ensure_part,
)
from google.genai import types
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from .._sql.errors import (
    ArtifactTooLargeError,
    InvalidArtifactError,
    YuxiStorageError,
)
from .._sql.jsoncodec import check_text, dumps_checked, json_safe
from .._sql.names import check_app_name, check_session_id, check_user_id
from .._sql.store import IntegrityViolation, SqlStore, Tx, make_store
from ._blobs import BlobStore
from ._forget import drop_references, forget_session_versions
from ._orphans import DEFAULT_SWEEP_GRACE_S, OrphanPayloads, blob_lock
from ._payload import ArtifactPayload, PayloadReader, is_tombstone
from ._scope import artifact_key, artifact_version, check_reference

logger = logging.getLogger(__name__)

DEFAULT_MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
_MAX_REFERENCE_DEPTH = 5
_SAVE_ATTEMPTS = 20
# File I/O above this size runs in a worker thread to keep the event loop free.
_THREAD_THRESHOLD = 256 * 1024
_KEY = "app_name = :app AND user_id = :user AND scope = :scope AND filename = :name"
_META = "version, mime_type, custom_metadata, create_time"


class SqlArtifactService(BaseArtifactService):
    """Versioned artifacts with metadata in SQL and payloads stored by digest.

    Args:
      db: An SQLAlchemy async URL or an existing ``AsyncEngine``.
      blob_dir: Directory for payload files. Defaults to ``<db file>.blobs`` on
        SQLite and ``.yuxi/blobs`` on PostgreSQL; processes sharing a database
        must share this directory.
      max_artifact_bytes: Saves above this size raise ``ArtifactTooLargeError``.
      **engine_kwargs: Passed to ``create_async_engine`` when ``db`` is a URL.
    """

    def __init__(
        self,
        db: str | URL | AsyncEngine | SqlStore,
        *,
        blob_dir: str | Path | None = None,
        max_artifact_bytes: int | None = None,
        **engine_kwargs: Any,
    ) -> None:
        self._store, self._owns_store = make_store(db, **engine_kwargs)
        if max_artifact_bytes is None:
            max_artifact_bytes = int(
                self._store.options.get("max_artifact_bytes", DEFAULT_MAX_ARTIFACT_BYTES)
            )
        if max_artifact_bytes < 1:
            raise ValueError("max_artifact_bytes must be at least 1.")
        self.max_artifact_bytes = max_artifact_bytes
        root = Path(blob_dir) if blob_dir is not None else self._store.default_blob_dir()
        self._blobs = BlobStore(root)
        self._orphans = OrphanPayloads(self._store, self._blobs)
        self._payloads = PayloadReader(self._store, self._blobs)

    async def close(self) -> None:
        """Releases connections (and the engine, if this service created it)."""
        if self._owns_store:
            await self._store.close()

    async def _io(self, size: int, func: Any, *args: Any) -> Any:
        if size > _THREAD_THRESHOLD:
            return await asyncio.to_thread(func, *args)
        return func(*args)

    # --- save -----------------------------------------------------------------

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        key = artifact_key(app_name, user_id, filename, session_id)
        part = ensure_part(artifact)
        row: dict[str, Any] = {
            **key,
            "display": None,
            "digest": None,
            "size": 0,
            "part": None,
            "meta": dumps_checked(json_safe(custom_metadata or {}), "artifact custom_metadata"),
            "ts": time.time(),
        }
        if part.inline_data is not None:
            data = part.inline_data.data
            if data is None:
                raise InvalidArtifactError(f"Artifact {filename!r} has inline_data without data.")
            if len(data) > self.max_artifact_bytes:
                raise ArtifactTooLargeError(
                    filename=filename, size=len(data), limit=self.max_artifact_bytes
                )
            row.update(kind="inline", mime=part.inline_data.mime_type or "application/octet-stream")
            display = part.inline_data.display_name
            row["display"] = None if display is None else check_text(display, "display name")
            row["digest"], row["size"] = await self._io(len(data), self._blobs.write_bytes, data)
        elif part.text is not None:
            row.update(kind="text", mime="text/plain")
            row["digest"], row["size"] = await self._io(
                len(part.text), self._write_text, part.text, filename
            )
        elif part.file_data is not None:
            check_reference(part, key, session_id)
            row.update(kind="file", mime=part.file_data.mime_type)
            row["part"] = part.model_dump_json(exclude_none=True)
        else:
            raise InvalidArtifactError(
                f"Artifact {filename!r} has no inline_data, text or file_data to store."
            )
        return await self._insert_version(row, part)

    def _write_text(self, text: str, filename: str) -> tuple[str, int]:
        return self._blobs.write_text(text, limit=self.max_artifact_bytes, filename=filename)

    def _restore_if_missing(self, digest: str, size: int, part: types.Part) -> None:
        if self._blobs.present(digest, size):
            return
        if part.inline_data is not None and part.inline_data.data is not None:
            self._blobs.write_bytes(part.inline_data.data)
        elif part.text is not None:
            self._write_text(part.text, "")

    async def _insert_version(self, row: dict[str, Any], part: types.Part) -> int:
        for _ in range(_SAVE_ATTEMPTS):
            try:
                async with self._store.write() as tx:
                    if row["digest"] is not None:
                        await tx.lock_key(blob_lock(row["digest"]))
                        await tx.execute(
                            "INSERT INTO yx_artifact_blobs (digest, size, refs)"
                            " VALUES (:digest, :size, 1) ON CONFLICT (digest)"
                            " DO UPDATE SET refs = yx_artifact_blobs.refs + 1",
                            row,
                        )
                    result = await tx.fetchone(
                        "INSERT INTO yx_artifact_versions (app_name, user_id, scope, filename,"
                        " version, kind, mime_type, display_name, digest, size, part,"
                        " custom_metadata, create_time)"
                        " SELECT CAST(:app AS TEXT), CAST(:user AS TEXT), CAST(:scope AS TEXT),"
                        " CAST(:name AS TEXT), COALESCE(MAX(version) + 1, 0),"
                        " CAST(:kind AS TEXT), CAST(:mime AS TEXT), CAST(:display AS TEXT),"
                        " CAST(:digest AS TEXT), CAST(:size AS BIGINT), CAST(:part AS TEXT),"
                        " CAST(:meta AS TEXT), CAST(:ts AS DOUBLE PRECISION)"
                        f" FROM yx_artifact_versions WHERE {_KEY} RETURNING version",
                        row,
                    )
                    if row["digest"] is not None:
                        # Under the digest's lock no delete can remove the file
                        # between this check and the commit.
                        await self._io(
                            row["size"], self._restore_if_missing, row["digest"], row["size"], part
                        )
                assert result is not None
                return int(result[0])
            except IntegrityViolation:
                # PostgreSQL: a concurrent save took the same version; try again.
                await asyncio.sleep(0.005)
        raise YuxiStorageError(
            f"Could not allocate a version for artifact {row['name']!r} after"
            f" {_SAVE_ATTEMPTS} attempts under heavy contention."
        )

    # --- load -----------------------------------------------------------------

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        return await self._load(app_name, user_id, filename, session_id, version, 0)

    async def _load(
        self,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None,
        version: int | None,
        depth: int,
    ) -> types.Part | None:
        key = artifact_key(app_name, user_id, filename, session_id)
        async with self._store.read() as tx:
            row = await self._version_row(
                tx, key, version, "kind, mime_type, display_name, digest, size, part"
            )
        if row is None:
            return None
        kind, mime_type, display_name, digest, size, part_json = row
        if kind == "file":
            part = types.Part.model_validate_json(part_json)
            if not artifact_util.is_artifact_ref(part):
                return part
            target = artifact_util.resolve_artifact_reference(
                file_uri=str(part.file_data.file_uri if part.file_data else ""),
                app_name=key["app"],
                user_id=key["user"],
                session_id=session_id,
                remaining_depth=_MAX_REFERENCE_DEPTH - depth,
            )
            return await self._load(
                target.app_name,
                target.user_id,
                target.filename,
                target.session_id,
                target.version,
                depth + 1,
            )
        if kind == "text":
            text = await self._io(int(size), self._blobs.read_text, digest)
            if text is None:
                raise self._missing(key, digest)
            return types.Part(text=text)
        if is_tombstone(mime_type, int(size), display_name):
            return None
        data = await self._io(int(size), self._blobs.read_bytes, digest)
        if data is None:
            raise self._missing(key, digest)
        return types.Part(
            inline_data=types.Blob(mime_type=mime_type, data=data, display_name=display_name)
        )

    async def open_payload(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactPayload | None:
        """A version's bytes as an open file, to stream without loading them whole
        (None: no such version, or a deletion marker); see `_payload`."""
        return await self._payloads.open(app_name, user_id, filename, session_id, version)

    def _missing(self, key: dict[str, Any], digest: str) -> YuxiStorageError:
        return YuxiStorageError(
            f"Payload of artifact {key['name']!r} is missing from {self._blobs.root}"
            f" (blob {digest}); the blob directory does not match the database."
        )

    async def _version_row(
        self, tx: Tx, key: dict[str, Any], version: int | None, columns: str
    ) -> Any:
        if version is None:
            return await tx.fetchone(
                f"SELECT {columns} FROM yx_artifact_versions WHERE {_KEY}"
                " ORDER BY version DESC LIMIT 1",
                key,
            )
        return await tx.fetchone(
            f"SELECT {columns} FROM yx_artifact_versions WHERE {_KEY} AND version = :version",
            {**key, "version": int(version)},
        )

    # --- list / delete / metadata ---------------------------------------------

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[str]:
        params = {
            "app": check_app_name(app_name),
            "user": check_user_id(user_id),
            "scope": check_session_id(session_id) if session_id is not None else "",
        }
        async with self._store.read() as tx:
            rows = await tx.fetchall(
                "SELECT DISTINCT filename FROM yx_artifact_versions WHERE app_name = :app"
                " AND user_id = :user AND (scope = '' OR scope = :scope) ORDER BY filename",
                params,
            )
        return [row[0] for row in rows]

    async def delete_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
    ) -> None:
        key = artifact_key(app_name, user_id, filename, session_id)
        async with self._store.write() as tx:
            rows = await tx.fetchall(
                f"DELETE FROM yx_artifact_versions WHERE {_KEY} RETURNING digest", key
            )
            unreferenced = await drop_references(tx, rows)
        # Only now, with the rows committed as gone: a kill before this point
        # leaves orphan files (swept later), never a version without bytes.
        await self.remove_payloads(unreferenced)

    async def forget_session(
        self, tx: Tx, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        """Inside the caller's transaction: deletes the session's session-scoped
        artifacts; returns the digests for `remove_payloads` after the commit."""
        return await forget_session_versions(tx, app_name, user_id, session_id)

    async def remove_payloads(self, digests: list[str]) -> None:
        """Removes the payload files of `digests` that no committed row references."""
        for digest in digests:
            await self._orphans.remove_if_unreferenced(digest)

    async def sweep_orphans(self, *, older_than: float = DEFAULT_SWEEP_GRACE_S) -> int:
        """Removes payload files no version references; returns how many.

        Files younger than ``older_than`` seconds are left alone (see ``_orphans``);
        safe beside concurrent writers in any number of processes.
        """
        return await self._orphans.sweep(older_than)

    async def list_versions(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
    ) -> list[int]:
        key = artifact_key(app_name, user_id, filename, session_id)
        async with self._store.read() as tx:
            rows = await tx.fetchall(
                f"SELECT version FROM yx_artifact_versions WHERE {_KEY} ORDER BY version", key
            )
        return [int(row[0]) for row in rows]

    async def list_artifact_versions(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
    ) -> list[ArtifactVersion]:
        key = artifact_key(app_name, user_id, filename, session_id)
        async with self._store.read() as tx:
            rows = await tx.fetchall(
                f"SELECT {_META} FROM yx_artifact_versions WHERE {_KEY} ORDER BY version", key
            )
        return [artifact_version(key, row) for row in rows]

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        key = artifact_key(app_name, user_id, filename, session_id)
        async with self._store.read() as tx:
            row = await self._version_row(tx, key, version, _META)
        return None if row is None else artifact_version(key, row)
