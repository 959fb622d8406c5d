"""`build_app`: the one way an agent's runs become an ADK `App`, for a Runner, `adk run`,
`adk web` and the host API alike.

An app is a few values: the agent config, the access, a `Toolbox` and a list of
capabilities. Every agent carries one `YuxiToolset` and the app one
`AuthorizationPlugin`, which binds each run to the runtimes of its principal. A fixed
`Principal` is a constant principal source (`FixedPrincipal`); its runtimes are
assembled here, so a broken config fails at build time. A lone agent is a tree of one;
an agent with `sub_agents` or `agent_tools` (or named in a catalog) is built with its
whole tree: sub-agents as ADK sub-agents (ADK's transfer flags set from the handoff
whitelist), agent tools as ADK `AgentTool`s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from pydantic import BaseModel

from ..._adk import mark_a2a_agent_unavailable
from ...ledger import LedgerPlugin
from ...mcp import McpResultPlugin, McpServerRegistry
from ...models import resolve_model
from ...observability._labels import know_tools
from ...skills import KNOWLEDGE_TOOL_NAMES, SkillCatalog
from ...tools import ToolRegistry, default_registry
from ...tools.base import BASE_TOOLS, base_tool
from ..authorization._plugin import AuthorizationPlugin
from ..authorization._refusals import RefusalHook
from ..authorization._toolset import YuxiToolset
from ..config._catalog import AgentCatalog
from ..config._config import AgentConfig, AgentConfigError
from ..config._tree import AgentTree
from ..rights._principals import Access, AccessLike
from ..rights._rights import LiveRights
from ..rights._tree_runtime import TreeRuntimeFactory
from ._build_checks import check_base_names, check_retrieval, check_tool_names
from ._capabilities import DEFAULT_CAPABILITIES, Assembly, Capability
from ._guards import guard_plugins
from ._known_tools import app_tool_names
from ._run_config import RunDefaultsPlugin
from ._toolbox import Toolbox

__all__ = ["ModelChoice", "build_app", "check_tree"]

ModelChoice = BaseLlm | str | None | Mapping[str, BaseLlm | str]
"""One model for every agent, or one per agent name (agents not named use their config)."""


def _model(model: BaseLlm | str | None, name: str | None) -> BaseLlm:
    if model is None or isinstance(model, str):
        return resolve_model(model if model is not None else name)
    return model


def _tree(config: AgentConfig | str, catalog: AgentCatalog | None) -> AgentTree:
    """The tree to build. A config given with a catalog joins it, unless the catalog
    holds another config under that name."""
    if isinstance(config, str):
        if catalog is None:
            raise TypeError("build_app with an agent name needs catalog=")
        return AgentTree.build(catalog, config)
    if catalog is None:
        return AgentTree.build(AgentCatalog([config]), config.name)
    if config.name in catalog:
        if catalog.get(config.name) != config:
            problem = f"the catalog holds another config named {config.name!r}"
            raise AgentConfigError("code", [("name", problem)])
        return AgentTree.build(catalog, config.name)
    staged = AgentCatalog(catalog)
    staged.add(config)
    return AgentTree.build(staged, config.name)


def _check_names(
    tree: AgentTree,
    registry: ToolRegistry | None,
    skills: SkillCatalog | None,
    mcp_servers: McpServerRegistry | None,
) -> None:
    """Every tool, skill and MCP server a config names must exist: a misspelt name
    would otherwise be left out of every run without a word (as a name the user may not
    use is), so a typo in a deployed config would pass unnoticed."""
    tools = default_registry if registry is None else registry
    # A tool renamed after registration (or registered elsewhere) must not answer the
    # knowledge server's calls either.
    taken = sorted(KNOWLEDGE_TOOL_NAMES.intersection({t.name for t in tools.tools()}))
    if taken:
        raise AgentConfigError(
            f"agent {tree.root!r}",
            [
                (
                    "tools",
                    f"a local tool is named {taken[0]!r}, a name reserved for the knowledge"
                    " server's tools",
                )
            ],
        )
    for name, config in tree.configs.items():
        problems = [
            (field, f"no {what} named {item!r} is {where}")
            for field, what, names, known, where in (
                ("tools", "tool", config.tools, tools, "registered"),
                ("skills", "skill", config.skills, skills, "in the skill catalog"),
                ("preload_skills", "skill", config.preload_skills, skills, "in the skill catalog"),
                ("mcps", "MCP server", config.mcps, mcp_servers, "registered"),
            )
            for item in names or ()
            if known is None or item not in known
        ]
        if problems:
            raise AgentConfigError(f"agent {name!r}", problems)


def check_tree(
    tree: AgentTree,
    registry: ToolRegistry | None = None,
    skills: SkillCatalog | None = None,
    mcp_servers: McpServerRegistry | None = None,
    *,
    base: Iterable[str] = (),
) -> None:
    """What `build_app` refuses a tree for (names that exist, tool names that do not
    clash, retrieval settings); `yuxi access explain` checks the same before it decides.
    `base` are the base tools the app's capabilities bring."""
    _check_names(tree, registry, skills, mcp_servers)
    tools = default_registry if registry is None else registry
    check_base_names(tools, tree.root, base)
    has_skills = skills is not None and bool(skills.all())
    check_tool_names(tree, tools, skills=has_skills, base=base)
    check_retrieval(tree, tools, mcp_servers)


