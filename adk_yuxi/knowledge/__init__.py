"""Knowledge bases: ingestion into the platform database, ranked search in Chinese and
English, and the built-in knowledge MCP server reached with per-user delegation."""

from ._builtin import (
    KNOWLEDGE_SERVER_NAME,
    KNOWLEDGE_SKILL_DIR,
    KNOWLEDGE_SKILL_NAME,
    SESSION_SELECTION_KEY,
    KnowledgeDelegation,
    install_knowledge,
)
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
    "KNOWLEDGE_SERVER_NAME",
    "KNOWLEDGE_SKILL_DIR",
    "KNOWLEDGE_SKILL_NAME",
    "KNOWLEDGE_TOOL_NAMES",
    "MAX_TTL_SECONDS",
    "SESSION_SELECTION_KEY",
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
    "KnowledgeDelegation",
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
    "install_knowledge",
    "serve_knowledge_http",
]
