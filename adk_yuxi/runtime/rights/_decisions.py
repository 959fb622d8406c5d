"""Each access decision as a value with the rule that made it: one function per kind.

The runtime decides on these and reports their rule with every refusal (the refusal
hook's `detail` starts with it); `yuxi access explain` prints the same values for a
user and an agent, so what it says is what a run would do. Whether a tool is allowed
is `compute_visibility`'s answer, a knowledge base the guard's, a skill the skill
loader's check: the rule only says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ...access import Principal, ResourceKind
from ._context import RuntimeContext
from ._visibility import SKILL_LOADER_TOOLS, compute_visibility

__all__ = [
    "Decision",
    "agent_decision",
    "kb_decision",
    "skill_decision",
    "tool_decision",
    "unknown_user",
]


@dataclass(frozen=True)
class Decision:
    """`allowed` or not, by `rule` (a stable snake_case name) with a sentence for people
    (`detail`: never shown to the model)."""

    kind: str
    """"user", "agent", "tool", "knowledge_base" or "skill"."""
    name: str
    allowed: bool
    rule: str
    detail: str

    @property
    def reason(self) -> str:
        """The rule and its sentence, as refusals log it."""
        return f"{self.rule}: {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def unknown_user(user_id: str) -> Decision:
    """A user the principal source does not know: the run is refused."""
    return Decision("user", user_id, False, "user_unknown", "this user is not known")


def agent_decision(
    principal: Principal, user_id: str, agent: str | None, *, check_agent: bool = True
) -> Decision:
    """Whether `principal` may run `agent` as `user_id` (`LiveRights` decides on this).
    `check_agent=False` leaves out the agent's share (a fixed principal need not list
    it); `agent=None`: no agent share to check."""
    name = agent or ""
    if principal.user_id != user_id:
        detail = "the principal source answered for another user"
        return Decision("user", user_id, False, "principal_mismatch", detail)
    if not principal.user.active:
        detail = "this user account is disabled"
        return Decision("user", user_id, False, "user_disabled", detail)
    if check_agent and agent is not None and not principal.may_use(ResourceKind.AGENT, agent):
        detail = "this user may not use this agent (unknown, disabled or not shared)"
        return Decision("agent", name, False, "agent_not_usable", detail)
    detail = "the agent is shared with this user" if check_agent and agent else "no share to check"
    return Decision("agent", name, True, "agent_usable", detail)


def _omitted(context: RuntimeContext, kind: str, name: str) -> list[str]:
    return [why for k, n, why in context.omitted if k == kind and n == name]


def _skill_opening(context: RuntimeContext, tool: str, skills: Iterable[str]) -> str | None:
    return next((s for s in skills if tool in context.skill(s).tool_dependencies), None)


def tool_decision(context: RuntimeContext, name: str, activated: Iterable[str] = ()) -> Decision:
    """Whether a call of the local tool `name` may run with `activated` skills loaded:
    `compute_visibility(context, activated).shows_tool(name)`, and the rule why."""
    visibility = compute_visibility(context, activated)

    def decided(allowed: bool, rule: str, detail: str) -> Decision:
        return Decision("tool", name, allowed, rule, detail)

    if visibility.shows_tool(name):
        if name in context.base_tools:
            return decided(True, "base_tool", "a base tool: in every run of every agent")
        if name in SKILL_LOADER_TOOLS:
            return decided(True, "skill_loader", "the skill loader of an agent with skills")
        if name in context.tools:
            return decided(True, "agent_tool", "one of this agent's tools, usable by this user")
        skill = _skill_opening(context, name, visibility.active_skills)
        return decided(True, "opened_by_skill", f"opened by the active skill {skill!r}")
    unavailable = [why for why in _omitted(context, "tool", name) if why.startswith("unavailable")]
    if unavailable:
        detail = f"not configured on this server ({unavailable[0]})"
        return decided(False, "tool_unavailable", detail)
    registry = context.registry
    if name in SKILL_LOADER_TOOLS:
        return decided(False, "tool_not_in_agent", "the agent offers this user no skills")
    if name not in registry:
        detail = "no local tool of this name is registered (nor shown from an MCP server)"
        return decided(False, "tool_unknown", detail)
    skill = _skill_opening(context, name, context.skills)
    if skill is not None:
        detail = f"opens once the skill {skill!r} is loaded (load_skill)"
        return decided(False, "tool_behind_skill", detail)
    if _omitted(context, "tool", name) or context.config.tools is None:
        if registry.metadata(name).admin_only:
            return decided(False, "tool_admin_only", "an admin-only tool; this user is no admin")
        if context.config.tools is not None:
            return decided(False, "tool_not_available_to_user", "not available to this user")
    if context.config.tools is not None and name not in context.config.tools:
        return decided(False, "tool_not_in_agent", "the agent's config does not list it")
    detail = "reachable only through a skill this user may not load"
    return decided(False, "tool_not_in_agent", detail)


def kb_decision(context: RuntimeContext, kb: str) -> Decision:
    """Whether a tool argument may name the knowledge base `kb` (the resource guard
    decides on this)."""
    if kb in context.knowledge_bases:
        detail = "readable by this user and within the agent's knowledge bases"
        return Decision("knowledge_base", kb, True, "kb_readable", detail)
    if context.config.knowledges is not None and kb not in context.config.knowledges:
        detail = "the agent's config does not list it"
        return Decision("knowledge_base", kb, False, "kb_not_in_agent", detail)
    detail = "this user may not read it (unknown, disabled or not shared)"
    return Decision("knowledge_base", kb, False, "kb_not_readable", detail)


def skill_decision(context: RuntimeContext, skill: str) -> Decision:
    """Whether this user may load `skill` in this agent (the skill loader's check)."""
    if skill in context.skill_specs:
        if skill in context.preloaded_skills:
            return Decision("skill", skill, True, "skill_preloaded", "loaded at every run start")
        return Decision("skill", skill, True, "skill_usable", "this user may load it")
    for why in _omitted(context, "skill", skill):
        if why.startswith("dependenc"):
            return Decision("skill", skill, False, "skill_dependency_out_of_reach", why)
        return Decision("skill", skill, False, "skill_not_available_to_user", why)
    detail = "this agent does not offer it (not in its skills, or not shared with this user)"
    return Decision("skill", skill, False, "skill_not_offered", detail)
