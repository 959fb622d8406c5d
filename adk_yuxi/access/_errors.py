"""Our own exception types for identity and access, so callers can tell a refusal,
a malformed share config and a missing record apart without parsing messages."""

from __future__ import annotations

from adk_yuxi.errors import RunStopped, YuxiError

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


class AgentExecutionRevoked(AccessError, RunStopped):
    """The right to keep running this agent was withdrawn while the run was in flight
    (the user disabled or demoted, the agent's share withdrawn). Arrives as an error
    event carrying `CODE` (see `adk_yuxi.errors.RunStopped`)."""

    CODE = "AGENT_EXECUTION_REVOKED"
    PUBLIC_TEXT = "access to this agent was withdrawn"


class AccessDenied(AccessError, RunStopped):
    """A run that could not start: the user is unknown or disabled, the principal source
    answered for someone else, or the user may not use this agent. Nothing ran and the
    model was not asked. Every cause gets the same public text, so the event does not
    tell an outsider which user ids exist; the cause goes to the operator log."""

    CODE = "ACCESS_DENIED"
    PUBLIC_TEXT = "this user may not run this agent"
