"""The structured results of the five knowledge tools (their MCP output schemas)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, WithJsonSchema

RESULT_FORM_HEADER = "Yuxi-Result-Form"
"""A request header: ``structured`` asks for results without their JSON text copy."""

__all__ = [
    "RESULT_FORM_HEADER",
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
    signals: list[str] = ["lexical"]


# The published schema of `hits` describes each hit's keys in prose rather than as a
# schema per item: a client validating structured results with `jsonschema` (the MCP
# SDK's does) spends ~1.6 ms per 10 hits on the typed form and ~5 us per hit on any item
# schema at all, a fair share of the protocol's whole empty call. The server validates
# the result against `QueryResult` (every hit a `QueryHit`) before sending it.
_HITS_SCHEMA = {
    "type": "array",
    "description": "Ranked chunks, best first; each an object with "
    + ", ".join(QueryHit.model_fields)
    + ". kb_id, file_id, file_name: strings; start_line, end_line: 1-based lines of the"
    " parsed Markdown (open_kb_document reads there); score: number, higher is better;"
    " signals: which retrievers found it ('lexical', 'dense'); content: the chunk's text."
    " Over several bases, or a base with vectors, score is a reciprocal-rank fusion score"
    " comparable across the bases; a lone base without vectors gives its BM25 score.",
}
# One type list instead of pydantic's `anyOf` of two schemas: the same values, one check.
_OPTIONAL_ID_SCHEMA = {"type": ["string", "null"]}


class QueryResult(BaseModel):
    kb_id: str
    kb_ids: list[str] = []
    """Every base searched, ``kb_id`` (the first) included."""
    file_id: Annotated[str | None, WithJsonSchema(_OPTIONAL_ID_SCHEMA)]
    query: str
    hits: Annotated[list[QueryHit], WithJsonSchema(_HITS_SCHEMA)]


class MatchWindow(BaseModel):
    start_line: int
    end_line: int
    match_lines: list[int]
    content: str
    char_offset: int = 0
    """Where in start_line the content begins."""
    cut: bool = False
    """Part of one long line, around the match; read on with open_kb_document(line=
    start_line, char_offset=...)."""


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
    char_offset: int = 0
    """Where in start_line the content begins."""
    next_char_offset: int | None = None
    """Set when start_line was cut: read on with line=start_line and this char_offset."""


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
