"""Memory services: ADK's memory contract with ranked full-text search, fused with
embeddings when an embedder is given."""

from ._errors import MemoryEmbeddingError, SessionDeletedError
from ._sql_memory_service import SqlMemoryService

__all__ = ["MemoryEmbeddingError", "SessionDeletedError", "SqlMemoryService"]
