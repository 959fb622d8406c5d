"""Knowledge bases and files as the store hands them out."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KnowledgeBase", "KnowledgeFile"]


@dataclass(frozen=True)
class KnowledgeBase:
    kb_id: str
    name: str
    description: str
    created_at: float


@dataclass(frozen=True)
class KnowledgeFile:
    file_id: str
    kb_id: str
    name: str
    mime_type: str
    title: str | None
    size: int
    sha256: str
    total_lines: int
    chunk_count: int
    version: int
    updated_at: float