def _agent(
    tree: AgentTree,
    name: str,
    model: BaseLlm,
    toolset: YuxiToolset,
    built: dict[str, LlmAgent],
    output_schema: type[BaseModel] | None,
) -> LlmAgent:
    config = tree.config(name)
    whitelist = tree.handoff_targets(name)
    parent = tree.parent(name)
    extra: dict[str, Any] = {}
    if config.sub_agents:
        extra["sub_agents"] = [built[n] for n in config.sub_agents]
    if name == tree.root and output_schema is not None:
        extra["output_schema"] = output_schema
    return LlmAgent(
        name=name,
        model=model,
        description=config.description,
        instruction=config.instruction,
        tools=[toolset],
        disallow_transfer_to_parent=parent is None or parent not in whitelist,
        disallow_transfer_to_peers=not set(tree.peers(name)).intersection(whitelist),
        **extra,
    )


def _capabilities(given: Sequence[Capability | BasePlugin]) -> list[Capability | BasePlugin]:
    """The listed capabilities, with each default not replaced by one of its type."""
    listed = list(given)
    kinds = {type(c) for c in listed}
    for default in DEFAULT_CAPABILITIES:
        if type(default) not in kinds:
            listed.append(default)
    seen: set[type] = set()
    for capability in listed:
        if isinstance(capability, LedgerPlugin):
            # It would record runs while the model lacks the tools that act through it.
            raise TypeError("build_app: pass RunRecords(store, ...), not a LedgerPlugin")
        if isinstance(capability, Capability) and type(capability) in seen:
            raise TypeError(f"build_app: more than one {type(capability).__name__} capability")
        seen.add(type(capability))
    return listed


def _base_tools(capabilities: Sequence[Capability | BasePlugin]) -> dict[str, BaseTool]:
    names = [n for c in capabilities if isinstance(c, Capability) for n in c.base_tools]
    return {name: base_tool(name) for name in BASE_TOOLS if name in names}


