"""Knowledge bases: ingestion into the platform database, ranked search in Chinese and
English, and the built-in knowledge MCP server reached with per-user delegation."""

from ._chunking import Chunk, chunk_lines
from ._delegation import (
    DEFAULT_AUDIENCE,
    MAX_TTL_SECONDS,
    Delegation,
    DelegationKeys,
    DelegationSigner,
    DelegationVerifier,
)
from ._errors import (
    DelegationError,
    InvalidKnowledgeRequestError,
    KnowledgeAccessDenied,
    KnowledgeError,
    UnknownFileError,
    UnknownKnowledgeBaseError,
)
from ._models import KnowledgeBase, KnowledgeFile
from ._progress import IngestProgress, TerminalProgress
from ._search import ChunkHit
from ._store import KnowledgeStore

__all__ = [
    "DEFAULT_AUDIENCE",
    "MAX_TTL_SECONDS",
    "Chunk",
    "ChunkHit",
    "Delegation",
    "DelegationError",
    "DelegationKeys",
    "DelegationSigner",
    "DelegationVerifier",
    "IngestProgress",
    "InvalidKnowledgeRequestError",
    "KnowledgeAccessDenied",
    "KnowledgeBase",
    "KnowledgeError",
    "KnowledgeFile",
    "KnowledgeStore",
    "TerminalProgress",
    "UnknownFileError",
    "UnknownKnowledgeBaseError",
    "chunk_lines",
]
