"""One App, many users: the rights of each run are resolved when the run starts.

`build_app(config, source)` with a `PrincipalSource` gives the agent a `PerUserToolset`
and the app a `PerUserAuthorizationPlugin`, both reading one `UserRuntimes`. At the start
of every run the plugin asks the source for the principal of `ctx.user_id`, takes the
runtime assembled for that principal (context, gated toolset, guard and checks: an
`AuthorizationPlugin` that is never registered itself) and binds it to the invocation
id; the toolset and every check of that invocation then use exactly that runtime, so
concurrent runs of different users on one Runner cannot see each other's rights.

The source is asked every run, so changed rights show from the next run; assembled
runtimes are cached per principal value (a bounded LRU), so a busy app does not rebuild
them per request. A changed principal is a different key, never a stale hit.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from ..access import AccessDenied, NotFoundError, Principal
from ._plugin import (
    PLUGIN_NAME,
    AuthorizationPlugin,
    Refusal,
    emit_refusal,
    stop_response,
    tool_error,
)
from ._principals import PrincipalSource
from ._tools import GatedToolset

__all__ = ["PerUserAuthorizationPlugin", "PerUserToolset", "UserRuntimes"]

logger = logging.getLogger("adk_yuxi.runtime.per_user")

Bound = AuthorizationPlugin | AccessDenied
"""What a run is bound to: its runtime's checks, or the reason it may not run at all."""

_UNBOUND = "no principal was resolved for this run"


class _Entry:
    """A cached runtime and the number of runs using it; closed once evicted and idle."""

    __slots__ = ("cached", "runtime", "users")

    def __init__(self, runtime: AuthorizationPlugin) -> None:
        self.runtime = runtime
        self.users = 0
        self.cached = True


class _Run:
    __slots__ = ("bound", "entry", "finalizer")

    def __init__(self, bound: Bound, entry: _Entry | None) -> None:
        self.bound = bound
        self.entry = entry
        self.finalizer: weakref.finalize | None = None


class UserRuntimes:
    """The runtimes of one agent for every user who runs it, and which run uses which.

    `assemble` builds the runtime of one principal; `cache_size` bounds how many are
    kept (least recently used go first; one still in use by a run is closed when that
    run ends). Runs are keyed by invocation id and released by `release`, which the
    plugin calls from `after_run_callback` and `on_run_error_callback`; a run that ends
    in neither (cancelled mid-flight) is released when ADK drops its invocation context.
    """

    def __init__(
        self,
        source: PrincipalSource,
        assemble: Callable[[Principal], AuthorizationPlugin],
        *,
        cache_size: int = 256,
    ) -> None:
        if cache_size < 1:
            raise ValueError("cache_size must be at least 1")
        self._source = source
        self._assemble = assemble
        self._cache_size = cache_size
        self._cache: OrderedDict[Principal, _Entry] = OrderedDict()
        self._runs: dict[str, _Run] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.assembled = 0
        """How many runtimes were assembled so far (cache misses), for tests and stats."""

    @property
    def running(self) -> int:
        """Runs currently bound; zero whenever the app is idle."""
        return len(self._runs)

    @property
    def cached(self) -> int:
        return len(self._cache)

    def current(self, invocation_id: str) -> Bound | None:
        run = self._runs.get(invocation_id)
        return None if run is None else run.bound

    async def open(self, invocation_context: InvocationContext) -> Bound:
        """Resolves the principal of this run and binds its runtime to the invocation."""
        invocation_id = invocation_context.invocation_id
        user_id = invocation_context.user_id
        entry: _Entry | None = None
        try:
            principal = await self._source(user_id)
        except NotFoundError:
            bound: Bound = AccessDenied("this user is not known")
        else:
            if principal.user_id != user_id:
                bound = AccessDenied("the principal source answered for another user")
            elif not principal.user.active:
                bound = AccessDenied("this user account is disabled")
            else:
                entry = self._entry(principal)
                entry.users += 1
                bound = entry.runtime
        await self.release(invocation_id)  # a resumed invocation binds afresh
        run = _Run(bound, entry)
        run.finalizer = weakref.finalize(invocation_context, self._abandon, invocation_id, run)
        self._runs[invocation_id] = run
        await self._evict()
        return bound

    async def release(self, invocation_id: str) -> None:
        """Ends the binding of `invocation_id`; safe to call more than once."""
        entry = self._unbind(invocation_id, None)
        if entry is not None:
            await entry.runtime.gate.close()

    async def close(self) -> None:
        """Closes the connections (MCP sessions) of every runtime no run is using.

        The cache is kept: a runner closing (a host may open one per request on a shared
        App) must not cost the next run its assembly, and MCP toolsets reconnect on use.
        """
        await asyncio.gather(*(e.runtime.gate.close() for e in self._cache.values() if not e.users))

    # -- internals ----------------------------------------------------------------------

    def _entry(self, principal: Principal) -> _Entry:
        entry = self._cache.get(principal)
        if entry is not None:
            self._cache.move_to_end(principal)
            return entry
        entry = _Entry(self._assemble(principal))
        self.assembled += 1
        self._cache[principal] = entry
        return entry

    async def _evict(self) -> None:
        idle: list[_Entry] = []
        while len(self._cache) > self._cache_size:
            _, entry = self._cache.popitem(last=False)
            entry.cached = False
            if not entry.users:
                idle.append(entry)
        await asyncio.gather(*(e.runtime.gate.close() for e in idle))

    def _unbind(self, invocation_id: str, only: _Run | None) -> _Entry | None:
        """Drops the run (only if it is still `only`, when given) and returns its entry
        when that entry now needs closing (evicted and no longer used)."""
        run = self._runs.get(invocation_id)
        if run is None or (only is not None and run is not only):
            return None
        del self._runs[invocation_id]
        if run.finalizer is not None:
            run.finalizer.detach()
        if isinstance(run.bound, AuthorizationPlugin):
            run.bound.end_run(invocation_id)
        entry = run.entry
        if entry is None:
            return None
        entry.users -= 1
        return entry if not entry.cached and not entry.users else None

    def _abandon(self, invocation_id: str, run: _Run) -> None:
        """The invocation context was dropped without after_run or on_run_error (ADK
        skips both when a run is cancelled), so the binding is released here."""
        entry = self._unbind(invocation_id, run)
        if entry is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            logger.warning("an evicted runtime of an abandoned run could not be closed")
            return
        task = loop.create_task(entry.runtime.gate.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)


