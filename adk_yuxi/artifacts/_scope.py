"""Artifact keys and version records of SqlArtifactService.

A name starting with ``user:``, or any name saved without a session, is
user-scoped: it is stored with scope ``''`` under its ``user:`` name, so every
session of the user sees it and a listed name loads as written.
"""

from __future__ import annotations

import json
from typing import Any

from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import ArtifactVersion
from google.genai import types

from .._sql.errors import InvalidArtifactError, InvalidNameError
from .._sql.names import check_app_name, check_artifact_name, check_session_id, check_user_id

USER_PREFIX = "user:"


def artifact_key(
    app_name: str, user_id: str, filename: str, session_id: str | None
) -> dict[str, Any]:
    """The row key of an artifact; user-scoped names always carry ``user:``."""
    name = check_artifact_name(filename)
    if name.startswith(USER_PREFIX):
        if not name[len(USER_PREFIX) :].strip():
            raise InvalidNameError(f"Invalid artifact name {filename!r}: empty after 'user:'.")
        scope = ""
    elif session_id is None:
        scope, name = "", USER_PREFIX + name
    else:
        scope = check_session_id(session_id)
    return {
        "app": check_app_name(app_name),
        "user": check_user_id(user_id),
        "scope": scope,
        "name": name,
    }


def artifact_version(key: dict[str, Any], row: Any) -> ArtifactVersion:
    version, mime_type, meta, create_time = row
    return ArtifactVersion(
        version=int(version),
        canonical_uri=artifact_util.get_artifact_uri(
            key["app"], key["user"], key["name"], int(version), key["scope"] or None
        ),
        custom_metadata=json.loads(meta) if meta else {},
        create_time=float(create_time),
        mime_type=mime_type,
    )


def check_reference(part: types.Part, key: dict[str, Any], session_id: str | None) -> None:
    """Refuses an ``artifact://`` reference that is malformed or points outside the scope."""
    if not artifact_util.is_artifact_ref(part):
        return
    uri = part.file_data.file_uri if part.file_data else None
    parsed = artifact_util.parse_artifact_uri(uri or "")
    if parsed is None:
        raise InvalidArtifactError(f"Invalid artifact reference URI: {uri!r}.")
    artifact_util.validate_artifact_reference_scope(
        app_name=key["app"], user_id=key["user"], session_id=session_id, parsed_uri=parsed
    )
