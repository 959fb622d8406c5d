"""`TreeRuntime`: one principal's runtimes for the agents of a tree it reaches.

Every agent is a share-scoped resource. An agent the user cannot read is left out
(with everything reachable only through it) and listed in `omitted`; a root the user
cannot read makes the whole tree `denied`. Every agent kept gets its own `Runtime` from
the same principal and its own config, so a tool visible to one agent is not thereby
visible to another. A lone agent is a tree of one whose root is not share-gated here
(as before trees existed: with a repository, `LiveRights` checks it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ...access import Principal
from ..config._config import AgentConfig
from ..config._tree import AgentTree
from ._context import RuntimeContext
from ._handoff import HandoffTarget
from ._runtime import Runtime, RuntimeFactory
from ._tools import DuplicateToolError

__all__ = ["TreeRuntime", "TreeRuntimeFactory"]


@dataclass(frozen=True, eq=False)
class TreeRuntime:
    tree: AgentTree
    agents: Mapping[str, Runtime]
    """The runtime of every agent this user reaches, by name."""
    omitted: tuple[tuple[str, str, str], ...] = ()
    denied: str | None = None
    """Why this user may not run the tree at all (the root is not readable)."""

    @property
    def root(self) -> Runtime:
        """The root's runtime; only for a tree that is not `denied`."""
        return self.agents[self.tree.root]

    @property
    def context(self) -> RuntimeContext:
        """The root's context: its config's limits govern the whole run."""
        return self.root.context

    def agent(self, name: str) -> Runtime | None:
        return self.agents.get(name)

    def checked_as(self, name: str) -> str:
        """The agent of the tree a call by agent `name` is decided as: itself, or the
        root for an agent the app did not build (a host composing ours into a workflow:
        its model calls count, its own tools are not ours)."""
        return name if name in self.tree.configs else self.tree.root

    def handoffs(self, agent: str) -> tuple[HandoffTarget, ...]:
        """Where `agent` may transfer for this user: its whitelist, reachable agents only."""
        return tuple(
            HandoffTarget(name, self.tree.config(name).description)
            for name in self.tree.handoff_targets(agent)
            if name in self.agents
        )

    def agent_tools(self, agent: str) -> tuple[str, ...]:
        return tuple(n for n in self.tree.config(agent).agent_tools if n in self.agents)

    async def close(self) -> None:
        await asyncio.gather(*(r.close() for r in self.agents.values()))


class TreeRuntimeFactory:
    """Assembles the `TreeRuntime` of a principal: one `RuntimeFactory` per agent."""

    def __init__(self, tree: AgentTree, factories: Mapping[str, RuntimeFactory]) -> None:
        self.tree = tree
        self.factories = factories

    @classmethod
    def of(cls, tree: AgentTree, **options: Any) -> TreeRuntimeFactory:
        """One `RuntimeFactory(config, **options)` per agent of `tree`: how `build_app`
        assembles, and `yuxi access explain` after it."""
        return cls(tree, {name: RuntimeFactory(c, **options) for name, c in tree.configs.items()})

    @property
    def config(self) -> AgentConfig:
        return self.tree.config(self.tree.root)

    def __call__(self, principal: Principal) -> TreeRuntime:
        tree = self.tree
        kept: list[str]
        left_out: list[str]
        if len(tree.configs) == 1:
            kept, left_out = [tree.root], []
        else:
            kept, left_out = tree.reachable_by(principal)
        omitted = tuple(("agent", name, "not available to this user") for name in left_out)
        if not kept:
            return TreeRuntime(tree, MappingProxyType({}), omitted, "this agent is not available")
        agents: dict[str, Runtime] = {}
        for name in kept:
            runtime = agents[name] = self.factories[name](principal)
            clash = sorted(set(tree.config(name).agent_tools).intersection(runtime.tools.local))
            if clash:
                raise DuplicateToolError(clash[0], [f"a tool of {name!r}", "an agent tool"])
        return TreeRuntime(tree, MappingProxyType(agents), omitted)
