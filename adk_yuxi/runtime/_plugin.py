"""Authorization at the execution boundary: every model step and every tool call.

Assembly decided what a run may use; this plugin re-checks at each call, because
things change while a run is in flight. Before each model call it asks the repository
whether the user and the agent are still active; before each tool call it asks that
too, then whether the tool is visible now (the same `compute_visibility` that built the
declarations) and whether its resource arguments pass the guard. A refused call never
reaches the tool; the model gets a structured error that names nothing it may not see;
operators get a `capability_limited` log record with the details.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from ..access import AccessRepository, AgentExecutionRevoked
from ._context import RuntimeContext
from ._resources import ResourceDenied, ResourceGuard
from ._tools import GatedToolset

__all__ = [
    "CAPABILITY_LIMITED",
    "PLUGIN_NAME",
    "AuthorizationPlugin",
    "Refusal",
    "emit_refusal",
    "stop_response",
    "tool_error",
]

PLUGIN_NAME = "yuxi_authorization"
CAPABILITY_LIMITED = "capability_limited"

logger = logging.getLogger("adk_yuxi.runtime.authorization")

Refusal = dict[str, Any]
"""What an operator hook receives: code, tool, user, agent, invocation and detail."""

_MESSAGES = {
    "tool_not_available": (
        "This tool is not available here right now, so it did not run. Use only the"
        " tools you are shown; if a skill provides what you need, load it first."
    ),
    "resource_not_available": (
        "This call names a resource that is not available to this user, so it did"
        " not run. Do not retry with guessed identifiers; ask the user instead."
    ),
    "limit_reached": (
        "The tool call limit for this turn is reached, so it did not run. Answer with"
        " what you have."
    ),
    "agent_execution_revoked": "Access to this agent was withdrawn; the run is ending.",
    "access_denied": "This run has no access to this agent; the run is ending.",
}


def tool_error(code: str, tool: str, **fields: Any) -> dict[str, Any]:
    """The result a refused call gives the model: a code and advice, never the reason."""
    return {"error": {"code": code, "tool": tool, "message": _MESSAGES[code], **fields}}


def emit_refusal(refusal: Refusal, hook: Callable[[Refusal], None] | None) -> None:
    """Logs a refusal for operators (a `capability_limited` record) and calls the hook."""
    logger.warning(
        "%s: %s (tool=%s user=%s agent=%s): %s",
        refusal["event"],
        refusal["code"],
        refusal["tool"],
        refusal["user_id"],
        refusal["agent"],
        refusal["detail"],
        extra={"yuxi_event": refusal["event"], "yuxi_refusal": refusal},
    )
    if hook is not None:
        hook(refusal)


def stop_response(code: str, reason: str) -> LlmResponse:
    """An error response in place of the model's. It ends the run through ADK's own path:
    it carries no function call, so the flow treats it as the final event."""
    return LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(text=f"This run was stopped: {reason}.")]
        ),
        error_code=code,
        error_message=reason,
        turn_complete=True,
    )


class AuthorizationPlugin(BasePlugin):
    def __init__(
        self,
        context: RuntimeContext,
        gate: GatedToolset,
        guard: ResourceGuard,
        *,
        repository: AccessRepository | None = None,
        on_refusal: Callable[[Refusal], None] | None = None,
    ) -> None:
        super().__init__(name=PLUGIN_NAME)
        self.context = context
        self.gate = gate
        self.guard = guard
        self.repository = repository
        self._on_refusal = on_refusal
        self._tool_calls: dict[str, int] = {}

    # -- checks -------------------------------------------------------------------------

    async def denial(self, ctx: ReadonlyContext) -> str | None:
        """Why this run may not continue, re-read now; None while it may."""
        if ctx.user_id != self.context.user_id:
            return "this run belongs to another user"
        if self.repository is None:
            return None
        return await self.repository.execution_denial(self.context.user_id, self.context.agent_id)

    def _record(self, code: str, ctx: ReadonlyContext, tool: str | None, detail: str) -> None:
        emit_refusal(
            {
                "event": CAPABILITY_LIMITED,
                "code": code,
                "tool": tool,
                "user_id": self.context.user_id,
                "agent": self.context.agent_id,
                "invocation_id": ctx.invocation_id,
                "detail": detail,
            },
            self._on_refusal,
        )

    # -- ADK callbacks ------------------------------------------------------------------

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        reason = await self.denial(callback_context)
        if reason is None:
            return None
        self._record("agent_execution_revoked", callback_context, None, reason)
        return stop_response(AgentExecutionRevoked.CODE, reason)

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        name = tool.name
        reason = await self.denial(tool_context)
        if reason is not None:
            # The next model step ends the run with the revocation event.
            self._record("agent_execution_revoked", tool_context, name, reason)
            return tool_error("agent_execution_revoked", name)
        visibility = self.gate.visibility(tool_context)
        if not self.gate.permits(tool, visibility):
            self._record("tool_not_available", tool_context, name, "hidden, gated or unknown")
            return tool_error("tool_not_available", name)
        invocation = tool_context.invocation_id
        count = self._tool_calls.get(invocation, 0) + 1
        self._tool_calls[invocation] = count
        if count > self.context.config.limits.max_tool_calls_per_turn:
            self._record("limit_reached", tool_context, name, f"{count} tool calls")
            return tool_error("limit_reached", name)
        try:
            await self.guard.check_call(name, tool_args)
        except ResourceDenied as denied:
            self._record("resource_not_available", tool_context, name, denied.detail)
            return tool_error("resource_not_available", name, argument=denied.argument)
        return None

    def end_run(self, invocation_id: str) -> None:
        """Forgets the per-run counters of `invocation_id`."""
        self._tool_calls.pop(invocation_id, None)

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self.end_run(invocation_context.invocation_id)

    @override
    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        # ADK skips after_run when a run fails, so the counters are dropped here too.
        self.end_run(invocation_context.invocation_id)
