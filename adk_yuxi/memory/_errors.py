"""Errors of the memory service."""

from __future__ import annotations

from .._sql.errors import YuxiStorageError

__all__ = ["SessionDeletedError"]


class SessionDeletedError(YuxiStorageError, ValueError):
    """An ingest of a session (or of its events) made before the session was deleted:
    a job that read the session before the delete would otherwise bring it back."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"Session {session_id!r} was deleted: its events are not taken into memory."
        )
        self.session_id = session_id
