"""The structured results of the five knowledge tools (their MCP output schemas)."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = [
    "DocumentWindow",
    "FileInfo",
    "FindResult",
    "KbInfo",
    "ListKbsResult",
    "MatchWindow",
    "QueryHit",
    "QueryResult",
    "SearchFileResult",
]


class KbInfo(BaseModel):
    kb_id: str
    name: str
    description: str
    file_count: int


class ListKbsResult(BaseModel):
    kbs: list[KbInfo]


class QueryHit(BaseModel):
    kb_id: str
    file_id: str
    file_name: str
    start_line: int
    end_line: int
    score: float
    content: str


class QueryResult(BaseModel):
    kb_id: str
    file_id: str | None
    query: str
    hits: list[QueryHit]


class MatchWindow(BaseModel):
    start_line: int
    end_line: int
    match_lines: list[int]
    content: str


class FindResult(BaseModel):
    kb_id: str
    file_id: str
    file_name: str
    total_lines: int
    windows: list[MatchWindow]
    truncated: bool


class DocumentWindow(BaseModel):
    kb_id: str
    file_id: str
    file_name: str
    start_line: int
    end_line: int
    total_lines: int
    has_more_before: bool
    has_more_after: bool
    next_offset: int | None
    content: str


class FileInfo(BaseModel):
    kb_id: str
    kb_name: str
    file_id: str
    name: str
    mime_type: str
    title: str | None
    total_lines: int
    size: int


class SearchFileResult(BaseModel):
    files: list[FileInfo]
    offset: int
    limit: int
    total: int
    next_offset: int | None
