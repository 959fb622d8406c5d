"""`AgentTree`: the agents reachable from a root, checked before anything is built.

Two kinds of edge: `sub_agents` (the model may transfer the conversation; ADK's agent
tree) and `agent_tools` (the model calls the agent as a tool; ADK runs it in a nested
Runner with its own tree). The checks are the ones ADK would otherwise make late or
not at all: every name known, no cycle, an agent in at most one place as a sub-agent
and never both a sub-agent and a tool (ADK gives an agent one parent, and a tool's
agent is the root of its nested run), a description on every agent a model chooses by
name, and a handoff whitelist ADK can honour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ...access import Principal, ResourceKind
from ...errors import YuxiError
from ._catalog import AgentCatalog, UnknownAgentError
from ._config import AgentConfig

__all__ = ["AgentTree", "AgentTreeError"]


class AgentTreeError(YuxiError, ValueError):
    """The agents named from a root do not form a tree that can be built."""


@dataclass(frozen=True)
class AgentTree:
    root: str
    configs: Mapping[str, AgentConfig]
    """Every agent reachable from the root, in build order (an agent after the agents
    it names)."""
    parents: Mapping[str, str]
    """Sub-agent -> the agent that transfers to it (ADK's parent)."""

    @classmethod
    def build(cls, catalog: AgentCatalog, root: str) -> AgentTree:
        """Raises `UnknownAgentError` (naming every unknown agent and who names it) or
        `AgentTreeError`."""
        configs = _reachable(catalog, root)
        parents: dict[str, str] = {}
        tools: dict[str, str] = {}
        for config in configs.values():
            for name in config.sub_agents:
                if name in parents:
                    raise AgentTreeError(
                        f"agent {name!r} is a sub-agent of both {parents[name]!r} and"
                        f" {config.name!r}; an agent has one parent (use agent_tools to share"
                        " an agent)"
                    )
                parents[name] = config.name
            for name in config.agent_tools:
                tools.setdefault(name, config.name)
        both = sorted(set(parents) & set(tools))
        if both:
            raise AgentTreeError(
                f"agent {both[0]!r} is a sub-agent of {parents[both[0]]!r} and an agent tool"
                f" of {tools[both[0]]!r}; an agent can be one or the other"
            )
        order = _build_order(configs, root)
        tree = cls(
            root=root,
            configs=MappingProxyType({n: configs[n] for n in order}),
            parents=MappingProxyType(parents),
        )
        tree._check_descriptions(tools)
        for name in order:
            tree._check_whitelist(name)
        return tree

    @classmethod
    def forest(cls, catalog: AgentCatalog) -> list[AgentTree]:
        """The catalog's trees: one per root agent (an agent no other agent of the
        catalog names as a sub-agent or an agent tool), in catalog order. Each is checked
        as `build` checks it; an agent that no root reaches (agents naming each other in
        a cycle) raises `AgentTreeError`, so no config of the catalog is left out unsaid."""
        named = {n for c in catalog for n in (*c.sub_agents, *c.agent_tools)}
        trees = [cls.build(catalog, name) for name in catalog.names() if name not in named]
        reached = {n for tree in trees for n in tree.configs}
        left = [n for n in catalog.names() if n not in reached]
        for name in left:
            cls.build(catalog, name)  # one of them is on the cycle: raises naming it
        if left:
            raise AgentTreeError(f"agent(s) {left} are reached from no root agent")
        return trees

    # -- questions the runtime asks -----------------------------------------------------

    def config(self, name: str) -> AgentConfig:
        return self.configs[name]

    def parent(self, name: str) -> str | None:
        return self.parents.get(name)

    def peers(self, name: str) -> tuple[str, ...]:
        parent = self.parents.get(name)
        if parent is None:
            return ()
        return tuple(n for n in self.configs[parent].sub_agents if n != name)

    def handoff_targets(self, name: str) -> tuple[str, ...]:
        """The whitelist of `name`: where its model may transfer the conversation, before
        the user's rights are applied."""
        return self.configs[name].handoff_targets(self.parents.get(name))

    def reachable_by(self, principal: Principal) -> tuple[list[str], list[str]]:
        """The agents `principal` reaches from the root (every one it may read, through
        agents it may read) and those left out; nothing when it may not read the root."""
        if not principal.may_use(ResourceKind.AGENT, self.root):
            return [], [self.root]
        kept: dict[str, None] = {}
        omitted: dict[str, None] = {}
        stack = [self.root]
        while stack:
            name = stack.pop()
            if name in kept:
                continue
            kept[name] = None
            config = self.configs[name]
            for child in reversed((*config.sub_agents, *config.agent_tools)):
                if principal.may_use(ResourceKind.AGENT, child):
                    stack.append(child)
                else:
                    omitted[child] = None
        order = list(self.configs)
        return sorted(kept, key=order.index), sorted(omitted, key=order.index)

    def agent_tool_targets(self) -> frozenset[str]:
        return frozenset(n for c in self.configs.values() for n in c.agent_tools)

    # -- checks -------------------------------------------------------------------------

    def _check_descriptions(self, tools: Mapping[str, str]) -> None:
        chosen = {*self.parents, *tools}
        missing = sorted(n for n in chosen if not self.configs[n].description.strip())
        if missing:
            raise AgentTreeError(
                f"agent(s) {missing} need a description: a model chooses transfer targets"
                " and agent tools by it"
            )

    def _check_whitelist(self, name: str) -> None:
        config = self.configs[name]
        if config.can_handoff_to is None:
            return
        parent = self.parents.get(name)
        possible = {*config.sub_agents, *self.peers(name), *([parent] if parent else [])}
        refused = [n for n in config.can_handoff_to if n not in possible]
        if refused:
            raise AgentTreeError(
                f"agent {name!r}: can_handoff_to names {refused}, which it cannot transfer"
                f" to; possible targets are its sub-agents, its parent and its peers:"
                f" {sorted(possible)}"
            )


def _reachable(catalog: AgentCatalog, root: str) -> dict[str, AgentConfig]:
    if root not in catalog:
        raise UnknownAgentError([root], catalog.names())
    found: dict[str, AgentConfig] = {}
    unknown: dict[str, list[str]] = {}
    stack = [root]
    while stack:
        name = stack.pop()
        if name in found:
            continue
        config = found[name] = catalog.get(name)
        for child in (*config.sub_agents, *config.agent_tools):
            if child in catalog:
                stack.append(child)
            else:
                unknown.setdefault(child, []).append(name)
    if unknown:
        raise UnknownAgentError(unknown, catalog.names(), unknown)
    return found


def _build_order(configs: Mapping[str, AgentConfig], root: str) -> list[str]:
    """Children before parents; raises `AgentTreeError` naming the first cycle found."""
    order: list[str] = []
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        if name in path:
            cycle = [*path[path.index(name) :], name]
            raise AgentTreeError(f"agents form a cycle: {' -> '.join(cycle)}")
        path.append(name)
        config = configs[name]
        for child in (*config.sub_agents, *config.agent_tools):
            visit(child)
        path.pop()
        done.add(name)
        order.append(name)

    visit(root)
    return order
