"""Runtime assembly: from a user and an agent config to an ADK `App` whose model sees
only what it may use now, and whose every call is re-authorized.

Four things stay distinct: a tool that is registered (`adk_yuxi.tools`), executable in
this run (`resolve_runtime_tools`), visible to the model now (`compute_visibility`), and
a call authorized on its target (`AuthorizationPlugin`, `ResourceGuard`). An app built
from a `PrincipalSource` resolves the user of each run when it starts (`UserRuntimes`).
"""

from ._access import check_resource, runtime_plugin
from ._app import build_agent, build_app
from ._catalog import AgentCatalog, AgentConfigError, UnknownAgentError, load_agent_config
from ._config import ADMIN_ONLY_FIELDS, AgentConfig, Limits
from ._context import BASE_TOOL_IDS, RuntimeContext, prepare_runtime_context
from ._per_user import PerUserAuthorizationPlugin, PerUserToolset, UserRuntimes
from ._plugin import PLUGIN_NAME, AuthorizationPlugin, Refusal
from ._principals import LocalPrincipals, PrincipalSource
from ._resources import (
    DEFAULT_RESOURCE_ARGS,
    FileOwner,
    ResourceDenied,
    ResourceGuard,
    ResourceType,
)
from ._tools import DuplicateToolError, GatedToolset, RuntimeTools, resolve_runtime_tools
from ._tree import AgentTree, AgentTreeError
from ._visibility import SKILL_LOADER_TOOLS, Visibility, compute_visibility

__all__ = [
    "ADMIN_ONLY_FIELDS",
    "BASE_TOOL_IDS",
    "DEFAULT_RESOURCE_ARGS",
    "PLUGIN_NAME",
    "SKILL_LOADER_TOOLS",
    "AgentCatalog",
    "AgentConfig",
    "AgentConfigError",
    "AgentTree",
    "AgentTreeError",
    "AuthorizationPlugin",
    "DuplicateToolError",
    "FileOwner",
    "GatedToolset",
    "Limits",
    "LocalPrincipals",
    "PerUserAuthorizationPlugin",
    "PerUserToolset",
    "PrincipalSource",
    "Refusal",
    "ResourceDenied",
    "ResourceGuard",
    "ResourceType",
    "RuntimeContext",
    "RuntimeTools",
    "UnknownAgentError",
    "UserRuntimes",
    "Visibility",
    "build_agent",
    "build_app",
    "check_resource",
    "compute_visibility",
    "load_agent_config",
    "prepare_runtime_context",
    "resolve_runtime_tools",
    "runtime_plugin",
]
