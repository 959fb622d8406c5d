"""Errors of the memory service."""

from __future__ import annotations

from .._sql.errors import YuxiStorageError

__all__ = ["MemoryConfigError", "MemoryEmbeddingError", "SessionDeletedError"]


class SessionDeletedError(YuxiStorageError, ValueError):
    """An ingest of a session (or of its events) made before the session was deleted:
    a job that read the session before the delete would otherwise bring it back."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"Session {session_id!r} was deleted: its events are not taken into memory."
        )
        self.session_id = session_id


class MemoryConfigError(YuxiStorageError, ValueError):
    """Memory embeddings asked for in a way that cannot work (`YUXI_MEMORY_EMBEDDINGS`
    neither on nor off, or on while `YUXI_EMBEDDING_MODEL` is off): raised when the
    service is built, before it serves anything."""


class MemoryEmbeddingError(YuxiStorageError, RuntimeError):
    """The memory service's embedding model failed or answered something unusable.

    Raised by `SqlMemoryService.embed_missing`, before its batch is written; a store
    or a search logs it instead and goes on by text. ``model`` is the embedder's name,
    ``action`` is ``"store"`` or ``"search"``, ``count`` how many texts it was asked
    to embed.
    """

    def __init__(self, *, model: str, action: str, count: int, reason: str) -> None:
        what = f"{count} memories not embedded" if action == "store" else "question not embedded"
        super().__init__(f"{what}: the embedding model {model!r} failed: {reason}")
        self.model = model
        self.action = action
        self.count = count
        self.reason = reason
