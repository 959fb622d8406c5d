"""Validation of the identifiers callers hand to the services.

Names are checked before any SQL runs, so a bad name never leaves a row behind
and the error says which argument was wrong rather than surfacing a driver error.
"""

from __future__ import annotations

import re

from .errors import InvalidNameError

# ADK's App rejects the same names (apps/app.py), so an app the CLI can load is
# always an app the services accept.
_APP_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
MAX_NAME_LENGTH = 256
MAX_ARTIFACT_NAME_LENGTH = 1024


def check_app_name(app_name: str) -> str:
    """Returns the app name if it is one ADK would accept for an App."""
    if not isinstance(app_name, str) or not _APP_NAME_RE.match(app_name):
        raise InvalidNameError(
            f"Invalid app name {app_name!r}: it must start with a letter and contain only"
            " letters, digits, underscores and hyphens."
        )
    if len(app_name) > MAX_NAME_LENGTH:
        raise InvalidNameError(f"Invalid app name: longer than {MAX_NAME_LENGTH} characters.")
    if app_name == "user":
        raise InvalidNameError("Invalid app name 'user': the name is reserved by ADK.")
    return app_name


def check_id(value: str, what: str) -> str:
    """Returns a user or session id stripped of surrounding blanks.

    ADK's in-memory service strips session ids, so the SQL services do too; an id
    that is empty after stripping, too long, or holds control characters is refused.
    """
    if not isinstance(value, str):
        raise InvalidNameError(f"Invalid {what}: expected a string, got {type(value).__name__}.")
    stripped = value.strip()
    if not stripped:
        raise InvalidNameError(f"Invalid {what}: it must not be empty.")
    if len(stripped) > MAX_NAME_LENGTH:
        raise InvalidNameError(f"Invalid {what}: longer than {MAX_NAME_LENGTH} characters.")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in stripped):
        raise InvalidNameError(f"Invalid {what} {stripped!r}: it contains control characters.")
    return stripped


def check_artifact_name(filename: str) -> str:
    """Returns an artifact name if it can be stored.

    Names never become file paths (payloads are stored by content digest), so
    slashes are fine; only empty names, NUL and control characters are refused.
    """
    if not isinstance(filename, str) or not filename.strip():
        raise InvalidNameError("Invalid artifact name: it must be a non-empty string.")
    if len(filename) > MAX_ARTIFACT_NAME_LENGTH:
        raise InvalidNameError(
            f"Invalid artifact name: longer than {MAX_ARTIFACT_NAME_LENGTH} characters."
        )
    if any(ord(ch) < 32 for ch in filename):
        raise InvalidNameError(
            f"Invalid artifact name {filename!r}: it contains control characters."
        )
    return filename