class PerUserToolset(BaseToolset):
    """The one toolset of an agent whose app serves many users: the `GatedToolset` of
    the runtime bound to the current invocation. A run without a runtime (refused, or
    outside a run) sees no tools at all."""

    def __init__(self, runtimes: UserRuntimes) -> None:
        super().__init__()
        self.runtimes = runtimes
        self._use_invocation_cache = False  # visibility changes within an invocation

    def gate(self, ctx: ReadonlyContext | None) -> GatedToolset | None:
        bound = None if ctx is None else self.runtimes.current(ctx.invocation_id)
        return bound.gate if isinstance(bound, AuthorizationPlugin) else None

    @override
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        gate = self.gate(readonly_context)
        return [] if gate is None else await gate.get_tools(readonly_context)

    @override
    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        gate = self.gate(tool_context)
        if gate is not None:
            await gate.process_llm_request(tool_context=tool_context, llm_request=llm_request)

    @override
    async def close(self) -> None:
        await self.runtimes.close()


class PerUserAuthorizationPlugin(BasePlugin):
    """Binds each run to its user's runtime and hands every check to that runtime.

    Registered under `PLUGIN_NAME`, so `check_resource` inside tools finds the runtime of
    its own invocation. A refused run (unknown or disabled user) ends at its first model
    call with an `ACCESS_DENIED` error event; the model is never asked and no tool runs.
    """

    def __init__(
        self, runtimes: UserRuntimes, *, on_refusal: Callable[[Refusal], None] | None = None
    ) -> None:
        super().__init__(name=PLUGIN_NAME)
        self.runtimes = runtimes
        self._on_refusal = on_refusal

    def runtime(self, invocation_id: str) -> AuthorizationPlugin | None:
        """The checks of the run `invocation_id`, if it is bound to a runtime."""
        bound = self.runtimes.current(invocation_id)
        return bound if isinstance(bound, AuthorizationPlugin) else None

    def _reason(self, invocation_id: str) -> str:
        bound = self.runtimes.current(invocation_id)
        return bound.reason if isinstance(bound, AccessDenied) else _UNBOUND

    @override
    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        bound = await self.runtimes.open(invocation_context)
        if isinstance(bound, AccessDenied):
            refusal: Refusal = {
                "event": "access_denied",
                "code": "access_denied",
                "tool": None,
                "user_id": invocation_context.user_id,
                "agent": getattr(invocation_context.agent, "name", invocation_context.app_name),
                "invocation_id": invocation_context.invocation_id,
                "detail": bound.reason,
            }
            emit_refusal(refusal, self._on_refusal)
        # The refusal is delivered at the first model call, as an error event with a code
        # (an early exit from here could only carry plain content).
        return None

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        runtime = self.runtime(callback_context.invocation_id)
        if runtime is None:
            return stop_response(AccessDenied.CODE, self._reason(callback_context.invocation_id))
        return await runtime.before_model_callback(
            callback_context=callback_context, llm_request=llm_request
        )

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        runtime = self.runtime(tool_context.invocation_id)
        if runtime is None:
            return tool_error("access_denied", tool.name)
        return await runtime.before_tool_callback(
            tool=tool, tool_args=tool_args, tool_context=tool_context
        )

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        await self.runtimes.release(invocation_context.invocation_id)

    @override
    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        # ADK skips after_run when a run fails; the binding must not outlive the run.
        await self.runtimes.release(invocation_context.invocation_id)
