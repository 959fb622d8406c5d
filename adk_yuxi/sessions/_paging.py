"""Keyset paging for ``SqlSessionService.list_sessions_page``.

ADK's ``list_sessions`` returns every session at once; a host service listing a
busy app needs pages. Pages follow ADK's order (last update time, then user id,
then session id) and continue after the last key seen, so a page costs an index
range scan however deep the caller has paged. A session updated while someone is
paging moves to the end of the order and may show up again on a later page.
"""

from __future__ import annotations

import base64
import binascii
import json

from google.adk.sessions.session import Session
from pydantic import BaseModel, Field

from .._sql.errors import InvalidPageTokenError

PageKey = tuple[float, str, str]


class SessionPage(BaseModel):
    """One page of sessions (without events) and the token for the next one."""

    sessions: list[Session] = Field(default_factory=list)
    next_page_token: str | None = None


def encode_token(key: PageKey) -> str:
    """An opaque token for the position after ``key``."""
    raw = json.dumps([key[0], key[1], key[2]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_token(token: str) -> PageKey:
    """The position a token stands for; a malformed token is a clear error."""
    try:
        padded = token + "=" * (-len(token) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))
        update_time, user_id, session_id = value
        return float(update_time), str(user_id), str(session_id)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InvalidPageTokenError(
            f"Invalid page token {token!r}: pass back a next_page_token returned by"
            " list_sessions_page."
        ) from exc
