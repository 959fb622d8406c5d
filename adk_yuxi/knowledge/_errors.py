"""Knowledge errors: each message is safe to show the user who caused it."""

from __future__ import annotations

from adk_yuxi.errors import YuxiError

__all__ = [
    "DelegationError",
    "InvalidKnowledgeRequestError",
    "KnowledgeAccessDenied",
    "KnowledgeConfigError",
    "KnowledgeError",
    "UnknownFileError",
    "UnknownKnowledgeBaseError",
]


_SHOWN = 64


def shown(value: object) -> str:
    """A caller's value as a message repeats it: its repr, cut to a readable length (an
    error must not hand back 100,000 characters the caller sent)."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


class KnowledgeError(YuxiError):
    """Base of the knowledge package's errors."""


class InvalidKnowledgeRequestError(KnowledgeError, ValueError):
    """An argument out of range or malformed (a bad id, an oversize regex, ...)."""


class KnowledgeConfigError(KnowledgeError, ValueError):
    """A store or server option that cannot work (refused when it is built)."""


class UnknownKnowledgeBaseError(KnowledgeError, LookupError):
    def __init__(self, kb_id: str) -> None:
        super().__init__(f"no knowledge base {shown(kb_id)} is visible to this call")
        self.kb_id = kb_id


class UnknownFileError(KnowledgeError, LookupError):
    def __init__(self, kb_id: str, file_id: str) -> None:
        super().__init__(
            f"no file {shown(file_id)} in knowledge base {shown(kb_id)} is visible to this call"
        )
        self.kb_id = kb_id
        self.file_id = file_id


class KnowledgeAccessDenied(KnowledgeError, PermissionError):
    """The caller's current rights do not reach the knowledge asked for."""


class DelegationError(KnowledgeError, PermissionError):
    """A delegation token that is missing, malformed, forged, expired or misaddressed."""
