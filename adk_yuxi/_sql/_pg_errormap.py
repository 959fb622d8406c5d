"""The asyncpg half of ``_errormap``: PostgreSQL driver errors become ours here.

Imported only by the PostgreSQL backend, which the store loads when a URL names
PostgreSQL, so asyncpg (the ``postgres`` extra) is needed only then.
"""

from __future__ import annotations

import asyncpg
from sqlalchemy import exc as sa_exc

from ._tx import IntegrityViolation
from .errors import DatabaseError, DatabaseUnavailableError, InvalidValueError

__all__ = ["PG_CONNECT_ERRORS", "PG_ERRORS", "translate_pg", "translate_pg_connect"]

_PG_INTEGRITY = asyncpg.exceptions.IntegrityConstraintViolationError
_PG_VALUE = asyncpg.exceptions.DataError
_PG_LINK: tuple[type[Exception], ...] = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.InternalClientError,  # the protocol out of step after a break
    OSError,  # TimeoutError among them
)
PG_ERRORS: tuple[type[Exception], ...] = (asyncpg.exceptions.PostgresError, *_PG_LINK)
# What taking a connection from the pool raises when a new one cannot be opened, or
# when every pooled connection stayed busy for the pool's timeout.
PG_CONNECT_ERRORS: tuple[type[Exception], ...] = (
    sa_exc.DBAPIError,
    sa_exc.TimeoutError,
    *PG_ERRORS,
)


def translate_pg_connect(exc: Exception) -> DatabaseUnavailableError:
    """The error of ours for a failure to open a connection (``PG_CONNECT_ERRORS``)."""
    if isinstance(exc, sa_exc.TimeoutError):
        return DatabaseUnavailableError(
            "Every pooled database connection stayed busy for the pool's timeout: raise"
            " the pool_size option (within the server's max_connections, over all workers)."
        )
    cause = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    return DatabaseUnavailableError(
        f"The database cannot be reached: {type(cause).__name__ if cause else type(exc).__name__}"
    )


def translate_pg(exc: Exception) -> Exception:
    """The error of ours for an asyncpg error listed in ``PG_ERRORS``."""
    if isinstance(exc, _PG_INTEGRITY):
        return IntegrityViolation(str(exc))
    if isinstance(exc, _PG_VALUE):
        return InvalidValueError(f"The database refused a value: {exc}")
    if isinstance(exc, _PG_LINK):
        return DatabaseUnavailableError(f"The database connection failed: {type(exc).__name__}")
    return DatabaseError(f"The database failed a statement: {exc}")
