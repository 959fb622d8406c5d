"""Every call of a run decided on the rights of that moment: the `AuthorizationPlugin`
(bound to each run by invocation id), its budget and limits, the stops that end a run,
refusals for the operator, agent-tool and handoff checks in trees, and what a tool
reaches of its run (`current_run`, `check_resource`)."""

from ._access import check_resource, current_agent_runtime, current_run, run_budget
from ._binding import Run
from ._budget import RunBudget
from ._errors import (
    AgentAssemblyFailed,
    AuthorizationUnavailable,
    DelegationStopped,
    LlmCallLimitReached,
    ToolCallLimitReached,
    ToolFailureLimitReached,
)
from ._plugin import FINAL_ANSWER_INSTRUCTION, PLUGIN_NAME, AuthorizationPlugin
from ._refusals import CAPABILITY_LIMITED, Refusal, RefusalHook

__all__ = [
    "CAPABILITY_LIMITED",
    "FINAL_ANSWER_INSTRUCTION",
    "PLUGIN_NAME",
    "AgentAssemblyFailed",
    "AuthorizationPlugin",
    "AuthorizationUnavailable",
    "DelegationStopped",
    "LlmCallLimitReached",
    "Refusal",
    "RefusalHook",
    "Run",
    "RunBudget",
    "ToolCallLimitReached",
    "ToolFailureLimitReached",
    "check_resource",
    "current_agent_runtime",
    "current_run",
    "run_budget",
]
