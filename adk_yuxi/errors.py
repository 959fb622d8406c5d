"""The one root of every error adk_yuxi raises on purpose.

Each package keeps its own error types (and the ADK or builtin bases callers of
the ADK interfaces already catch); all of them also derive from ``YuxiError`` so a
host can catch everything of ours in one place.
"""

from __future__ import annotations

__all__ = ["YuxiError"]


class YuxiError(Exception):
    """Base class of every error adk_yuxi raises on purpose."""
