"""Storage for host services: the SQL services in one call, CLI URI schemes, errors."""

from .._sql.errors import (
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
from .._sql.schema import SCHEMA_VERSION
from ._default import DATABASE_URL_ENV, DEFAULT_DATABASE_URL, database_url
from ._scheme_hint import UnregisteredSchemeError
from ._schemes import SCHEMES, register_service_schemes
from ._services import YuxiServices, open_services

__all__ = [
    "DATABASE_URL_ENV",
    "DEFAULT_DATABASE_URL",
    "SCHEMA_VERSION",
    "SCHEMES",
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
    "UnregisteredSchemeError",
    "UnsupportedDatabaseUrlError",
    "YuxiServices",
    "YuxiStorageError",
    "database_url",
    "open_services",
    "register_service_schemes",
]
