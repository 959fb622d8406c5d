"""Memory services: ADK's memory contract with ranked full-text search."""

from ._errors import SessionDeletedError
from ._sql_memory_service import SqlMemoryService

__all__ = ["SessionDeletedError", "SqlMemoryService"]
