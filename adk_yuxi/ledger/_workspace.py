"""Per-user workspace roots under one directory, for Apps that serve many users."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from adk_yuxi.errors import YuxiError

__all__ = ["UnsafeUserId", "per_user_workspaces"]


class UnsafeUserId(YuxiError, ValueError):
    """A user id that cannot name a directory of its own (it would leave the base)."""


def per_user_workspaces(base: str | Path) -> Callable[[str], Path]:
    """`base/<user id>` for each user; an id that is not one plain path segment (empty,
    a dot name, a separator, NUL, control characters) is refused, never mapped."""
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
        path = root / user_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    return workspace
