"""What a tool reaches of the run it serves: the workspace and resource checks.

The runtime's authorization plugin implements `RunAccess`; a tool finds it among the
invocation's plugins by what it can do, not by importing the runtime (which sits above
the tools and assembles them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from google.adk.agents.readonly_context import ReadonlyContext

from .._adk import invocation_of
from ..errors import YuxiError
from ._metadata import ResourceType

__all__ = ["ResourceDenied", "RunAccess", "check_resource", "run_access", "run_workspace"]


class ResourceDenied(YuxiError, PermissionError):
    """A tool argument names a resource the user may not use (or that does not exist:
    the two are deliberately indistinguishable to the caller). A tool may let it
    propagate: the runtime turns it into a `resource_not_available` tool error."""

    def __init__(self, argument: str, kind: ResourceType, detail: str) -> None:
        super().__init__(f"argument {argument!r}: {kind.value} not available")
        self.argument = argument
        self.kind = kind
        self.detail = detail  # for operators' logs only


@runtime_checkable
class RunAccess(Protocol):
    """The rights of the run a call belongs to, as of the latest check."""

    def workspace_of(self, ctx: ReadonlyContext) -> Path | None: ...

    async def check_resource(
        self, ctx: ReadonlyContext, kind: ResourceType, value: Any
    ) -> str | None: ...


def run_access(ctx: ReadonlyContext) -> RunAccess | None:
    """The plugin that decides this invocation's calls, or None outside a Yuxi app."""
    for plugin in invocation_of(ctx).plugin_manager.plugins:
        if isinstance(plugin, RunAccess):
            return plugin
    return None


def run_workspace(ctx: ReadonlyContext) -> Path | None:
    """The workspace of the agent making this call; None without one (or a Yuxi run)."""
    access = run_access(ctx)
    return None if access is None else access.workspace_of(ctx)


async def check_resource(ctx: ReadonlyContext, kind: ResourceType | str, value: Any) -> None:
    """Raises `ResourceDenied` unless this run may touch `value`, on the rights of the
    latest check. A tool may let it propagate: the plugin answers the model with
    `resource_not_available`.

    Outside a Yuxi runtime there is nothing to check against, so it refuses: a tool
    that guards a resource must not become open by being attached to a plain agent.
    """
    resource = ResourceType(kind)
    access = run_access(ctx)
    reason = (
        "no Yuxi runtime in this invocation"
        if access is None
        else await access.check_resource(ctx, resource, value)
    )
    if reason is not None:
        raise ResourceDenied("(direct)", resource, reason)
