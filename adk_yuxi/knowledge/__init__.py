"""Knowledge bases: ingestion into the platform database, ranked search in Chinese and
English, and the built-in knowledge MCP server reached with per-user delegation.

The server and the ADK wiring load on first use, so the store and the `yuxi kb`
commands do not pay for importing ADK and the MCP SDK. The store, the service and the
search need the `knowledge` extra (numpy, regex): they load on first use too, so this
package imports without it and a use of them says which extra to install.
"""

from typing import TYPE_CHECKING, Any

from ._chunking import Chunk, chunk_lines
from ._delegation import (
    DEFAULT_AUDIENCE,
    MAX_TTL_SECONDS,
    Delegation,
    DelegationKeys,
    DelegationSigner,
    DelegationVerifier,
    load_verifier,
)
from ._errors import (
    DelegationError,
    InvalidKnowledgeRequestError,
    KnowledgeAccessDenied,
    KnowledgeConfigError,
    KnowledgeError,
    UnknownFileError,
    UnknownKnowledgeBaseError,
)
from ._ingest_each import IngestOutcome, ingest_each
from ._models import KnowledgeBase, KnowledgeFile
from ._progress import IngestProgress, TerminalProgress
from ._results import (
    RESULT_FORM_HEADER,
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

if TYPE_CHECKING:
    from ._embed_fill import EmbeddingMismatchError
    from ._embed_ping import EmbeddingPing, ping_embedder
    from ._embedding import (
        OFFLINE_EMBEDDING_MODEL,
        Embedder,
        EmbeddingError,
        OfflineEmbedder,
        OpenAIEmbedder,
        embedder_from_env,
    )
    from ._search import ChunkHit
    from ._service import KnowledgeService
    from ._store import KnowledgeStore

__all__ = [
    "DEFAULT_AUDIENCE",
    "KNOWLEDGE_SERVER_NAME",
    "KNOWLEDGE_SKILL_DIR",
    "KNOWLEDGE_SKILL_NAME",
    "KNOWLEDGE_TOOL_NAMES",
    "MAX_TTL_SECONDS",
    "OFFLINE_EMBEDDING_MODEL",
    "RESULT_FORM_HEADER",
    "SESSION_SELECTION_KEY",
    "Chunk",
    "ChunkHit",
    "Delegation",
    "DelegationError",
    "DelegationKeys",
    "DelegationSigner",
    "DelegationVerifier",
    "DocumentWindow",
    "Embedder",
    "EmbeddingError",
    "EmbeddingMismatchError",
    "EmbeddingPing",
    "FileInfo",
    "FindResult",
    "IngestOutcome",
    "IngestProgress",
    "InvalidKnowledgeRequestError",
    "KbInfo",
    "KnowledgeAccessDenied",
    "KnowledgeBase",
    "KnowledgeConfigError",
    "KnowledgeDelegation",
    "KnowledgeError",
    "KnowledgeFile",
    "KnowledgeServerThread",
    "KnowledgeService",
    "KnowledgeStore",
    "ListKbsResult",
    "MatchWindow",
    "OfflineEmbedder",
    "OpenAIEmbedder",
    "QueryHit",
    "QueryResult",
    "SearchFileResult",
    "TerminalProgress",
    "UnknownFileError",
    "UnknownKnowledgeBaseError",
    "build_knowledge_server",
    "chunk_lines",
    "embedder_from_env",
    "ingest_each",
    "install_knowledge",
    "load_verifier",
    "ping_embedder",
    "serve_knowledge_http",
]

_LAZY = {
    "KNOWLEDGE_SERVER_NAME": "._builtin",
    "KNOWLEDGE_SKILL_DIR": "._builtin",
    "KNOWLEDGE_SKILL_NAME": "._builtin",
    "SESSION_SELECTION_KEY": "._builtin",
    "KnowledgeDelegation": "._builtin",
    "install_knowledge": "._builtin",
    "KNOWLEDGE_TOOL_NAMES": "._server",
    "build_knowledge_server": "._server",
    "serve_knowledge_http": "._server",
    "KnowledgeServerThread": "._thread",
    "ChunkHit": "._search",
    "KnowledgeService": "._service",
    "KnowledgeStore": "._store",
    "Embedder": "._embedding",
    "EmbeddingError": "._embedding",
    "OfflineEmbedder": "._embedding",
    "OpenAIEmbedder": "._embedding",
    "embedder_from_env": "._embedding",
    "OFFLINE_EMBEDDING_MODEL": "._embedding",
    "EmbeddingPing": "._embed_ping",
    "ping_embedder": "._embed_ping",
    "EmbeddingMismatchError": "._embed_fill",
}
# The modules above that import the ranked search and the match windows, and what
# those import from the `knowledge` extra.
_NEED_EXTRA = {
    "._search", "._service", "._store", "._server", "._thread", "._embedding", "._embed_ping",
    "._embed_fill",
}  # fmt: skip
_EXTRA_MODULES = ("numpy", "regex")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        from .._extras import require_extra

        if _LAZY[name] in _NEED_EXTRA:
            for module in _EXTRA_MODULES:
                require_extra(module, "knowledge", f"adk_yuxi.knowledge.{name}")

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
