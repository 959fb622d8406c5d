"""`explain_access`: the decisions a run of an agent would make for a user, in order.

It walks the path of a run on a host with an access repository: the principal the
repository loads, `LiveRights.decide` for the run (the user and the agent's share), the
tree's runtimes (`TreeRuntimeFactory`, as `build_app` assembles them), then the
decision of one tool, knowledge base or skill on that agent's runtime. Every step is
the function the runtime calls, so the answer is what a run would do now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...access import AccessRepository, NotFoundError
from ..rights._decisions import (
    Decision,
    kb_decision,
    skill_decision,
    tool_decision,
    unknown_user,
)
from ..rights._rights import LiveRights
from ..rights._tree_runtime import TreeRuntimeFactory

__all__ = ["Explanation", "explain_access"]


@dataclass(frozen=True)
class Explanation:
    user_id: str
    agent: str
    steps: tuple[Decision, ...]
    """The run's decision first, then the resource's; the first refusal ends them."""

    @property
    def decision(self) -> Decision:
        """The deciding step: the first refusal, else the last step."""
        return next((s for s in self.steps if not s.allowed), self.steps[-1])

    @property
    def allowed(self) -> bool:
        return all(s.allowed for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        decision = self.decision
        return {
            "user_id": self.user_id,
            "agent": self.agent,
            "allowed": self.allowed,
            "kind": decision.kind,
            "name": decision.name,
            "rule": decision.rule,
            "detail": decision.detail,
            "steps": [s.to_dict() for s in self.steps],
        }


async def explain_access(
    repository: AccessRepository,
    factory: TreeRuntimeFactory,
    user_id: str,
    agent: str,
    *,
    tool: str | None = None,
    kb: str | None = None,
    skill: str | None = None,
    activated: Iterable[str] = (),
) -> Explanation:
    """What a run of `agent` (an agent of `factory`'s tree) would decide for `user_id`:
    on the run itself, and on at most one of `tool` (with the `activated` skills
    loaded), `kb`, `skill`."""
    tree = factory.tree
    try:
        principal = await repository.load_principal(user_id)
    except NotFoundError:
        return Explanation(user_id, agent, (unknown_user(user_id),))
    rights = LiveRights(repository.current_principal, agent=tree.root)
    run = rights.decide(principal, user_id)
    if not run.allowed:
        return Explanation(user_id, agent, (run,))
    steps = [run]
    runtimes = factory(principal)
    try:
        runtime = None if runtimes.denied is not None else runtimes.agent(agent)
        if runtime is None:
            why = runtimes.denied or "not reachable by this user in its tree"
            refused = Decision("agent", agent, False, "agent_not_available", why)
            return Explanation(user_id, agent, (*steps, refused))
        if tool is not None:
            steps.append(tool_decision(runtime.context, tool, activated))
        if kb is not None:
            steps.append(kb_decision(runtime.context, kb))
        if skill is not None:
            steps.append(skill_decision(runtime.context, skill))
        return Explanation(user_id, agent, tuple(steps))
    finally:
        await runtimes.close()
