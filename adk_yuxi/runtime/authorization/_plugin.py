"""`AuthorizationPlugin`: the one plugin that binds runs to runtimes and checks every call.

At run start it asks the principal source for the user of the run, refuses the run
(`ACCESS_DENIED`, before the model is asked) or binds it to that principal's runtime.
At every model call and every tool call it re-reads the user's rights as of now
(`LiveRights`) and decides on them: a withdrawn right takes effect at the next call.
It also enforces the run's `Limits` and turns tool failures into `tool_failed` results
within the run's failure budget. A check that cannot be made fails closed and ends the
run with `AUTHORIZATION_UNAVAILABLE`; nothing escapes the Runner as an exception.

Extending: a new check of every tool call goes in `before_tool_callback` (after the
visibility check, before the guard); a new per-run counter goes in `RunBudget`; a new
ADK hook is one more override here, reading the run with `self.bindings.get`.
"""

from __future__ import annotations

import logging
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from adk_yuxi.errors import RunStopped, ToolErrorCode, stop_response, tool_error

from ...access import AccessDenied, AgentExecutionRevoked, NotFoundError, Principal
from ...observability._metrics import instruments
from ..rights._cache import RuntimeCache
from ..rights._decisions import skill_decision, tool_decision, unknown_user
from ..rights._handoff import restrict_transfers
from ..rights._principals import PrincipalSource
from ..rights._resources import ResourceDenied
from ..rights._rights import LiveRights
from ..rights._tools import DuplicateToolError
from ..rights._tree_runtime import TreeRuntime, TreeRuntimeFactory
from ..rights._visibility import SKILL_LOADER_TOOLS
from ._binding import Run, RunBindings, model_step
from ._budget import RunBudget
from ._decision_spans import decided, decided_call, note_resource, refused_in_tool
from ._errors import (
    AgentAssemblyFailed,
    AuthorizationUnavailable,
    LlmCallLimitReached,
    ToolCallLimitReached,
    ToolFailureLimitReached,
)
from ._final_call import FINAL_ANSWER_INSTRUCTION, final_parts, withdraw_tools
from ._refusals import RefusalHook, Reporter
from ._tool_access import ToolAccess
from ._tree_calls import AgentToolCall, pending_agent_tool_call
from ._tree_checks import TreeChecks

__all__ = ["FINAL_ANSWER_INSTRUCTION", "PLUGIN_NAME", "AuthorizationPlugin"]

PLUGIN_NAME = "yuxi_authorization"

FAILED_PAST_BUDGET = (
    "The tool ran and failed, so there is no result. Too many tool calls have failed in"
    " this run, so it is ending."
)

logger = logging.getLogger("adk_yuxi.runtime.authorization")


