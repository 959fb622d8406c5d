"""The one place where driver errors become ours.

Every ``Tx`` implementation catches its driver's errors around its statements and
raises the translation, so a service never sees ``sqlite3``, asyncpg or SQLAlchemy
exception types for the conditions it is meant to handle: a constraint
(``IntegrityViolation``), a value the database refuses (``InvalidValueError``) and,
on PostgreSQL, a connection that cannot be reached or broke
(``DatabaseUnavailableError``) or any other server error (``DatabaseError``). Lock
contention (``SQLITE_BUSY``) is not listed: the SQLite layer retries it itself.

The asyncpg half lives in ``_pg_errormap``, imported only with the PostgreSQL backend,
so an install without the ``postgres`` extra never imports asyncpg.
"""

from __future__ import annotations

import sqlite3

from sqlalchemy import exc as sa_exc

from ._tx import IntegrityViolation
from .errors import InvalidValueError

__all__ = ["DRIVER_ERRORS", "translate"]

DRIVER_ERRORS: tuple[type[Exception], ...] = (
    sqlite3.IntegrityError,
    sqlite3.DataError,
    sa_exc.IntegrityError,
    sa_exc.DataError,
)


def translate(exc: Exception) -> Exception:
    """The error of ours that stands for a driver error listed in ``DRIVER_ERRORS``."""
    cause = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    if isinstance(exc, sqlite3.IntegrityError | sa_exc.IntegrityError):
        return IntegrityViolation(str(cause))
    return InvalidValueError(f"The database refused a value: {cause}")
