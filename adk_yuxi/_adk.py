"""Every use of an ADK private name, in one place.

ADK offers no public way to do a few things we need (reach the invocation of a tool
call, keep a toolset out of ADK's per-invocation cache, hook function-tool argument
handling and its declaration). Each such touch is a small function or base class here,
and `PINNED` lists every private name so `tests/test_adk_private_names.py` checks them
against the installed ADK: an upgrade that renames one fails there, in one place.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.events.event import Event
from google.adk.flows.llm_flows.core._model_call import NO_CONTENT_ERROR_CODE
from google.adk.flows.llm_flows.extensions import _agent_transfer
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.session import Session
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool
from google.genai import types
from typing_extensions import override

__all__ = [
    "EVENT_DECODE_SKIPPED_HOOKS",
    "NO_CONTENT_ERROR_CODE",
    "PINNED",
    "PINNED_FUNCTIONS",
    "PINNED_MODULES",
    "HookedFunctionTool",
    "HookedReflectAndRetryPlugin",
    "StaleSessionError",
    "apply_temp_state",
    "commit_event_to_session",
    "compact_session_now",
    "declaration_of",
    "disable_invocation_cache",
    "function_tool_confirmation",
    "function_tool_context_param",
    "invocation_of",
    "mark_a2a_agent_unavailable",
    "read_for_a_run",
    "rebuild_request_contents",
    "set_storage_marker",
    "storage_marker",
    "transfer_instructions",
    "transfer_targets",
    "trim_temp_delta_state",
]

PINNED: tuple[tuple[str, str, str, str], ...] = (
    # (module, class, private name, "attribute" of an instance | "method" of the class)
    ("google.adk.agents.readonly_context", "ReadonlyContext", "_invocation_context", "attribute"),
    ("google.adk.tools.base_toolset", "BaseToolset", "_use_invocation_cache", "attribute"),
    ("google.adk.tools.base_tool", "BaseTool", "_get_declaration", "method"),
    ("google.adk.tools.function_tool", "FunctionTool", "_get_declaration", "method"),
    ("google.adk.tools.function_tool", "FunctionTool", "_preprocess_args", "method"),
    ("google.adk.tools.function_tool", "FunctionTool", "_context_param_name", "attribute"),
    ("google.adk.tools.function_tool", "FunctionTool", "_require_confirmation", "attribute"),
    ("google.adk.sessions.session", "Session", "_storage_update_marker", "attribute"),
    ("google.adk.runners", "Runner", "_get_or_create_session", "method"),
    (
        "google.adk.sessions.base_session_service",
        "BaseSessionService",
        "_apply_temp_state",
        "method",
    ),
    (
        "google.adk.sessions.base_session_service",
        "BaseSessionService",
        "_trim_temp_delta_state",
        "method",
    ),
    (
        "google.adk.sessions.base_session_service",
        "BaseSessionService",
        "_commit_event_to_session",
        "method",
    ),
    ("google.genai._common", "BaseModel", "_check_field_type_mismatches", "method"),
    ("google.adk.events.event", "Event", "_accept_convenience_kwargs", "method"),
    (
        "google.adk.plugins.reflect_retry_tool_plugin",
        "ReflectAndRetryToolPlugin",
        "_handle_tool_error",
        "method",
    ),
)

PINNED_MODULES: tuple[tuple[str, str], ...] = (
    ("google.adk.errors._stale_session_error", "StaleSessionError"),
    ("google.adk.flows.llm_flows.core._model_call", "NO_CONTENT_ERROR_CODE"),
)
"""(private module, public name) pairs imported from ADK's private modules."""

EVENT_DECODE_SKIPPED_HOOKS: frozenset[tuple[str, str]] = frozenset(
    {
        ("google.genai._common", "BaseModel._check_field_type_mismatches"),
        ("google.adk.events.event", "Event._accept_convenience_kwargs"),
    }
)
"""(module, qualified name) of the validators the fast event decoder leaves out (see
`adk_yuxi.sessions._fast_events`); both are pinned above."""


