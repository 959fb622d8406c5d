"""`build_app`: one user's run of one agent, as an ADK `App` for Runner, `adk run` and
`adk web`.

The agent carries a single `GatedToolset` and the app a single `AuthorizationPlugin`,
both built on the same `RuntimeContext` and `RuntimeTools`, so declarations and checks
come from one source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin

from ..access import AccessRepository, Principal
from ..mcp import McpServerRegistry
from ..models import resolve_model
from ..skills import SkillCatalog
from ..tools import ToolRegistry
from ._config import AgentConfig
from ._context import RuntimeContext, prepare_runtime_context
from ._plugin import AuthorizationPlugin, Refusal
from ._resources import FileOwner, ResourceGuard
from ._tools import GatedToolset, resolve_runtime_tools

__all__ = ["build_agent", "build_app"]


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
    if model is None or isinstance(model, str):
        model = resolve_model(model if model is not None else config.model)
    gate = GatedToolset(context, resolve_runtime_tools(context))
    agent = LlmAgent(
        name=config.name,
        model=model,
        description=config.description,
        instruction=config.instruction,
        tools=[gate],
    )
    guard = ResourceGuard(context, workspace=workspace, file_owner=file_owner)
    plugin = AuthorizationPlugin(context, gate, guard, repository=repository, on_refusal=on_refusal)
    return agent, plugin


def build_app(
    config: AgentConfig,
    principal: Principal,
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
) -> App:
    """Assembles the run of `config` for `principal`.

    `repository` makes revocation live (checked at every model and tool call); without
    it only the user id of the run is checked. `model` overrides the config's model
    (tests pass a `ScriptedLlm`). The authorization plugin is registered first, so it
    runs before any other plugin can answer a call.
    """
    context = prepare_runtime_context(
        principal, config, registry=registry, skills=skills, mcp_servers=mcp_servers
    )
    agent, plugin = build_agent(
        context,
        model=model,
        repository=repository,
        workspace=workspace,
        file_owner=file_owner,
        on_refusal=on_refusal,
    )
    return App(name=app_name or config.name, root_agent=agent, plugins=[plugin, *plugins])