class AuthorizationPlugin(TreeChecks, ToolAccess):
    def __init__(
        self,
        factory: TreeRuntimeFactory,
        source: PrincipalSource,
        *,
        rights: LiveRights,
        separate_rights: bool,
        cache_size: int = 256,
        on_refusal: RefusalHook | None = None,
    ) -> None:
        super().__init__(name=PLUGIN_NAME)
        self.factory = factory
        self.source = source
        self.rights = rights
        self._separate_rights = separate_rights
        self.cache = RuntimeCache(factory, size=cache_size)
        self.bindings = RunBindings(self.cache)
        self.reporter = Reporter(factory.config.name, on_refusal)
        self.agents = {}
        self.agent_tools = {}

    # -- decisions ----------------------------------------------------------------------

    def _stop(
        self,
        run: Run,
        stop: type[RunStopped],
        detail: str,
        tool: str | None = None,
        agent: str | None = None,
    ) -> None:
        if run.stop is None:
            run.stop = stop
            if isinstance(run.link, AgentToolCall):
                run.link.stopped = stop.CODE  # the caller gets a tool error
            self.reporter.record(
                stop.CODE.lower(),
                user_id=run.user_id,
                invocation_id=run.invocation_id,
                tool=tool,
                detail=detail,
                agent=agent,
            )

    def stop_run(self, run: Run, stop: type[RunStopped], detail: str) -> None:
        """Ends `run` at its next model call with `stop`'s error event; `detail` goes to
        the operator log only."""
        logger.error("run %s stopped (%s): %s", run.invocation_id, stop.CODE, detail)
        self._stop(run, stop, detail)

    def _refuse(
        self, run: Run, code: ToolErrorCode, tool: str, detail: str, agent: str | None = None
    ) -> None:
        self.reporter.record(
            code.value,
            user_id=run.user_id,
            invocation_id=run.invocation_id,
            tool=tool,
            detail=detail,
            agent=agent,
        )

    async def current_runtime(
        self, run: Run, tool: str | None = None, *, step: int | None = None
    ) -> TreeRuntime | None:
        """The runtimes of the run's principal as of now, or None when the run must end
        (`run.stop` says why).

        `step` names a model step (the session's event count): the tools declared for a
        step and the model call itself are decided once, on one read of the rights.
        Every tool call reads them afresh.
        """
        if run.runtime is None or run.refused is not None or run.stop is not None:
            return None
        if (above := run.stopped_above()) is not None:
            self._stop(run, above, "a run above this nested run was stopped", tool)
            return None
        if step is not None and step == run.checked_step:
            return run.live
        run.checked_step = step
        try:
            principal = await self.rights.current(run.user_id)
        except NotFoundError:
            self._stop(run, AgentExecutionRevoked, "the user no longer exists", tool)
            return None
        except Exception as exc:  # fail closed on any failure of the check itself
            logger.error("rights of %r could not be read", run.user_id, exc_info=exc)
            self._stop(run, AuthorizationUnavailable, f"rights unreadable: {exc!r}", tool)
            return None
        if principal is run.principal:
            return run.live
        reason = self.rights.denial(principal, run.user_id)
        if reason is not None:
            self._stop(run, AgentExecutionRevoked, reason, tool)
            return None
        assembled = self.cache.assembled
        run.live = self.cache.get(principal)
        run.principal = principal
        if self.cache.assembled != assembled:
            await self.cache.evict()
        return run.live

    def _assemble(
        self, run: Run, principal: Principal, live: Principal
    ) -> tuple[type[RunStopped], str] | None:
        """Binds the run to the runtimes of `principal`; why it may not run, if so. A
        config whose tools clash for this user ends the run with an error event."""
        try:
            run.runtime = self.cache.acquire(principal)
            if run.runtime.denied is not None:
                return (AccessDenied, run.runtime.denied)
            run.live = run.runtime if live is principal else self.cache.get(live)
        except DuplicateToolError as exc:
            logger.error("the tools of %r could not be assembled: %s", run.user_id, exc)
            return (AgentAssemblyFailed, str(exc))
        run.principal = live
        run.budget = RunBudget.from_limits(run.runtime.context.config.limits)
        return None

    async def _bind(self, invocation_context: InvocationContext) -> Run:
        user_id = invocation_context.user_id
        call = pending_agent_tool_call()
        agent = getattr(invocation_context.agent, "name", None)
        if call is not None and call.matches(user_id, agent):
            return self.bind_nested(invocation_context, call)
        run = Run(user_id=user_id, invocation_id=invocation_context.invocation_id)
        refused: tuple[type[RunStopped], str] | None = None
        principal: Principal | None = None
        try:
            principal = await self.source(user_id)
            live = await self.rights.current(user_id) if self._separate_rights else principal
        except NotFoundError:
            refused = (AccessDenied, unknown_user(user_id).reason)
        except Exception as exc:  # fail closed on any failure of the check itself
            logger.error("principal of %r could not be loaded", user_id, exc_info=exc)
            refused = (AuthorizationUnavailable, f"principal unreadable: {exc!r}")
        else:
            # The agent's share is a question for the rights, not for the source.
            reason = self.rights.denial(principal, user_id, agent=not self._separate_rights)
            if reason is None and self._separate_rights:
                reason = self.rights.denial(live, user_id)
            if reason is not None:
                refused = (AccessDenied, reason)
            else:
                refused = self._assemble(run, principal, live)
                if refused is None:
                    # Rights were just read: they also serve the first model step, if
                    # no event comes between (one read per step, as for any other).
                    run.checked_step = len(invocation_context.session.events)
        await self.bindings.release(run.invocation_id)  # a resumed invocation binds afresh
        self.bindings.bind(run, invocation_context)
        await self.cache.evict()
        if refused is not None:
            run.refused = refused[0]
            self.reporter.record(
                refused[0].CODE.lower(),
                user_id=user_id,
                invocation_id=run.invocation_id,
                tool=None,
                detail=refused[1],
            )
        return run

    # -- ADK callbacks ------------------------------------------------------------------

    @override
    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        # A refused run ends at its first model call, as an error event with a code (an
        # early exit from here could only carry plain content).
        await self._bind(invocation_context)
        return None

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        ctx, check = callback_context, self._check_model(callback_context, llm_request)
        return await decided("model", check, user_id=ctx.user_id, agent=ctx.agent_name)

    async def _check_model(
        self, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        run = self.bindings.get(callback_context.invocation_id)
        if run is None:
            return stop_response(AccessDenied)
        if run.refused is not None:
            return stop_response(run.refused)
        call = await self.agent_call(run, callback_context, step=model_step(callback_context))
        if call is None or run.budget is None:
            return stop_response(run.stop or AccessDenied, run.stop_text)
        limits = call.tree.context.config.limits  # the root's: one budget per user turn
        count = run.budget.llm_calls.charge()
        generate = limits.early_stopping == "generate"
        if run.parent is not None and generate and count >= limits.max_llm_calls:
            run.budget.llm_calls.count -= 1  # the last call is the root's final answer
            self._stop(run, LlmCallLimitReached, f"model call {count} in an agent tool")
            return stop_response(LlmCallLimitReached)
        if count > limits.max_llm_calls:
            self._stop(run, LlmCallLimitReached, f"model call {count}")
            return stop_response(LlmCallLimitReached)
        if count == limits.max_llm_calls and generate:
            run.final_call = True
            run.final_tools = withdraw_tools(llm_request)
            return None
        agent = self.agents.get(callback_context.agent_name)
        if agent is not None:
            allowed = [t.name for t in call.tree.handoffs(agent.name)]
            restrict_transfers(llm_request, agent, allowed)
        return None

    @override
    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        run = self.bindings.get(callback_context.invocation_id)
        if run is None or llm_response.partial:
            return None
        if run.stop is run.refused is None and (above := run.stopped_above()) is not None:
            # Stopped above while this model call was in flight: its answer is not the
            # nested run's result, and no call it asks for runs.
            detail = "a run above this nested run was stopped"
            self._stop(run, above, detail, agent=callback_context.agent_name)
            return stop_response(above)
        if not run.final_call:
            return None
        content = llm_response.content
        parts = list(content.parts or []) if content is not None else []
        kept = final_parts(parts, run.final_tools)
        if len(kept) == len(parts):
            return None
        # The last call was made without tools; a call the model made anyway cannot run.
        if not any(p.text or p.function_call for p in kept):
            self._stop(run, LlmCallLimitReached, "the final model call asked for tools")
            return stop_response(LlmCallLimitReached)
        # Changed in place, not returned: a returned response would skip the plugins
        # after this one, and the structured-output guard must still see the answer.
        llm_response.content = types.Content(role="model", parts=kept)
        return None

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        check = self._check_tool(tool, tool_args, tool_context)
        return await decided_call(check, tool, tool_args, tool_context, self.is_tree_call(tool))

    async def _check_tool(
        self, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        name = tool.name
        run = self.bindings.get(tool_context.invocation_id)
        if run is None:
            return tool_error(ToolErrorCode.TOOL_NOT_AVAILABLE, name)
        if run.final_call and name not in run.final_tools:
            return tool_error(ToolErrorCode.RUN_ENDING, name)
        call = await self.agent_call(run, tool_context, name)
        if call is None or run.budget is None:
            return tool_error(ToolErrorCode.RUN_ENDING, name)
        runtime, agent = call.live, tool_context.agent_name
        if self.is_tree_call(tool):
            return self.tree_call(run, call, tool, tool_args, tool_context)
        visibility = runtime.visibility(call.bound.activated_skills(tool_context))
        if not call.bound.permits(tool, visibility):
            decision = tool_decision(runtime.context, name, visibility.active_skills)
            detail = "not this run's instance" if decision.allowed else decision.reason
            self._refuse(run, ToolErrorCode.TOOL_NOT_AVAILABLE, name, detail, agent)
            return tool_error(ToolErrorCode.TOOL_NOT_AVAILABLE, name)
        skill = tool_args.get("skill_name") if name in SKILL_LOADER_TOOLS else None
        if skill is not None and skill not in runtime.context.skill_specs:
            detail = skill_decision(runtime.context, skill).reason
            self._refuse(run, ToolErrorCode.RESOURCE_NOT_AVAILABLE, name, detail)
            return tool_error(ToolErrorCode.RESOURCE_NOT_AVAILABLE, name, argument="skill_name")
        count = run.budget.tool_calls.charge()
        if count > call.tree.context.config.limits.max_tool_calls_per_turn:
            self._stop(run, ToolCallLimitReached, f"tool call {count}", name)
            return tool_error(ToolErrorCode.LIMIT_REACHED, name)
        try:
            await runtime.guard.check_call(name, tool_args)
        except ResourceDenied as denied:
            note_resource(denied.kind.value, denied.argument)
            self._refuse(run, ToolErrorCode.RESOURCE_NOT_AVAILABLE, name, denied.detail)
            return tool_error(ToolErrorCode.RESOURCE_NOT_AVAILABLE, name, argument=denied.argument)
        except Exception as exc:  # the check itself failed (a file resolver raising)
            logger.error("resource check of %r failed", name, exc_info=exc)
            self._stop(run, AuthorizationUnavailable, f"resource check failed: {exc!r}", name)
            return tool_error(ToolErrorCode.RUN_ENDING, name)
        return None

    @override
    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        if not isinstance(error, Exception):  # a cancelled call stays cancelled
            return None
        run = self.bindings.get(tool_context.invocation_id)
        if run is None or run.budget is None:
            return None
        name = tool.name
        if isinstance(error, ResourceDenied):
            refused_in_tool(tool, tool_context, error.kind.value, error.argument)
            self._refuse(run, ToolErrorCode.RESOURCE_NOT_AVAILABLE, name, error.detail)
            return tool_error(ToolErrorCode.RESOURCE_NOT_AVAILABLE, name)
        logger.error("tool %r failed", name, exc_info=error)
        within = run.budget.failures.charge(ToolErrorCode.TOOL_FAILED.value)
        instruments().tool_failure(name, within)
        if within:
            self._refuse(run, ToolErrorCode.TOOL_FAILED, name, repr(error))
            return tool_error(ToolErrorCode.TOOL_FAILED, name)
        self._stop(run, ToolFailureLimitReached, f"{run.budget.failures.total} failures", name)
        return tool_error(ToolErrorCode.RUN_ENDING, name, message=FAILED_PAST_BUDGET)

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        await self.bindings.release(invocation_context.invocation_id)

    @override
    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        # ADK skips after_run when a run fails; the binding must not outlive the run.
        await self.bindings.release(invocation_context.invocation_id)

    # -- for the toolset and for tools --------------------------------------------------

    def run_of(self, ctx: ReadonlyContext) -> Run | None:
        return self.bindings.get(ctx.invocation_id)
