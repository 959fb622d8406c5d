"""The base tools: on every agent, never gated by tool selection, skills or activation.

Importing this package registers them in the default registry (the runtime imports it,
so every agent built on the default registry carries them); `register_base_tools` adds
them to another registry. The first three act through the App's
`adk_yuxi.ledger.LedgerPlugin` (waiting points, marks, the run's lease, the user's
workspace); without it they answer ``not_configured`` and change nothing.
`read_tool_result` reads the session's stored tool results through the artifact service.
"""

from .._registry import ToolRegistry, default_registry
from . import ask_user_question, mark_for_improvement, present_artifacts, read_tool_result

BASE_TOOLS: tuple[str, ...] = (
    "ask_user_question",
    "mark_for_improvement",
    "present_artifacts",
    "read_tool_result",
)


def register_base_tools(registry: ToolRegistry) -> None:
    """Registers the shared base tool instances in `registry` (those it lacks)."""
    if registry is default_registry:
        return
    for tool_id in BASE_TOOLS:
        if tool_id not in registry:
            registry.register(default_registry.get(tool_id), default_registry.metadata(tool_id))


__all__ = [
    "BASE_TOOLS",
    "ask_user_question",
    "mark_for_improvement",
    "present_artifacts",
    "read_tool_result",
    "register_base_tools",
]
