"""Memory services: ADK's memory contract with ranked full-text search."""

from ._sql_memory_service import SqlMemoryService

__all__ = ["SqlMemoryService"]
