"""What the model may see, and therefore call, right now: one function for both.

The tool declarations sent to the model and the authorization plugin's check at every
call both come from `compute_visibility`, so what the model is shown and what may run
cannot disagree. It is a pure function of the runtime context and the skills activated
in session state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ._context import RuntimeContext

__all__ = ["SKILL_LOADER_TOOLS", "Visibility", "compute_visibility", "tools_behind_skills"]

SKILL_LOADER_TOOLS: frozenset[str] = frozenset(
    {"list_skills", "load_skill", "load_skill_resource", "unload_skill"}
)
"""The tools ADK's `SkillToolset` may offer; visible whenever the run has skills. A
name here that the toolset does not actually offer resolves to nothing and is refused."""


@dataclass(frozen=True)
class Visibility:
    tools: frozenset[str]
    mcp_servers: frozenset[str]
    active_skills: tuple[str, ...]

    def shows_tool(self, name: str) -> bool:
        return name in self.tools

    def shows_server(self, server: str) -> bool:
        return server in self.mcp_servers


def compute_visibility(context: RuntimeContext, activated: Iterable[str]) -> Visibility:
    """Preloaded and activated skills (with their skill dependencies) open their local
    tools and MCP servers; names in state that this run does not offer are ignored, so a
    session reused by another user or config cannot smuggle a skill in."""
    allowed = context.skill_specs
    roots = [*context.preloaded_skills, *(name for name in activated if name in allowed)]
    active: dict[str, None] = {}
    stack = list(reversed(roots))
    while stack:
        name = stack.pop()
        if name in active or name not in allowed:
            continue
        active[name] = None
        stack.extend(reversed(allowed[name].skill_dependencies))
    tools = set(context.base_tools)
    tools.update(context.tools)
    servers = set(context.mcp_servers)
    for name in active:
        spec = allowed[name]
        tools.update(spec.tool_dependencies)
        servers.update(spec.mcp_dependencies)
    if context.skills:
        tools.update(SKILL_LOADER_TOOLS)
    return Visibility(
        tools=frozenset(tools), mcp_servers=frozenset(servers), active_skills=tuple(active)
    )


def tools_behind_skills(context: RuntimeContext, visibility: Visibility) -> dict[str, list[str]]:
    """For each usable skill that is not active, the hidden tools loading it would open;
    the model is told, so it loads the right skill instead of guessing."""
    behind: dict[str, list[str]] = {}
    for name in context.skills:
        if name in visibility.active_skills:
            continue
        spec = context.skill(name)
        hidden = [t for t in spec.tool_dependencies if not visibility.shows_tool(t)]
        hidden += [
            f"the tools of MCP server {s!r}"
            for s in spec.mcp_dependencies
            if not visibility.shows_server(s)
        ]
        if hidden:
            behind[name] = hidden
    return behind
