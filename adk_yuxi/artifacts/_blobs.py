"""Content-addressed payload files for the artifact service.

Artifact bytes live in files named by their SHA-256 (``root/ab/cd/abcd...``); the
database holds metadata and a reference count per digest. Why files and not
BLOB columns: a payload is hashed and written straight from the caller's bytes
and read back with one allocation, so a large artifact is never held twice in
memory (database drivers copy parameters and results at least once more), and
identical payloads are stored once. Files are written to a temporary name and
renamed into place, so a reader never sees a partial payload.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

from .._sql.errors import ArtifactTooLargeError

_TEXT_CHUNK = 1 << 20


class BlobStore:
    """Payload files under one root directory, named by content digest."""

    def __init__(self, root: Path) -> None:
        self.root = root.expanduser().resolve()
        self._tmp = self.root / ".tmp"

    def path(self, digest: str) -> Path:
        """The file holding the payload with this digest."""
        return self.root / digest[:2] / digest[2:4] / digest

    def _publish(self, tmp_path: Path, digest: str) -> None:
        final = self.path(digest)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp_path, final)

    def _temp(self) -> tuple[int, Path]:
        self._tmp.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=self._tmp, prefix="blob-")
        return fd, Path(name)

    def write_bytes(self, data: bytes) -> tuple[str, int]:
        """Stores bytes (written from the caller's buffer, not copied)."""
        digest = hashlib.sha256(data).hexdigest()
        if self._present(digest, len(data)):
            self._touch(digest)  # a reused orphan is young again for the sweep
            return digest, len(data)
        fd, tmp_path = self._temp()
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            self._publish(tmp_path, digest)
        except BaseException:
            tmp_path.unlink(missing_ok=True)
            raise
        return digest, len(data)

    def write_text(self, text: str, *, limit: int, filename: str) -> tuple[str, int]:
        """Stores text as UTF-8, encoding chunk by chunk and enforcing ``limit``."""
        if len(text) > limit:  # every character is at least one byte
            raise ArtifactTooLargeError(filename=filename, size=len(text), limit=limit)
        hasher = hashlib.sha256()
        size = 0
        fd, tmp_path = self._temp()
        try:
            with os.fdopen(fd, "wb") as handle:
                for start in range(0, len(text), _TEXT_CHUNK):
                    chunk = text[start : start + _TEXT_CHUNK].encode("utf-8")
                    size += len(chunk)
                    if size > limit:
                        raise ArtifactTooLargeError(filename=filename, size=size, limit=limit)
                    hasher.update(chunk)
                    handle.write(chunk)
            digest = hasher.hexdigest()
            if self._present(digest, size):
                tmp_path.unlink(missing_ok=True)
                self._touch(digest)
            else:
                self._publish(tmp_path, digest)
        except BaseException:
            tmp_path.unlink(missing_ok=True)
            raise
        return digest, size

    def _present(self, digest: str, size: int) -> bool:
        return self.present(digest, size)

    def _touch(self, digest: str) -> None:
        # Removed meanwhile: the save rewrites it under the digest's lock.
        with contextlib.suppress(FileNotFoundError):
            os.utime(self.path(digest))

    def present(self, digest: str, size: int) -> bool:
        """Whether the payload file exists with the expected size."""
        try:
            return self.path(digest).stat().st_size == size
        except FileNotFoundError:
            return False

    def digests_older_than(self, cutoff: float) -> list[str]:
        """Digests of payload files last modified before ``cutoff`` (epoch seconds)."""
        found: list[str] = []
        for path in self.root.glob("??/??/*"):
            name = path.name
            if len(name) != 64 or name[:2] != path.parent.parent.name:
                continue
            try:
                if path.stat().st_mtime < cutoff:
                    found.append(name)
            except FileNotFoundError:
                continue
        return found

    def remove_temporaries_older_than(self, cutoff: float) -> None:
        """Removes temporary files left by writers that died before publishing."""
        if not self._tmp.is_dir():
            return
        for path in self._tmp.glob("blob-*"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink(missing_ok=True)
            except FileNotFoundError:
                continue

    def read_bytes(self, digest: str) -> bytes | None:
        """The payload, or None if its file is missing."""
        try:
            return self.path(digest).read_bytes()
        except FileNotFoundError:
            return None

    def read_text(self, digest: str) -> str | None:
        """The payload decoded as UTF-8, or None if its file is missing."""
        try:
            return self.path(digest).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def remove(self, digest: str) -> None:
        """Deletes a payload file; a missing file is fine."""
        self.path(digest).unlink(missing_ok=True)
