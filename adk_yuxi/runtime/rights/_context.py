"""`prepare_runtime_context`: what one user may use in one agent, decided once, up front.

A pure function of the principal, the config and the registries, so it is cheap to test
and to benchmark, and the answer cannot drift during assembly. Everything the user may
not use is dropped silently from the result (the model never learns it exists) and
listed in `omitted` for operators.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from google.adk.tools.base_tool import BaseTool

from ...access import Principal, ResourceKind
from ...mcp import McpServerRegistry, Unnarrowed
from ...skills import SkillCatalog, SkillSpec
from ...tools import ToolRegistry, ToolSettings, ToolUnavailable, default_registry, log_unavailable
from ...tools.base import BASE_TOOLS, base_tool
from ..config._config import AgentConfig

__all__ = ["RuntimeContext", "prepare_runtime_context"]


@dataclass(frozen=True)
class RuntimeContext:
    user_id: str
    agent_id: str
    config: AgentConfig
    tools: tuple[str, ...]
    base_tools: tuple[str, ...]
    knowledge_bases: tuple[str, ...]
    mcp_servers: tuple[str, ...]
    skills: tuple[str, ...]
    preloaded_skills: tuple[str, ...]
    skill_specs: Mapping[str, SkillSpec]
    omitted: tuple[tuple[str, str, str], ...] = ()
    registry: ToolRegistry = field(default=default_registry, compare=False, repr=False)
    mcp_registry: McpServerRegistry = field(
        default_factory=McpServerRegistry, compare=False, repr=False
    )
    bound_tools: Mapping[str, BaseTool] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    """The instances bound for this run's settings, for tools that need configuration."""

    def skill(self, name: str) -> SkillSpec:
        return self.skill_specs[name]

    def tool(self, tool_id: str) -> BaseTool:
        """The instance this run executes for `tool_id`."""
        bound = self.bound_tools.get(tool_id)
        return bound if bound is not None else self.registry.get(tool_id)


def _shared_base(registry: ToolRegistry, tool_id: str) -> bool:
    """The shared base tool instance (`register_base_tools`): only ever a base tool, shown
    when a capability brings it, never as a local tool."""
    return tool_id in BASE_TOOLS and registry.get(tool_id) is base_tool(tool_id)


def _intersect(
    requested: Iterable[str] | None, usable: Iterable[str], kind: str, omitted: list
) -> tuple[str, ...]:
    allowed = list(dict.fromkeys(usable))
    if requested is None:
        return tuple(allowed)
    allowed_set = set(allowed)
    kept = []
    for name in requested:
        if name in allowed_set:
            kept.append(name)
        else:
            omitted.append((kind, name, "not available to this user"))
    return tuple(kept)


def _may_use_tool(principal: Principal, registry: ToolRegistry, tool_id: str) -> bool:
    """Tools are not share-scoped resources; an admin-only tool says so in its metadata."""
    if not principal.user.active:
        return False
    if registry.metadata(tool_id).admin_only:
        return principal.is_admin
    return True


def _bind_configurable(
    registry: ToolRegistry,
    tool_ids: list[str],
    settings: ToolSettings,
    omitted: list,
    *,
    agent: str,
    requested: set[str],
) -> tuple[list[str], dict[str, BaseTool]]:
    """Keeps the tools usable with `settings`; an unavailable one is left out of the run
    (and so out of every skill that depends on it) with one availability record, a
    warning when the agent asked for it (in `tools` or through a skill it offers)."""
    kept: list[str] = []
    bound: dict[str, BaseTool] = {}
    for tool_id in tool_ids:
        if not registry.is_configurable(tool_id):
            kept.append(tool_id)
            continue
        try:
            bound[tool_id] = registry.bind(tool_id, settings)
        except ToolUnavailable as unavailable:
            log_unavailable(unavailable, requested=tool_id in requested, agent=agent)
            omitted.append(("tool", tool_id, f"unavailable: {unavailable.reason}"))
            continue
        kept.append(tool_id)
    return kept, bound


def _usable_skills(
    principal: Principal,
    config: AgentConfig,
    catalog: SkillCatalog,
    tools: set[str],
    mcps: set[str],
    omitted: list,
) -> tuple[str, ...]:
    """The requested skills and their dependency closure, minus every skill the user
    cannot use in full: a skill whose dependency (tool, MCP server or skill) is out of
    reach is dropped rather than offered half-working."""
    shared = principal.usable(ResourceKind.SKILL)
    usable = [
        s.name
        for s in catalog.all()
        if (s.agent is None and s.name in shared) or s.agent == config.name
    ]
    requested = _intersect(config.skills, usable, "skill", omitted)
    candidates = catalog.closure(requested)
    usable_set = set(usable)
    keep = {name for name in candidates if name in usable_set}
    for name in candidates:
        if name not in usable_set:
            omitted.append(("skill", name, "dependency not available to this user"))
    changed = True
    while changed:
        changed = False
        for name in list(keep):
            spec = catalog.get(name)
            assert spec is not None
            blocked = (
                [d for d in spec.skill_dependencies if d not in keep]
                + [t for t in spec.tool_dependencies if t not in tools]
                + [m for m in spec.mcp_dependencies if m not in mcps]
            )
            if blocked:
                keep.discard(name)
                omitted.append(("skill", name, f"dependencies out of reach: {blocked}"))
                changed = True
    return tuple(name for name in candidates if name in keep)


