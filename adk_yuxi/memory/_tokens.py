"""Memory's full-text tokens: the shared segmentation rule plus a per-scope token."""

from __future__ import annotations

import hashlib

from .._text import MAX_BODY_CHARS, index_tokens, query_tokens

__all__ = ["MAX_BODY_CHARS", "index_tokens", "query_tokens", "scope_token"]


def scope_token(app_name: str, user_id: str) -> str:
    """A token naming one (app, user) scope, so FTS5 can intersect on it."""
    digest = hashlib.sha256(f"{app_name}\x00{user_id}".encode()).hexdigest()[:24]
    return "s" + digest
