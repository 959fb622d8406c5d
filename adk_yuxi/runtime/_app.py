"""`build_app`: an agent's runs as an ADK `App` for Runner, `adk run` and `adk web`.

Given a principal, the app serves that one user: the agent carries a single
`GatedToolset` and the app a single `AuthorizationPlugin`, both built on the same
`RuntimeContext` and `RuntimeTools`, so declarations and checks come from one source.
Given a `PrincipalSource`, the app serves every user the source admits: the same pair
is assembled per principal and bound to each run when it starts (`_per_user`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin

from ..access import AccessRepository, Principal
from ..mcp import McpServerRegistry
from ..models import resolve_model
from ..skills import SkillCatalog
from ..tools import ToolRegistry, ToolSettings
from ._config import AgentConfig
from ._context import RuntimeContext, prepare_runtime_context
from ._per_user import PerUserAuthorizationPlugin, PerUserToolset, UserRuntimes
from ._plugin import AuthorizationPlugin, Refusal
from ._principals import PrincipalSource
from ._resources import FileOwner, ResourceGuard
from ._tools import GatedToolset, resolve_runtime_tools

__all__ = ["build_agent", "build_app"]


def _runtime(
    context: RuntimeContext,
    *,
    repository: AccessRepository | None,
    workspace: str | Path | None,
    file_owner: FileOwner | None,
    on_refusal: Callable[[Refusal], None] | None,
) -> AuthorizationPlugin:
    """The gated toolset, guard and checks of one context, held by one plugin object."""
    gate = GatedToolset(context, resolve_runtime_tools(context))
    guard = ResourceGuard(context, workspace=workspace, file_owner=file_owner)
    return AuthorizationPlugin(context, gate, guard, repository=repository, on_refusal=on_refusal)


def _model(model: BaseLlm | str | None, config: AgentConfig) -> BaseLlm:
    if model is None or isinstance(model, str):
        return resolve_model(model if model is not None else config.model)
    return model


def build_agent(
    context: RuntimeContext,
    *,
    model: BaseLlm | str | None = None,
    repository: AccessRepository | None = None,
    workspace: str | Path | None = None,
    file_owner: FileOwner | None = None,
    on_refusal: Callable[[Refusal], None] | None = None,
) -> tuple[LlmAgent, AuthorizationPlugin]:
    """The agent and the plugin that must accompany it; one without the other is unsafe,
    which is why `build_app` is the entry point most callers want."""
    config = context.config
    plugin = _runtime(
        context,
        repository=repository,
        workspace=workspace,
        file_owner=file_owner,
        on_refusal=on_refusal,
    )
    agent = LlmAgent(
        name=config.name,
        model=_model(model, config),
        description=config.description,
        instruction=config.instruction,
        tools=[plugin.gate],
    )
    return agent, plugin


def _assemble(
    principal: Principal,
    *,
    config: AgentConfig,
    registry: ToolRegistry | None,
    skills: SkillCatalog | None,
    mcp_servers: McpServerRegistry | None,
    settings: ToolSettings | None,
    **runtime: Any,
) -> AuthorizationPlugin:
    context = prepare_runtime_context(
        principal,
        config,
        registry=registry,
        skills=skills,
        mcp_servers=mcp_servers,
        settings=settings,
    )
    return _runtime(context, **runtime)


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
    on_refusal: Callable[[Refusal], None] | None = None,
    cache_size: int = 256,
    settings: ToolSettings | None = None,
) -> App:
    """Assembles the runs of `config` for `principal`: one fixed `Principal`, or a
    `PrincipalSource` (e.g. `AccessRepository.load_principal`) asked for the user of
    every run, so one App (and one Runner) serves many users, each with their own rights.

    `repository` makes revocation live (checked at every model and tool call); without
    it only the user id of the run is checked. `model` overrides the config's model
    (tests pass a `ScriptedLlm`). The authorization plugin is registered first, so it
    runs before any other plugin can answer a call. `cache_size` bounds how many
    per-principal runtimes a source-backed app keeps assembled. `settings` configures
    the tools that need server-side configuration (web search providers, say); tools it
    leaves unusable are not part of any run.

    With a source, the agent (and so its model) is shared by every user: the config's
    `model` is used as given, while the other admin-only fields (limits) are still reset
    per non-admin principal, as with a fixed principal.
    """
    runtime: dict[str, Any] = {
        "repository": repository,
        "workspace": workspace,
        "file_owner": file_owner,
        "on_refusal": on_refusal,
    }
    name = app_name or config.name
    if isinstance(principal, Principal):
        context = prepare_runtime_context(
            principal,
            config,
            registry=registry,
            skills=skills,
            mcp_servers=mcp_servers,
            settings=settings,
        )
        agent, plugin = build_agent(context, model=model, **runtime)
        return App(name=name, root_agent=agent, plugins=[plugin, *plugins])
    assemble = partial(
        _assemble,
        config=config,
        registry=registry,
        skills=skills,
        mcp_servers=mcp_servers,
        settings=settings,
        **runtime,
    )
    runtimes = UserRuntimes(principal, assemble, cache_size=cache_size)
    agent = LlmAgent(
        name=config.name,
        model=_model(model, config),
        description=config.description,
        instruction=config.instruction,
        tools=[PerUserToolset(runtimes)],
    )
    per_user = PerUserAuthorizationPlugin(runtimes, on_refusal=on_refusal)
    return App(name=name, root_agent=agent, plugins=[per_user, *plugins])