def _offered(config: AgentConfig, catalog: SkillCatalog) -> list[str]:
    """The skills this agent offers anyone (shared ones and its own), with their
    dependencies: what decides which tools are reachable only through a skill."""
    offered = [s.name for s in catalog.all() if s.agent is None or s.agent == config.name]
    requested = offered if config.skills is None else [n for n in config.skills if n in offered]
    return catalog.closure(requested)


def _claimed(config: AgentConfig, catalog: SkillCatalog) -> tuple[set[str], set[str]]:
    """Tools and MCP servers some offered skill depends on. With `tools` / `mcps` left
    as None they are reachable only through that skill, never declared up front, for
    every user alike (whether or not this user may load the skill)."""
    tools: set[str] = set()
    mcps: set[str] = set()
    for name in _offered(config, catalog):
        spec = catalog.get(name)
        if spec is not None:
            tools.update(spec.tool_dependencies)
            mcps.update(spec.mcp_dependencies)
    return tools, mcps


def prepare_runtime_context(
    principal: Principal,
    config: AgentConfig,
    *,
    registry: ToolRegistry | None = None,
    skills: SkillCatalog | None = None,
    mcp_servers: McpServerRegistry | None = None,
    settings: ToolSettings | None = None,
    base_tools: Mapping[str, BaseTool] | None = None,
) -> RuntimeContext:
    """`settings` configures the tools that need it (web search keys, say); without it
    they are bound from the environment alone. `base_tools` are in every run, never
    gated: the ones the app's capabilities bring (`adk_yuxi.tools.base`)."""
    registry = default_registry if registry is None else registry
    mcp_registry = McpServerRegistry() if mcp_servers is None else mcp_servers
    catalog = SkillCatalog(registry, mcp_registry) if skills is None else skills
    omitted: list[tuple[str, str, str]] = []

    claimed_tools, claimed_mcps = _claimed(config, catalog)
    usable_tools = [t for t in registry.ids() if _may_use_tool(principal, registry, t)]
    usable_tools, bound = _bind_configurable(
        registry,
        usable_tools,
        ToolSettings() if settings is None else settings,
        omitted,
        agent=config.name,
        requested=set(config.tools or ()) | claimed_tools,
    )
    bound.update(base_tools or {})
    base = tuple(base_tools or ())
    # A built-in (delegated) server needs no share of its own: what it serves is checked
    # per resource and per call, on the user's current rights.
    usable_mcps = [
        m
        for m in mcp_registry.enabled()
        if principal.may_use(ResourceKind.MCP_SERVER, m)
        or (mcp_registry.is_builtin(m) and principal.user.active)
    ]
    unclaimed_tools = [t for t in usable_tools if t not in claimed_tools]
    tools = _intersect(
        config.tools, usable_tools if config.tools is not None else unclaimed_tools, "tool", omitted
    )
    tools = tuple(t for t in tools if t not in base and not _shared_base(registry, t))
    kbs = _intersect(
        config.knowledges, sorted(principal.usable(ResourceKind.KNOWLEDGE_BASE)), "kb", omitted
    )
    if config.knowledges is None:
        kbs = Unnarrowed(kbs)
    unclaimed_mcps = [m for m in usable_mcps if m not in claimed_mcps]
    mcps = _intersect(
        config.mcps, usable_mcps if config.mcps is not None else unclaimed_mcps, "mcp", omitted
    )
    skill_names = _usable_skills(
        principal, config, catalog, set(usable_tools), set(usable_mcps), omitted
    )
    preloaded = _intersect(config.preload_skills, skill_names, "preload", omitted)
    return RuntimeContext(
        user_id=principal.user_id,
        agent_id=config.name,
        config=config,
        tools=tools,
        base_tools=base,
        knowledge_bases=kbs,
        mcp_servers=mcps,
        skills=skill_names,
        preloaded_skills=preloaded,
        skill_specs=MappingProxyType({n: s for n in skill_names if (s := catalog.get(n))}),
        omitted=tuple(omitted),
        registry=registry,
        mcp_registry=mcp_registry,
        bound_tools=MappingProxyType(bound),
    )
