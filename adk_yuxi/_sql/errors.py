"""Storage errors shared by the SQL-backed services.

Each error subclasses the ADK error a caller of the base service would already
catch (``AlreadyExistsError``, ``SessionNotFoundError``, ``InputValidationError``
...), so code written against ADK keeps working, while ``YuxiStorageError`` lets
a host service catch everything this package raises in one place.
"""

from __future__ import annotations

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.errors.session_not_found_error import SessionNotFoundError

from adk_yuxi.errors import YuxiError

from .._adk import StaleSessionError


class YuxiStorageError(YuxiError):
    """Base class of every error raised by the SQL services."""


class UnsupportedDatabaseUrlError(YuxiStorageError, ValueError):
    """The database URL names a backend or driver the services do not support."""


class SchemaVersionError(YuxiStorageError, RuntimeError):
    """The database was created by another version of the platform schema."""

    def __init__(self, *, expected: int, found: int | str, part: str = "platform") -> None:
        self.expected = expected
        self.found = found
        self.part = part
        super().__init__(
            f"Database schema version mismatch ({part!r} tables): this adk_yuxi migrates"
            f" up to version {expected}, the database has version {found}. Use the"
            " adk_yuxi release that created it."
        )


class InvalidNameError(YuxiStorageError, InputValidationError):
    """An app name, user id, session id or artifact name is not acceptable."""


class SessionExistsError(YuxiStorageError, AlreadyExistsError):
    """A session with the requested id already exists."""


class UnknownSessionError(YuxiStorageError, SessionNotFoundError):
    """The session named by the caller does not exist (or was deleted)."""


class StaleSessionWriteError(YuxiStorageError, StaleSessionError):
    """Another writer appended to the session after the caller loaded it."""


class InvalidPageTokenError(YuxiStorageError, InputValidationError):
    """A page token was not produced by this service or has been tampered with."""


class ArtifactTooLargeError(YuxiStorageError, InputValidationError):
    """An artifact payload exceeds the configured size limit."""

    def __init__(self, *, filename: str, size: int, limit: int) -> None:
        self.filename = filename
        self.size = size
        self.limit = limit
        super().__init__(
            f"Artifact {filename!r} is {size} bytes, above the limit of {limit} bytes;"
            " nothing was saved."
        )


class InvalidArtifactError(YuxiStorageError, InputValidationError):
    """An artifact part has no payload this service can store."""


class InvalidValueError(YuxiStorageError, InputValidationError):
    """A value (state, id, name) cannot be stored faithfully on every backend."""


class DatabaseError(YuxiStorageError):
    """The PostgreSQL server failed a statement for a reason no other error names."""


class DatabaseUnavailableError(DatabaseError, ConnectionError):
    """The database could not be reached, or the connection broke mid-statement."""


class StoreClosedError(YuxiStorageError, RuntimeError):
    """The store (or a service on it) was used after ``close()``."""


__all__ = [
    "ArtifactTooLargeError",
    "DatabaseError",
    "DatabaseUnavailableError",
    "InvalidArtifactError",
    "InvalidNameError",
    "InvalidPageTokenError",
    "InvalidValueError",
    "SchemaVersionError",
    "SessionExistsError",
    "StaleSessionWriteError",
    "StoreClosedError",
    "UnknownSessionError",
    "UnsupportedDatabaseUrlError",
    "YuxiStorageError",
]
