"""Resource checks from inside a tool: defence in depth behind the plugin's check."""

from __future__ import annotations

from typing import Any

from google.adk.tools.tool_context import ToolContext

from ._per_user import PerUserAuthorizationPlugin
from ._plugin import PLUGIN_NAME, AuthorizationPlugin
from ._resources import ResourceDenied, ResourceType

__all__ = ["check_resource", "runtime_plugin"]


def runtime_plugin(tool_context: ToolContext) -> AuthorizationPlugin | None:
    """The authorization checks of the run this tool call belongs to, if any (in an app
    serving many users, those of the runtime bound to this invocation)."""
    # ADK offers no public accessor for the invocation's plugins; its own tools read the
    # invocation context the same way.
    plugin = tool_context._invocation_context.plugin_manager.get_plugin(PLUGIN_NAME)
    if isinstance(plugin, PerUserAuthorizationPlugin):
        return plugin.runtime(tool_context.invocation_id)
    return plugin if isinstance(plugin, AuthorizationPlugin) else None


async def check_resource(tool_context: ToolContext, kind: ResourceType | str, value: Any) -> None:
    """Raises `ResourceDenied` unless this run may touch `value`.

    Outside a Yuxi runtime there is nothing to check against, so it refuses: a tool
    that guards a resource must not become open by being attached to a plain agent.
    """
    resource = ResourceType(kind)
    plugin = runtime_plugin(tool_context)
    if plugin is None:
        raise ResourceDenied("(direct)", resource, "no Yuxi runtime in this invocation")
    reason = await plugin.guard.allows(resource, value)
    if reason is not None:
        raise ResourceDenied("(direct)", resource, reason)
