"""The ways the runtime ends a run besides access (see `adk_yuxi.access` for those):
each arrives as an error event carrying its `CODE` and public text."""

from __future__ import annotations

from adk_yuxi.errors import RunStopped

__all__ = [
    "AgentAssemblyFailed",
    "AuthorizationUnavailable",
    "DelegationStopped",
    "LlmCallLimitReached",
    "ToolCallLimitReached",
    "ToolFailureLimitReached",
]


class AgentAssemblyFailed(RunStopped):
    """The agent's tools could not be put together for this user (two share a name): a
    deployment error that build-time checks could not see. The cause is in the operator log."""

    CODE = "AGENT_ASSEMBLY_FAILED"
    PUBLIC_TEXT = "this agent could not be assembled; the operator has been told why"


class AuthorizationUnavailable(RunStopped):
    """A check could not be made (the principal source raised, the access database could
    not be read), so nothing more ran: failing closed. The cause is in the operator log."""

    CODE = "AUTHORIZATION_UNAVAILABLE"
    PUBLIC_TEXT = "rights could not be checked right now; try again later"


class DelegationStopped(RunStopped):
    """A built-in server's delegation could not be minted for this run (the agent's
    knowledge selection is too wide for a token): the run ends saying so rather than
    going on without the server. The cause is in the operator log."""

    CODE = "DELEGATION_UNAVAILABLE"
    PUBLIC_TEXT = (
        "the knowledge server could not be reached with this agent's selection of knowledge"
        " bases; an administrator must narrow it or leave it unset"
    )


class LlmCallLimitReached(RunStopped):
    """`Limits.max_llm_calls` was reached with `early_stopping="force"`."""

    CODE = "MAX_LLM_CALLS"
    PUBLIC_TEXT = "the model call limit of this run was reached"


class ToolCallLimitReached(RunStopped):
    """`Limits.max_tool_calls_per_turn` was exceeded."""

    CODE = "MAX_TOOL_CALLS"
    PUBLIC_TEXT = "the tool call limit of this turn was reached"


class ToolFailureLimitReached(RunStopped):
    """More tool calls failed than `Limits.max_tool_failures` allows."""

    CODE = "TOOL_FAILURES"
    PUBLIC_TEXT = "too many tool calls failed in this run"