def build_app(
    agent: AgentConfig | str,
    access: AccessLike,
    *,
    toolbox: Toolbox | None = None,
    capabilities: Sequence[Capability | BasePlugin] = (),
    model: ModelChoice = None,
    catalog: AgentCatalog | None = None,
    name: str | None = None,
    output_schema: type[BaseModel] | None = None,
    on_refusal: RefusalHook | None = None,
    cache_size: int = 256,
) -> App:
    """The one way an app is assembled: `agent` (a config, or a name in `catalog`) for
    the users `access` admits, with the tools of `toolbox` and the `capabilities` listed
    (`RunRecords`, a plain ADK plugin, ...; `Offload` and `Compaction` are always on).

    `access` is an `Access`, an `AccessRepository` (principals and live rights from the
    access database; the agent itself must be shared with the user), one `Principal`,
    or a `PrincipalSource` asked for the user of every run, so one App (and one Runner)
    serves many users, each with their own rights. Every model call and tool call is
    decided on the user's rights as of that call. `model` overrides the configs' models
    (tests pass a `ScriptedLlm`), for every agent or per agent name. `name` is the
    App's (default: the root agent's). `output_schema` (a pydantic model class, as
    ADK's `LlmAgent` takes it) makes the root agent answer in that shape. `on_refusal`
    sees every refused call and stopped run. `cache_size` bounds how many per-principal
    runtimes are kept.

    Plugins, in order: the authorization plugin (first, so it decides every call before
    another plugin can answer it), the MCP result plugin (one copy of an MCP result's
    structured content), the early capabilities (`RunRecords`' ledger), the model-facing
    guards (`adk_yuxi.guards`: repair of malformed calls always, per-step tool retrieval
    for a root config with `tool_retrieval`, the structured answer with
    `output_schema`), the other capabilities and plugins as listed, and the offload
    plugin last (it answers with a new result, which ends ADK's chain).

    Multi-agent apps: `agent` may name an agent of `catalog`, or be a config whose
    `sub_agents` / `agent_tools` name agents of it. The tree is checked first
    (`AgentTree`); each agent is then a share-scoped resource gated per user (the root
    too, in a tree of more than one agent), with its own runtime from the same principal.

    The configs are the deployer's: their `model` and `limits` bind every user, admin
    or not. A config a non-admin writes goes through `AgentConfig.from_user` first.
    """
    mark_a2a_agent_unavailable()  # ADK's failing optional import: once, not every node
    box = Toolbox() if toolbox is None else toolbox
    chosen = _capabilities(capabilities)
    base = _base_tools(chosen)
    tree = _tree(agent, catalog)
    check_tree(tree, box.registry, box.skills, box.mcp_servers, base=base)
    know_tools(app_tool_names(tree.configs, box.tools))
    factory = TreeRuntimeFactory.of(
        tree,
        registry=box.registry,
        skills=box.skills,
        mcp_servers=box.mcp_servers,
        workspace=box.workspace,
        file_owner=box.file_owner,
        settings=box.settings,
        base_tools=base,
    )
    access = Access.of(access)
    repository = access.repository
    if repository is not None:
        rights = LiveRights(repository.current_principal, agent=tree.root)
    else:
        rights = LiveRights(access.source, agent=None)
    plugin = AuthorizationPlugin(
        factory,
        access.source,
        rights=rights,
        # The repository's own loader as the source already reads rights as of now.
        separate_rights=repository is not None and access.source != repository.load_principal,
        cache_size=cache_size,
        on_refusal=on_refusal,
    )
    if access.fixed is not None:
        plugin.cache.get(access.fixed)  # assembled now, so a broken config fails at build
    toolset = YuxiToolset(plugin)
    agents: dict[str, LlmAgent] = {}
    agent_tools: dict[str, AgentTool] = {}
    for agent_name, agent_config in tree.configs.items():  # an agent after those it names
        picked = model.get(agent_name) if isinstance(model, Mapping) else model
        resolved = _model(picked, agent_config.model)
        built = agents[agent_name] = _agent(
            tree, agent_name, resolved, toolset, agents, output_schema
        )
        if agent_name in tree.agent_tool_targets():
            agent_tools[agent_name] = AgentTool(built)
    plugin.agents = agents
    plugin.agent_tools = agent_tools
    guards = guard_plugins(
        tree.config(tree.root),
        plugin,
        registry=box.registry,
        retriever=box.retriever,
        output_schema=output_schema,
    )
    root_model = agents[tree.root].model
    assert isinstance(root_model, BaseLlm)  # set from `_model` above
    assembly = Assembly(
        authorization=plugin,
        repository=repository,
        workspace=box.workspace,
        policy=tree.config(tree.root).context,
        root_model=root_model,
    )
    compaction = None
    for capability in chosen:
        if isinstance(capability, Capability):
            compaction = compaction or capability.compaction(assembly)
    assembly = replace(assembly, compaction=compaction)
    staged: dict[str, list[BasePlugin]] = {"first": [], "early": [], "late": [], "last": []}
    for capability in chosen:
        if isinstance(capability, BasePlugin):
            staged["late"].append(capability)
        else:
            staged[capability.stage].extend(capability.plugins(assembly))
    return App(
        name=name or tree.root,
        root_agent=agents[tree.root],
        plugins=[
            plugin,
            *staged["first"],
            RunDefaultsPlugin(),
            McpResultPlugin(),
            *staged["early"],
            *guards,
            *staged["late"],
            *staged["last"],
        ],
        events_compaction_config=compaction,
    )
