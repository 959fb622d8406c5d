"""Private SQL plumbing shared by the session, memory and artifact services."""

from .errors import (
    ArtifactTooLargeError,
    DatabaseError,
    DatabaseUnavailableError,
    InvalidArtifactError,
    InvalidNameError,
    InvalidPageTokenError,
    InvalidValueError,
    SchemaVersionError,
    SessionExistsError,
    StaleSessionWriteError,
    StoreClosedError,
    UnknownSessionError,
    UnsupportedDatabaseUrlError,
    YuxiStorageError,
)
from .migrations import Migration, SchemaPart, Step, register_schema_part, schema_parts
from .schema import PLATFORM, SCHEMA_VERSION
from .store import IntegrityViolation, SqlStore, Tx, make_store
from .urls import DatabaseTarget, parse_database_url

__all__ = [
    "PLATFORM",
    "SCHEMA_VERSION",
    "ArtifactTooLargeError",
    "DatabaseError",
    "DatabaseTarget",
    "DatabaseUnavailableError",
    "IntegrityViolation",
    "InvalidArtifactError",
    "InvalidNameError",
    "InvalidPageTokenError",
    "InvalidValueError",
    "Migration",
    "SchemaPart",
    "SchemaVersionError",
    "SessionExistsError",
    "SqlStore",
    "StaleSessionWriteError",
    "Step",
    "StoreClosedError",
    "Tx",
    "UnknownSessionError",
    "UnsupportedDatabaseUrlError",
    "YuxiStorageError",
    "make_store",
    "parse_database_url",
    "register_schema_part",
    "schema_parts",
]
