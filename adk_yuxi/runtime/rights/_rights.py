"""Rights as of now: the principal each model call and tool call is decided on.

`LiveRights` asks a principal source for the current principal of a user at every
call. With an access repository it asks `AccessRepository.current_principal`, which
re-reads only when the database's change marker moved, and the agent itself must stay
readable; without one it asks the app's own source (a fixed principal is a constant
source, so nothing changes mid-run).
"""

from __future__ import annotations

from ...access import Principal
from ._decisions import Decision, agent_decision
from ._principals import PrincipalSource

__all__ = ["LiveRights"]


class LiveRights:
    def __init__(self, source: PrincipalSource, *, agent: str | None) -> None:
        self._source = source
        self._agent = agent

    async def current(self, user_id: str) -> Principal:
        """Raises `NotFoundError` for a user who no longer exists, and whatever the
        source raises when it cannot answer (the caller fails closed)."""
        return await self._source(user_id)

    def decide(self, principal: Principal, user_id: str, *, agent: bool = True) -> Decision:
        """Whether `principal` may run the agent as `user_id`, with its rule.
        `agent=False` leaves out the agent's own share: a principal from another source
        than these rights (a fixed one built by the host) need not list the agent."""
        return agent_decision(principal, user_id, self._agent, check_agent=agent)

    def denial(self, principal: Principal, user_id: str, *, agent: bool = True) -> str | None:
        """Why `principal` may not run the agent as `user_id` (its rule first, for
        logs), or None."""
        decision = self.decide(principal, user_id, agent=agent)
        return None if decision.allowed else decision.reason
