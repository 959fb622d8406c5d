"""Memory services: ADK's memory contract with ranked full-text search, fused with
embeddings when an embedder is given."""

from ._errors import MemoryConfigError, MemoryEmbeddingError, SessionDeletedError
from ._from_env import MEMORY_EMBEDDINGS_ENV, memory_embedder_from_env
from ._sql_memory_service import SqlMemoryService

__all__ = [
    "MEMORY_EMBEDDINGS_ENV",
    "MemoryConfigError",
    "MemoryEmbeddingError",
    "SessionDeletedError",
    "SqlMemoryService",
    "memory_embedder_from_env",
]