A2A_AGENT_MODULE = "google.adk.agents.remote_a2a_agent"
"""The optional module ADK imports inside every workflow node it builds (needs `a2a`)."""

PINNED_FUNCTIONS: tuple[tuple[str, str], ...] = (
    # (module, private function)
    ("google.adk.flows.llm_flows.extensions._agent_transfer", "_get_transfer_targets"),
    ("google.adk.flows.llm_flows.extensions._agent_transfer", "_build_transfer_instructions"),
    ("google.adk.apps.compaction", "_run_compaction_for_token_threshold_config"),
)


def transfer_targets(agent: BaseAgent) -> list[BaseAgent]:
    """The agents ADK lets `agent` transfer to (from the agent tree and its flags)."""
    return list(_agent_transfer._get_transfer_targets(agent))


def transfer_instructions(tool_name: str, agent: LlmAgent, targets: Sequence[BaseAgent]) -> str:
    """The transfer instructions ADK appends to `agent`'s request for `targets`."""
    return str(_agent_transfer._build_transfer_instructions(tool_name, agent, targets))


def mark_a2a_agent_unavailable() -> bool:
    """Without the `a2a` package, records ADK's remote A2A agent module as unavailable.

    ADK tries that import for every workflow node it builds (twice a turn) and a failed
    import leaves no trace, so the module runs again each time (~0.8 ms) until `import
    a2a` fails. A `None` entry in `sys.modules` makes the import fail at once, with the
    `ImportError` ADK already expects. True if the entry is there after the call.
    """
    if sys.modules.get(A2A_AGENT_MODULE, False) is None:
        return True
    if A2A_AGENT_MODULE in sys.modules or importlib.util.find_spec("a2a") is not None:
        return False
    sys.modules[A2A_AGENT_MODULE] = None  # type: ignore[assignment]
    return True


def invocation_of(ctx: ReadonlyContext) -> InvocationContext:
    """The invocation behind a callback or tool context (its plugins, its agent)."""
    invocation: InvocationContext = ctx._invocation_context
    return invocation


def disable_invocation_cache(toolset: BaseToolset) -> None:
    """Makes ADK ask `toolset.get_tools` at every model step, not once per invocation:
    what a gated toolset shows changes within an invocation."""
    toolset._use_invocation_cache = False


def declaration_of(tool: BaseTool) -> types.FunctionDeclaration | None:
    """The declaration ADK would send the model for `tool`."""
    return tool._get_declaration()


def function_tool_context_param(tool: FunctionTool) -> str:
    """The parameter through which ADK passes the `ToolContext` to a function tool."""
    name: str = tool._context_param_name
    return name


def storage_marker(session: Session) -> Any:
    """What a session service stored on a `Session` to recognise it at append time
    (read from pydantic's private dict: the attribute lookup costs several µs)."""
    private = session.__pydantic_private__
    if private is not None and "_storage_update_marker" in private:
        return private["_storage_update_marker"]
    return session._storage_update_marker


def set_storage_marker(session: Session, marker: Any) -> None:
    session._storage_update_marker = marker


def apply_temp_state(service: BaseSessionService, session: Session, event: Event) -> None:
    """ADK's own handling of `temp:` state for an event being appended."""
    service._apply_temp_state(session, event)


def trim_temp_delta_state(service: BaseSessionService, event: Event) -> Event:
    return service._trim_temp_delta_state(event)


def commit_event_to_session(service: BaseSessionService, session: Session, event: Event) -> Event:
    """ADK's own bookkeeping once an event is stored (state applied, event appended)."""
    return service._commit_event_to_session(session, event)


def function_tool_confirmation(tool: FunctionTool) -> Any:
    """What a function tool was built with as `require_confirmation`."""
    return tool._require_confirmation


