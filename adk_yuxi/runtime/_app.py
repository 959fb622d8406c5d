"""`build_app`: an agent's runs as an ADK `App` for Runner, `adk run` and `adk web`.

One path for every app: every agent carries one `YuxiToolset` and the app one
`AuthorizationPlugin`, which binds each run to the runtimes of its principal. A fixed
`Principal` is a constant principal source (`FixedPrincipal`); its runtimes are
assembled here, so a broken config fails at build time. A lone agent is a tree of one;
an agent with `sub_agents` or `agent_tools` (or named in a catalog) is built with its
whole tree: sub-agents as ADK sub-agents (ADK's transfer flags set from the handoff
whitelist), agent tools as ADK `AgentTool`s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from pydantic import BaseModel

from .._adk import mark_a2a_agent_unavailable
from .._sql.store import SqlStore
from ..access import AccessRepository, Principal
from ..guards import ToolRetriever
from ..ledger import LedgerPlugin
from ..mcp import McpResultPlugin, McpServerRegistry
from ..models import resolve_model
from ..observability._labels import know_tools
from ..skills import KNOWLEDGE_TOOL_NAMES, SkillCatalog
from ..tools import ToolRegistry, ToolSettings, default_registry
from ._build_checks import check_retrieval, check_tool_names
from ._catalog import AgentCatalog, AgentConfigError
from ._compaction import compaction_config
from ._config import AgentConfig
from ._guards import guard_plugins
from ._known_tools import app_tool_names
from ._offload import ToolResultOffloadPlugin
from ._plugin import AuthorizationPlugin
from ._principals import FixedPrincipal, PrincipalSource
from ._prompt_estimate import prompt_estimate_plugins
from ._refusals import RefusalHook
from ._resources import FileOwner
from ._rights import LiveRights
from ._run_config import RunDefaultsPlugin
from ._toolset import YuxiToolset
from ._tree import AgentTree
from ._tree_runtime import TreeRuntimeFactory

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
) -> None:
    """What `build_app` refuses a tree for (names that exist, tool names that do not
    clash, retrieval settings); `yuxi access explain` checks the same before it decides."""
    _check_names(tree, registry, skills, mcp_servers)
    tools = default_registry if registry is None else registry
    check_tool_names(tree, tools, skills=skills is not None and bool(skills.all()))
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


def build_app(
    config: AgentConfig | str,
    principal: Principal | PrincipalSource,
    *,
    catalog: AgentCatalog | None = None,
    registry: ToolRegistry | None = None,
    skills: SkillCatalog | None = None,
    mcp_servers: McpServerRegistry | None = None,
    repository: AccessRepository | None = None,
    model: ModelChoice = None,
    workspace: str | Path | None = None,
    file_owner: FileOwner | None = None,
    app_name: str | None = None,
    plugins: Sequence[BasePlugin] = (),
    on_refusal: RefusalHook | None = None,
    cache_size: int = 256,
    settings: ToolSettings | None = None,
    output_schema: type[BaseModel] | None = None,
    tool_retriever: ToolRetriever | None = None,
    records: SqlStore | str | None = None,
    summarizer: BaseLlm | BaseEventsSummarizer | None = None,
) -> App:
    """Assembles the runs of `config` for `principal`: one fixed `Principal`, or a
    `PrincipalSource` (e.g. `AccessRepository.load_principal`) asked for the user of
    every run, so one App (and one Runner) serves many users, each with their own rights.

    Every model call and tool call is decided on the user's rights as of that call:
    with `repository`, read from the access database (the agent itself must be shared
    with the user); without it, asked of the source again (a fixed principal never
    changes). `model` overrides the config's model (tests pass a `ScriptedLlm`), for
    every agent or per agent name. The authorization plugin is registered first, so it
    runs before any other plugin can answer a call. `cache_size` bounds how many
    per-principal runtimes are kept. `settings` configures the tools that need
    server-side configuration (web search providers, say); tools it leaves unusable are
    not part of any run. `records` (a database URL or the services' `SqlStore`) adds a
    `LedgerPlugin` after the authorization plugin: every run is recorded with its lease,
    and the base tools keep their waiting points and marks there (marks re-check
    `repository`; presented files come from `workspace`). Without it the base tools
    answer `tool_not_available`. An MCP result reaches the model with one copy of its
    structured content (`McpResultPlugin`), not that and its JSON text again. A result
    larger than the agent's `offload_tool_results` threshold is saved as an artifact of
    the session and the model gets a preview (`ToolResultOffloadPlugin`, last of all).

    Multi-agent apps: `config` may name an agent of `catalog`, or be a config whose
    `sub_agents` / `agent_tools` name agents of it. The tree is checked first
    (`AgentTree`); each agent is then a share-scoped resource gated per user (the root
    too, in a tree of more than one agent), with its own runtime from the same principal.

    The configs are the deployer's: their `model` and `limits` bind every user, admin
    or not. A config a non-admin writes goes through `AgentConfig.from_user` first.

    The model-facing guards follow the authorization plugin (`adk_yuxi.guards`): repair
    of malformed calls always, per-step tool retrieval when the root config's
    `tool_retrieval` is set (BM25 over `registry` unless `tool_retriever` is given), and
    structured output of the root agent when `output_schema` (a pydantic model class, as
    ADK's `LlmAgent` takes it) is given.

    The root config's `context` policy sets ADK's event compaction (on by default):
    summaries are written by `summarizer` if given (a model or a ready summarizer; tests
    pass one), else by the policy's `summarizer_model`, else by the root agent's model.
    """
    mark_a2a_agent_unavailable()  # ADK's failing optional import: once, not every node
    tree = _tree(config, catalog)
    check_tree(tree, registry, skills, mcp_servers)
    know_tools(app_tool_names(tree.configs, registry or default_registry))
    factory = TreeRuntimeFactory.of(
        tree,
        registry=registry,
        skills=skills,
        mcp_servers=mcp_servers,
        workspace=workspace,
        file_owner=file_owner,
        settings=settings,
    )
    fixed = principal if isinstance(principal, Principal) else None
    source: PrincipalSource = FixedPrincipal(fixed) if fixed is not None else principal  # type: ignore[assignment]
    if repository is not None:
        rights = LiveRights(repository.current_principal, agent=tree.root)
    else:
        rights = LiveRights(source, agent=None)
    plugin = AuthorizationPlugin(
        factory,
        source,
        rights=rights,
        # The repository's own loader as the source already reads rights as of now.
        separate_rights=repository is not None and source != repository.load_principal,
        cache_size=cache_size,
        on_refusal=on_refusal,
    )
    if fixed is not None:
        plugin.cache.get(fixed)  # assembled now, so a broken config fails at build time
    toolset = YuxiToolset(plugin)
    agents: dict[str, LlmAgent] = {}
    agent_tools: dict[str, AgentTool] = {}
    for name, agent_config in tree.configs.items():  # an agent after those it names
        chosen = model.get(name) if isinstance(model, Mapping) else model
        resolved = _model(chosen, agent_config.model)
        agent = agents[name] = _agent(tree, name, resolved, toolset, agents, output_schema)
        if name in tree.agent_tool_targets():
            agent_tools[name] = AgentTool(agent)
    plugin.agents = agents
    plugin.agent_tools = agent_tools
    guards = guard_plugins(
        tree.config(tree.root),
        plugin,
        registry=registry,
        retriever=tool_retriever,
        output_schema=output_schema,
    )
    offload = ToolResultOffloadPlugin(plugin)
    ledger: list[BasePlugin] = []
    if records is not None:
        ledger.append(LedgerPlugin(records, repository=repository, workspace=workspace))
    policy = tree.config(tree.root).context
    if summarizer is None and policy.summarizer_model is not None:
        summarizer = resolve_model(policy.summarizer_model)
    root_model = agents[tree.root].model
    assert isinstance(root_model, BaseLlm)  # set from `_model` above
    compaction = compaction_config(policy, summarizer or root_model, agent_model=root_model)
    return App(
        name=app_name or tree.root,
        root_agent=agents[tree.root],
        # Last: the offload plugin answers with a new result, which ends ADK's chain.
        plugins=[
            plugin,
            *prompt_estimate_plugins(compaction),
            RunDefaultsPlugin(),
            McpResultPlugin(),
            *ledger,
            *guards,
            *plugins,
            offload,
        ],
        events_compaction_config=compaction,
    )
