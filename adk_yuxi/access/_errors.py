"""Our own exception types for identity and access, so callers can tell a refusal,
a malformed share config and a missing record apart without parsing messages."""

from __future__ import annotations

from adk_yuxi.errors import YuxiError

__all__ = [
    "AccessDenied",
    "AccessError",
    "AgentExecutionRevoked",
    "NotFoundError",
    "ShareConfigError",
]


class AccessError(YuxiError):
    """Base class for everything the access layer raises on purpose."""


class ShareConfigError(AccessError, ValueError):
    """A share config that cannot be saved, e.g. a manage scope wider than the read scope.

    Raised before anything is written, so a rejected save leaves the stored row as it was.
    """


class NotFoundError(AccessError, LookupError):
    """A user or resource id that the repository does not hold."""

    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(f"no {kind} with id {ident!r}")
        self.kind = kind
        self.ident = ident


class AgentExecutionRevoked(AccessError):
    """The right to keep running this agent was withdrawn while the run was in flight.

    The runtime does not raise this through ADK (a plugin exception would end the run as
    an opaque `RuntimeError`); it ends the run with an error event carrying `CODE`, and
    `from_event` turns that event back into this exception for callers who prefer one.
    """

    CODE = "AGENT_EXECUTION_REVOKED"

    def __init__(self, reason: str) -> None:
        super().__init__(f"agent execution revoked: {reason}")
        self.reason = reason

    @classmethod
    def from_event(cls, event: object) -> AgentExecutionRevoked | None:
        """The exception an ADK event stands for, or None if it is not a revocation."""
        if getattr(event, "error_code", None) != cls.CODE:
            return None
        message = getattr(event, "error_message", None) or "access withdrawn"
        return cls(str(message))


class AccessDenied(AccessError):
    """A run that could not start: its principal source refused the user (unknown,
    disabled, or answered for someone else), so nothing ran and the model was not asked.

    Distinct from `AgentExecutionRevoked`, which ends a run that had rights when it
    started; both arrive as an error event carrying their `CODE`, never as an exception
    through ADK.
    """

    CODE = "ACCESS_DENIED"

    def __init__(self, reason: str) -> None:
        super().__init__(f"access denied: {reason}")
        self.reason = reason

    @classmethod
    def from_event(cls, event: object) -> AccessDenied | None:
        """The exception an ADK event stands for, or None if it is not a denial."""
        if getattr(event, "error_code", None) != cls.CODE:
            return None
        message = getattr(event, "error_message", None) or "access denied"
        return cls(str(message))
