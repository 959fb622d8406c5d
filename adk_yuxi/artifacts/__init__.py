"""Artifact services: versioned artifacts with metadata in SQL, bytes by digest."""

from .._sql.errors import ArtifactTooLargeError, InvalidArtifactError
from ._payload import ArtifactNotStoredError, ArtifactPayload
from ._sql_artifact_service import DEFAULT_MAX_ARTIFACT_BYTES, SqlArtifactService

__all__ = [
    "DEFAULT_MAX_ARTIFACT_BYTES",
    "ArtifactNotStoredError",
    "ArtifactPayload",
    "ArtifactTooLargeError",
    "InvalidArtifactError",
    "SqlArtifactService",
]