class HookedFunctionTool(FunctionTool):
    """A `FunctionTool` whose argument preprocessing and declaration are ours.

    ADK documents `_preprocess_args` as the hook for subclasses; overriding it keeps
    ADK's own invocation path (context injection, confirmation, generators).
    """

    def preprocess_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        return args

    def declaration(self) -> types.FunctionDeclaration | None:
        return super()._get_declaration()

    @override
    def _preprocess_args(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.preprocess_arguments(args)

    @override
    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return self.declaration()


class HookedReflectAndRetryPlugin(ReflectAndRetryToolPlugin):
    """ADK's reflect-and-retry plugin with its central failure handler (what a failure
    found in a result or raised by a tool is answered with) as a public hook."""

    async def handle_failure(
        self, tool: BaseTool, tool_args: dict[str, Any], tool_context: Any, error: Any
    ) -> dict[str, Any] | None:
        result: dict[str, Any] | None = await super()._handle_tool_error(
            tool, tool_args, tool_context, error
        )
        return result

    @override
    async def _handle_tool_error(
        self, tool: BaseTool, tool_args: dict[str, Any], tool_context: Any, error: Any
    ) -> dict[str, Any] | None:
        return await self.handle_failure(tool, tool_args, tool_context, error)


_RUN_READERS: tuple[Any, frozenset[Any], Any] | None = None


def _code_tree(code: Any) -> set[Any]:
    """A function's code object and those of the functions nested in it."""
    found = {code}
    for const in code.co_consts:
        if hasattr(const, "co_consts"):
            found |= _code_tree(const)
    return found


def _run_readers() -> tuple[Any, frozenset[Any], Any]:
    global _RUN_READERS
    if _RUN_READERS is None:
        from google.adk.runners import Runner  # late: the Runner imports the sessions

        _RUN_READERS = (
            Runner._get_or_create_session.__code__,
            frozenset(_code_tree(Runner.run_async.__code__)),
            Runner.run_debug.__code__,
        )
    return _RUN_READERS


def read_for_a_run() -> bool:
    """Whether the `get_session` calling this (directly, before its first await) was
    called by ADK's Runner to run a turn: from `run_async` (through
    `_get_or_create_session`) or `run_debug`.

    ADK passes no config for those reads unless the caller's `RunConfig` has one, and the
    same call without a config also serves listing and export, so the caller is told
    apart by the identity of its code. `rewind_async` reads through the same helper but
    needs the whole history: only `run_async` above it counts.
    """
    get_or_create, run_async, run_debug = _run_readers()
    try:
        caller = sys._getframe(2)  # 0: here, 1: get_session, 2: its caller
    except ValueError:
        return False
    if caller.f_code is run_debug:
        return True
    if caller.f_code is not get_or_create:
        return False
    outer = caller.f_back
    return outer is not None and outer.f_code in run_async


async def compact_session_now(
    ctx: InvocationContext,
    session: Session | None = None,
    service: BaseSessionService | None = None,
) -> bool:
    """Compacts the run's session (or `session`, a copy of it read afresh) now, whatever
    its last reported prompt size: ADK's token-threshold compaction (its range, its
    summarizer, its event) with a threshold of zero tokens (a model that reports a prompt
    size of 0 compacts too), its event appended through `service` (default: the run's).
    False when the app has no token-threshold compaction or nothing was compacted."""
    from google.adk.apps import compaction

    config = ctx.events_compaction_config
    if config is None or config.token_threshold is None or config.event_retention_size is None:
        return False
    agent = ctx.agent
    if agent is None:
        return False
    compacted = await compaction._run_compaction_for_token_threshold_config(
        config=config.model_copy(update={"token_threshold": 0}),
        session=ctx.session if session is None else session,
        session_service=ctx.session_service if service is None else service,
        agent=agent,
        agent_name=agent.name,
        current_branch=ctx.branch,
        isolation_scope=ctx.isolation_scope,
    )
    return bool(compacted)


async def rebuild_request_contents(ctx: InvocationContext, request: Any) -> None:
    """Rebuilds `request.contents` from the session as ADK's contents processor does
    (after a compaction: the summary in place of the range it covers)."""
    from google.adk.flows.llm_flows.context import _contents

    request.contents = []
    async for _ in _contents.request_processor.run_async(ctx, request):
        pass
