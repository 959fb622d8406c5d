"""`build_app`: an agent's runs as an ADK `App` for Runner, `adk run` and `adk web`.

One path for every app: the agent carries one `YuxiToolset` and the app one
`AuthorizationPlugin`, which binds each run to the runtime of its principal. A fixed
`Principal` is a constant principal source (`FixedPrincipal`); its runtime is assembled
here, so a broken config fails at build time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin
from pydantic import BaseModel

from .._sql.store import SqlStore
from ..access import AccessRepository, Principal
from ..guards import ToolRetriever
from ..ledger import LedgerPlugin
from ..mcp import McpServerRegistry
from ..models import resolve_model
from ..skills import SkillCatalog
from ..tools import ToolRegistry, ToolSettings
from ._config import AgentConfig
from ._guards import guard_plugins
from ._plugin import AuthorizationPlugin
from ._principals import FixedPrincipal, PrincipalSource
from ._refusals import RefusalHook
from ._resources import FileOwner
from ._rights import LiveRights
from ._runtime import RuntimeFactory
from ._toolset import YuxiToolset

__all__ = ["build_app"]


def _model(model: BaseLlm | str | None, name: str | None) -> BaseLlm:
    if model is None or isinstance(model, str):
        return resolve_model(model if model is not None else name)
    return model


def build_app(
    config: AgentConfig,
    principal: Principal | PrincipalSource,
    *,
    registry: ToolRegistry | None = None,
    skills: SkillCatalog | None = None,
    mcp_servers: McpServerRegistry | None = None,
    repository: AccessRepository | None = None,
    model: BaseLlm | str | None = None,
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
) -> App:
    """Assembles the runs of `config` for `principal`: one fixed `Principal`, or a
    `PrincipalSource` (e.g. `AccessRepository.load_principal`) asked for the user of
    every run, so one App (and one Runner) serves many users, each with their own rights.

    Every model call and tool call is decided on the user's rights as of that call:
    with `repository`, read from the access database (the agent itself must be shared
    with the user); without it, asked of the source again (a fixed principal never
    changes). `model` overrides the config's model (tests pass a `ScriptedLlm`). The
    authorization plugin is registered first, so it runs before any other plugin can
    answer a call. `cache_size` bounds how many per-principal runtimes are kept.
    `settings` configures the tools that need server-side configuration (web search
    providers, say); tools it leaves unusable are not part of any run. `records` (a
    database URL or the services' `SqlStore`) adds a `LedgerPlugin` after the
    authorization plugin: every run is recorded with its lease, and the base tools keep
    their waiting points and marks there (marks re-check `repository`; presented files
    come from `workspace`). Without it the base tools answer `tool_not_available`.

    The agent (and so its model) is shared by every user of a source-backed app: the
    config's `model` is used as given there, while for a fixed non-admin principal it
    is reset like the other admin-only fields (limits), which are reset per principal.

    The model-facing guards follow the authorization plugin (`adk_yuxi.guards`): repair
    of malformed calls always, per-step tool retrieval when `config.tool_retrieval` is
    set (BM25 over `registry` unless `tool_retriever` is given), and structured output
    when `output_schema` (a pydantic model class, as ADK's `LlmAgent` takes it) is given.
    """
    factory = RuntimeFactory(
        config,
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
        rights = LiveRights(repository.current_principal, agent=config.name)
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
    model_name = config.model
    if fixed is not None:
        model_name = plugin.cache.get(fixed).context.config.model
    agent = LlmAgent(
        name=config.name,
        model=_model(model, model_name),
        description=config.description,
        instruction=config.instruction,
        tools=[YuxiToolset(plugin)],
        output_schema=output_schema,
    )
    guards = guard_plugins(
        config,
        plugin,
        registry=registry,
        retriever=tool_retriever,
        structured=output_schema is not None,
    )
    ledger: list[BasePlugin] = []
    if records is not None:
        ledger.append(LedgerPlugin(records, repository=repository, workspace=workspace))
    return App(
        name=app_name or config.name,
        root_agent=agent,
        plugins=[plugin, *ledger, *guards, *plugins],
    )
