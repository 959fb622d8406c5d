"""Checks `build_app` makes before anything runs: names that would clash in a run, and
retrieval settings that would be ignored, are refused with the agent and both names."""

from __future__ import annotations

from collections.abc import Iterable

from google.adk.tools.set_model_response_tool import SetModelResponseTool

from ...mcp import McpServerRegistry
from ...tools import ToolRegistry
from ...tools.base import BASE_TOOLS, base_tool
from ..config._catalog import AgentConfigError
from ..config._tree import AgentTree
from ..rights._handoff import TRANSFER_TOOL
from ..rights._visibility import SKILL_LOADER_TOOLS

__all__ = ["check_base_names", "check_retrieval", "check_tool_names"]


def _reachable(
    registry: ToolRegistry, ids: Iterable[str] | None, base: Iterable[str]
) -> dict[str, str]:
    """Tool name -> where it comes from, for the tools an agent may show."""
    chosen = registry.ids() if ids is None else [i for i in ids if i in registry]
    base = list(base)
    chosen = [i for i in chosen if i not in base]  # shown as the base tools they are
    shown = {registry.get(i).name: f"registered tool {i!r}" for i in chosen}
    return {**shown, **{i: f"base tool {i!r}" for i in base}}


def check_base_names(registry: ToolRegistry, agent: str, base: Iterable[str]) -> None:
    """A registered tool under the id of a base tool the app brings must be that base
    tool (what `register_base_tools` puts there): another would be silently shadowed.
    Under the name of a base tool the app does not bring, it is a tool like any other."""
    problems = [
        ("tools", f"a registered tool is named {i!r}, the name of a base tool of this app")
        for i in base
        if i in registry and registry.get(i) is not base_tool(i)
    ]
    if problems:
        raise AgentConfigError(f"agent {agent!r}", problems)


def check_tool_names(
    tree: AgentTree, registry: ToolRegistry, *, skills: bool, base: Iterable[str] = ()
) -> None:
    """Every name a model of the tree may be shown is one tool's: a registered tool, an
    agent tool, ADK's transfer tool and the skill loader never share one."""
    for name, config in tree.configs.items():
        shown = _reachable(registry, config.tools, base)
        framework = {TRANSFER_TOOL: "ADK's handoff tool"} if tree.handoff_targets(name) else {}
        if skills:
            framework.update(dict.fromkeys(SKILL_LOADER_TOOLS, "the skill loader"))
        framework.update({n: f"agent tool {n!r}" for n in config.agent_tools})
        problems = [
            (
                "agent_tools" if what.startswith("agent") else "tools",
                f"{where} and {what} are both named {tool!r}",
            )
            for tool, what in framework.items()
            if (where := shown.get(tool)) is not None
        ]
        if problems:
            raise AgentConfigError(f"agent {name!r}", problems)


def check_retrieval(
    tree: AgentTree, registry: ToolRegistry, mcp_servers: McpServerRegistry | None
) -> None:
    """Retrieval is the root's setting (one per run); its pinned names must name tools.
    Names an MCP server may serve are known only once it connects, so with a server
    registered an unknown pinned name is left to it."""
    for name, config in tree.configs.items():
        if config.tool_retrieval is not None and name != tree.root:
            problem = f"only the root agent ({tree.root!r}) of the tree sets tool retrieval"
            raise AgentConfigError(f"agent {name!r}", [("tool_retrieval", problem)])
    retrieval = tree.config(tree.root).tool_retrieval
    if retrieval is None or (mcp_servers is not None and mcp_servers.enabled()):
        return
    known = {registry.get(i).name for i in registry.ids()}
    known |= {*BASE_TOOLS, *SKILL_LOADER_TOOLS, SetModelResponseTool.NAME, TRANSFER_TOOL}
    known |= tree.agent_tool_targets()
    problems = [
        ("tool_retrieval.pinned", f"no tool named {pin!r} can be shown to this agent")
        for pin in retrieval.pinned
        if pin not in known
    ]
    if problems:
        raise AgentConfigError(f"agent {tree.root!r}", problems)
