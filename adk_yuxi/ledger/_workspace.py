"""Per-user workspace roots under one directory, for Apps that serve many users."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from adk_yuxi.errors import YuxiError

__all__ = ["UnsafeUserId", "per_user_workspaces", "workspace_name"]

# Folder names no file system folds together: macOS and Windows compare names without
# case (and macOS without Unicode normalisation), so "Ann" and "ann" would share one.
_PLAIN = re.compile(r"[a-z0-9_-][a-z0-9._-]{0,127}")


class UnsafeUserId(YuxiError, ValueError):
    """A user id that cannot name a directory of its own (it would leave the base)."""


def workspace_name(user_id: str) -> str:
    """The folder of `user_id`: the id itself when it is lower-case ASCII, else ``~``
    and the sha256 of the id (``~`` is not a plain name's character), so two users
    never share a folder on any file system."""
    if _PLAIN.fullmatch(user_id):
        return user_id
    return "~" + hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).hexdigest()


def per_user_workspaces(base: str | Path) -> Callable[[str], Path]:
    """`base/<workspace_name(user id)>` for each user; an id that could not name a path
    segment of its own (empty, a dot name, a separator, NUL, control characters) is
    refused, never mapped."""
    root = Path(base).expanduser().resolve()

    def workspace(user_id: str) -> Path:
        if (
            not user_id
            or user_id.startswith(".")
            or any(ch in user_id for ch in "/\\\x00")
            or any(ord(ch) < 32 for ch in user_id)
            or len(user_id) > 128
        ):
            raise UnsafeUserId(f"user id {user_id!r} cannot name a workspace directory")
        path = root / workspace_name(user_id)
        path.mkdir(parents=True, exist_ok=True)
        return path

    return workspace
