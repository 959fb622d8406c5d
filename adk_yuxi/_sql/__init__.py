"""Private SQL plumbing shared by the session, memory and artifact services."""

from .errors import (
    ArtifactTooLargeError,
    InvalidArtifactError,
    InvalidNameError,
    InvalidPageTokenError,
    SchemaVersionError,
    SessionExistsError,
    StaleSessionWriteError,
    UnknownSessionError,
    UnsupportedDatabaseUrlError,
    YuxiStorageError,
)
from .schema import SCHEMA_VERSION, metadata
from .store import IntegrityViolation, SqlStore, Tx, make_store
from .urls import DatabaseTarget, parse_database_url

__all__ = [
    "SCHEMA_VERSION",
    "ArtifactTooLargeError",
    "DatabaseTarget",
    "IntegrityViolation",
    "InvalidArtifactError",
    "InvalidNameError",
    "InvalidPageTokenError",
    "SchemaVersionError",
    "SessionExistsError",
    "SqlStore",
    "StaleSessionWriteError",
    "Tx",
    "UnknownSessionError",
    "UnsupportedDatabaseUrlError",
    "YuxiStorageError",
    "make_store",
    "metadata",
    "parse_database_url",
]
