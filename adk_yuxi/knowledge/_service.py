"""The five knowledge operations on behalf of one delegation, under current rights.

Every operation first verifies the token, then asks the access records what the
user may read *now* (one query) and intersects that with the token's selection; an
id outside it gets the same answer as an id that does not exist, so a caller learns
nothing about bases it cannot see. Prompts and agent configuration never reach here:
the token's user and the database decide.
"""

from __future__ import annotations

import asyncio
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..access import AccessRepository, NotFoundError, ResourceKind
from ..observability._tracing import annotate
from ._delegation import Delegation, DelegationVerifier
from ._errors import InvalidKnowledgeRequestError, KnowledgeAccessDenied, UnknownKnowledgeBaseError
from ._ids import check_ident
from ._results import (
    DocumentWindow,
    FileInfo,
    FindResult,
    KbInfo,
    ListKbsResult,
    MatchWindow,
    QueryResult,
    SearchFileResult,
)
from ._store import KnowledgeStore
from ._windows import find_windows, line_window

__all__ = ["KnowledgeService", "VisibleScope"]

MAX_TOP_K = 50
MAX_QUERY_CHARS = 1000
MAX_WINDOW_LINES = 400
MAX_CONTEXT_LINES = 50
MAX_FIND_WINDOWS = 20
MAX_PAGE = 100
MAX_QUERY_BASES = 20


@dataclass(frozen=True)
class VisibleScope:
    delegation: Delegation
    kb_ids: frozenset[str]


def _bases(kb_id: str | None, kb_ids: list[str] | None) -> list[str]:
    """The bases a query names, checked, in order, each once."""
    if kb_ids is not None and (not isinstance(kb_ids, list) or len(kb_ids) > MAX_QUERY_BASES):
        raise InvalidKnowledgeRequestError(f"kb_ids must be a list of at most {MAX_QUERY_BASES}")
    named = ([kb_id] if kb_id is not None else []) + list(kb_ids or [])
    if not named:
        raise InvalidKnowledgeRequestError("give kb_id or kb_ids")
    return list(dict.fromkeys(check_ident(k, "kb_id") for k in named))


def _plain(text: str, what: str) -> str:
    """Refuses what no question holds and the layers below take badly: a lone surrogate
    (no encoder takes it: the embedding call fails, and the dense side is then skipped
    for every caller for a while) and control characters but tab and newline (PostgreSQL
    refuses NUL: a bad name search read as the service being down)."""
    if any(unicodedata.category(ch) in ("Cc", "Cs") and ch not in "\t\n\r" for ch in text):
        raise InvalidKnowledgeRequestError(
            f"{what} must not contain control characters or lone surrogates"
        )
    return text


