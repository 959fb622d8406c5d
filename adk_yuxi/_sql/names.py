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
# Control characters (NUL included) and lone surrogates: no id may hold them.
_UNSTORABLE_NAME = re.compile("[\x00-\x1f\ud800-\udfff]")
_UNSTORABLE = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
MAX_ARTIFACT_NAME_LENGTH = 1024


def check_app_name(app_name: str) -> str:
    """Returns the app name if it is one ADK would accept for an App."""
    if not isinstance(app_name, str) or not _APP_NAME_RE.fullmatch(app_name):
        raise InvalidNameError(
            f"Invalid app name {app_name!r}: it must start with a letter and contain only"
            " letters, digits, underscores and hyphens."
        )
    if len(app_name) > MAX_NAME_LENGTH:
        raise InvalidNameError(f"Invalid app name: longer than {MAX_NAME_LENGTH} characters.")
    if app_name == "user":
        raise InvalidNameError("Invalid app name 'user': the name is reserved by ADK.")
    return app_name


def _check_text_id(value: str, what: str) -> str:
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidNameError(f"Invalid {what}: longer than {MAX_NAME_LENGTH} characters.")
    if _UNSTORABLE.search(value):
        raise InvalidNameError(
            f"Invalid {what} {value!r}: it contains control characters or lone surrogates."
        )
    return value


def check_user_id(value: str) -> str:
    """Returns the user id exactly as given, or refuses it.

    Never normalised: ``"alice "`` is another user than ``"alice"`` for ADK and the
    access layer, so stripping here would hand one user's data to the other. An
    id that is empty or only blanks is refused.
    """
    if not isinstance(value, str):
        raise InvalidNameError(f"Invalid user id: expected a string, got {type(value).__name__}.")
    if not value.strip():
        raise InvalidNameError("Invalid user id: it must not be empty or blank.")
    return _check_text_id(value, "user id")


def check_session_id(value: str) -> str:
    """Returns a session id stripped of surrounding blanks, as ADK's services do.

    Stripping stays inside one user's sessions, so it never crosses users.
    """
    if not isinstance(value, str):
        raise InvalidNameError(
            f"Invalid session id: expected a string, got {type(value).__name__}."
        )
    stripped = value.strip()
    if not stripped:
        raise InvalidNameError("Invalid session id: it must not be empty.")
    return _check_text_id(stripped, "session id")


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
    if _UNSTORABLE_NAME.search(filename):
        raise InvalidNameError(
            f"Invalid artifact name {filename!r}: it contains control characters or lone"
            " surrogates."
        )
    return filename
