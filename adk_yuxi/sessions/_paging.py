"""Keyset paging for ``SqlSessionService.list_sessions_page``.

ADK's ``list_sessions`` returns every session at once; a host service listing a
busy app needs pages. Pages follow ADK's order (last update time, then user id,
then session id) and continue after the last key seen, so a page costs an index
range scan however deep the caller has paged. A session updated while someone is
paging moves to the end of the order and may show up again on a later page.
"""

from __future__ import annotations

from google.adk.sessions.session import Session
from pydantic import BaseModel, Field

from .._sql.paging import decode_page_token, encode_page_token

PageKey = tuple[float, str, str]


class SessionPage(BaseModel):
    """One page of sessions (without events) and the token for the next one."""

    sessions: list[Session] = Field(default_factory=list)
    next_page_token: str | None = None


def encode_token(key: PageKey) -> str:
    """An opaque token for the position after ``key``."""
    return encode_page_token(key[0], key[1], key[2])


def decode_token(token: str) -> PageKey:
    """The position a token stands for; a malformed token is a clear error."""
    update_time, (user_id, session_id) = decode_page_token(
        token, ids=2, listing="list_sessions_page"
    )
    return update_time, user_id, session_id