def _bounded(value: int, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidKnowledgeRequestError(f"{what} must be an integer from {low} to {high}")
    return value


class KnowledgeService:
    def __init__(
        self, store: KnowledgeStore, access: AccessRepository, verifier: DelegationVerifier
    ) -> None:
        self.store = store
        self.access = access
        self.verifier = verifier

    async def visible(self, token: str | None) -> VisibleScope:
        """The bases this call may see: those the token names (or, for a token over
        everything, every base) that the user may read now."""
        delegation = self.verifier.verify(token)
        try:
            user, readable = await self.access.readable_among(
                delegation.user_id, ResourceKind.KNOWLEDGE_BASE, delegation.kb_ids
            )
        except NotFoundError:
            raise KnowledgeAccessDenied("the delegated user is not known") from None
        if not user.active:
            raise KnowledgeAccessDenied("the delegated user account is disabled")
        annotate(
            {
                "user.id": delegation.user_id,
                "gen_ai.conversation.id": delegation.session_id,
                "yuxi.knowledge.kb_count": len(readable),
            }
        )
        return VisibleScope(delegation, readable)

    async def _kb(self, token: str | None, kb_id: str) -> VisibleScope:
        check_ident(kb_id, "kb_id")
        scope = await self.visible(token)
        if kb_id not in scope.kb_ids:
            raise UnknownKnowledgeBaseError(kb_id)
        return scope

    async def list_kbs(self, token: str | None) -> ListKbsResult:
        scope = await self.visible(token)
        bases = await self.store.list_kbs(scope.kb_ids)
        counts = await self.store.file_counts(scope.kb_ids)
        return ListKbsResult(
            kbs=[
                KbInfo(
                    kb_id=kb.kb_id,
                    name=kb.name,
                    description=kb.description,
                    file_count=counts.get(kb.kb_id, 0),
                )
                for kb in bases
            ]
        )

    async def query_kb(
        self, token: str | None, kb_id: str | None, query: str, top_k: int,
        file_id: str | None, kb_ids: list[str] | None = None,
    ) -> QueryResult:  # fmt: skip
        return QueryResult.model_validate(
            await self.query_kb_json(token, kb_id, query, top_k, file_id, kb_ids)
        )

    async def query_kb_json(
        self, token: str | None, kb_id: str | None, query: str, top_k: int,
        file_id: str | None, kb_ids: list[str] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """`query_kb`'s result as its JSON object, built straight from the store's typed
        hits: what the MCP server sends (it validates it against `QueryResult` first),
        without a model built and dumped again on every call. Several bases (``kb_id``
        and ``kb_ids``) are ranked together, on scores comparable across them."""
        _bounded(top_k, 1, MAX_TOP_K, "top_k")
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY_CHARS:
            raise InvalidKnowledgeRequestError(f"query must be 1-{MAX_QUERY_CHARS} characters")
        _plain(query, "query")
        bases = _bases(kb_id, kb_ids)
        if file_id is not None:
            check_ident(file_id, "file_id")
            if len(bases) > 1:
                raise InvalidKnowledgeRequestError("file_id needs exactly one knowledge base")
        scope = await self.visible(token)
        for base in bases:
            if base not in scope.kb_ids:
                raise UnknownKnowledgeBaseError(base)
        if file_id is not None:
            await self.store.get_file(bases[0], file_id)
        if len(bases) == 1:
            hits = await self.store.query(bases[0], query, top_k=top_k, file_id=file_id)
        else:
            hits = await self.store.query_many(bases, query, top_k=top_k)
        annotate({"yuxi.knowledge.hits": len(hits), "yuxi.knowledge.top_k": top_k})
        return {
            "kb_id": bases[0],
            "kb_ids": bases,
            "file_id": file_id,
            "query": query,
            "hits": [
                {
                    "kb_id": h.kb_id, "file_id": h.file_id, "file_name": h.file_name,
                    "start_line": h.start_line, "end_line": h.end_line, "score": h.score,
                    "signals": list(h.signals), "content": h.content,
                }
                for h in hits
            ],
        }  # fmt: skip

    async def find_kb_document(
        self,
        token: str | None,
        kb_id: str,
        file_id: str,
        patterns: list[str],
        use_regex: bool,
        case_sensitive: bool,
        max_windows: int,
        window_size: int,
    ) -> FindResult:
        _bounded(max_windows, 1, MAX_FIND_WINDOWS, "max_windows")
        _bounded(window_size, 0, MAX_CONTEXT_LINES, "window_size")
        check_ident(file_id, "file_id")
        await self._kb(token, kb_id)
        file, text = await self.store.read_text(kb_id, file_id)
        # In a thread: a search may take its whole budget, and other calls go on.
        windows, truncated = await asyncio.to_thread(
            find_windows,
            text.split("\n") if text else [],
            patterns,
            use_regex=use_regex,
            case_sensitive=case_sensitive,
            max_windows=max_windows,
            window_size=window_size,
        )
        annotate({"yuxi.knowledge.hits": len(windows)})
        return FindResult(
            kb_id=kb_id,
            file_id=file_id,
            file_name=file.name,
            total_lines=file.total_lines,
            windows=[
                MatchWindow(
                    start_line=w.start_line,
                    end_line=w.end_line,
                    match_lines=list(w.match_lines),
                    content=w.content,
                    char_offset=w.char_offset,
                    cut=w.cut,
                )
                for w in windows
            ],
            truncated=truncated,
        )

    async def open_kb_document(
        self,
        token: str | None,
        kb_id: str,
        file_id: str,
        line: int | None,
        offset: int | None,
        window_size: int,
        char_offset: int = 0,
    ) -> DocumentWindow:
        _bounded(window_size, 1, MAX_WINDOW_LINES, "window_size")
        if line is not None and offset is not None:
            raise InvalidKnowledgeRequestError("give either line or offset, not both")
        if line is not None:
            start = _bounded(line, 1, 10_000_000, "line") - 1
        else:
            start = _bounded(offset or 0, 0, 10_000_000, "offset")
        check_ident(file_id, "file_id")
        await self._kb(token, kb_id)
        file, text = await self.store.read_text(kb_id, file_id)
        _bounded(char_offset, 0, 1_000_000_000, "char_offset")
        window = line_window(text.split("\n") if text else [], start, window_size, char_offset)
        return DocumentWindow(
            kb_id=kb_id,
            file_id=file_id,
            file_name=file.name,
            start_line=window.start_line,
            end_line=window.end_line,
            total_lines=window.total_lines,
            has_more_before=window.has_more_before,
            has_more_after=window.has_more_after,
            next_offset=window.next_offset,
            content=window.content,
            char_offset=window.char_offset,
            next_char_offset=window.next_char_offset,
        )

    async def search_file(
        self,
        token: str | None,
        kb_name: str | None,
        query: str | None,
        offset: int,
        limit: int,
    ) -> SearchFileResult:
        _bounded(offset, 0, 10_000_000, "offset")
        _bounded(limit, 1, MAX_PAGE, "limit")
        if query is not None and (not isinstance(query, str) or len(query) > 255):
            raise InvalidKnowledgeRequestError("query must be at most 255 characters")
        if query is not None:
            _plain(query, "query")
        if kb_name is not None and (not isinstance(kb_name, str) or len(kb_name) > 200):
            raise InvalidKnowledgeRequestError("kb_name must be at most 200 characters")
        scope = await self.visible(token)
        bases = {kb.kb_id: kb for kb in await self.store.list_kbs(scope.kb_ids)}
        if kb_name is not None:
            bases = {k: kb for k, kb in bases.items() if kb.name == kb_name}
            if not bases:
                raise UnknownKnowledgeBaseError(kb_name)
        files, total = await self.store.search_files(
            bases, query or None, offset=offset, limit=limit
        )
        end = offset + len(files)
        annotate({"yuxi.knowledge.hits": len(files)})
        return SearchFileResult(
            files=[
                FileInfo(
                    kb_id=f.kb_id, kb_name=bases[f.kb_id].name, file_id=f.file_id, name=f.name,
                    mime_type=f.mime_type, title=f.title, total_lines=f.total_lines, size=f.size,
                )
                for f in files
            ],
            offset=offset,
            limit=limit,
            total=total,
            next_offset=end if end < total else None,
        )  # fmt: skip
