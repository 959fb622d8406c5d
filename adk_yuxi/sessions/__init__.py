"""Session services: ADK's session contract on the platform's SQL database."""

from .._sql.errors import SessionExistsError, StaleSessionWriteError, UnknownSessionError
from ._paging import SessionPage
from ._sql_session_service import SqlSessionService
from ._tail import StoredEvents
from ._window import SessionWindow

__all__ = [
    "SessionExistsError",
    "SessionPage",
    "SessionWindow",
    "SqlSessionService",
    "StaleSessionWriteError",
    "StoredEvents",
    "UnknownSessionError",
]
