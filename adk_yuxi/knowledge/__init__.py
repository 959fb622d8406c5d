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
from ._results import (
    DocumentWindow,
    FileInfo,
    FindResult,
    KbInfo,
    ListKbsResult,
    MatchWindow,
    QueryHit,
    QueryResult,
    SearchFileResult,
)
from ._search import ChunkHit
from ._server import KNOWLEDGE_TOOL_NAMES, build_knowledge_server, serve_knowledge_http
from ._service import KnowledgeService
from ._store import KnowledgeStore

__all__ = [
    "DEFAULT_AUDIENCE",
    "KNOWLEDGE_TOOL_NAMES",
    "MAX_TTL_SECONDS",
    "Chunk",
    "ChunkHit",
    "Delegation",
    "DelegationError",
    "DelegationKeys",
    "DelegationSigner",
    "DelegationVerifier",
    "DocumentWindow",
    "FileInfo",
    "FindResult",
    "IngestProgress",
    "InvalidKnowledgeRequestError",
    "KbInfo",
    "KnowledgeAccessDenied",
    "KnowledgeBase",
    "KnowledgeError",
    "KnowledgeFile",
    "KnowledgeService",
    "KnowledgeStore",
    "ListKbsResult",
    "MatchWindow",
    "QueryHit",
    "QueryResult",
    "SearchFileResult",
    "TerminalProgress",
    "UnknownFileError",
    "UnknownKnowledgeBaseError",
    "build_knowledge_server",
    "chunk_lines",
    "serve_knowledge_http",
]
